// swift-tools-version:6.0
// Benchmarks live in their own package so that nothing they need enters the main build.
import PackageDescription

let package = Package(
    name: "CipherDBBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "CipherDB", path: "../.."),
    ],
    targets: [
        // The raw C API, for the wrapper-overhead baseline.
        .systemLibrary(name: "CSQLCipherRaw", pkgConfig: "sqlcipher"),
        // The headline baseline: every workload written in C on the same SQLCipher, copying text
        // and blobs where Swift makes String and Data.
        .target(name: "CBaseline", dependencies: ["CSQLCipherRaw"]),
        // CipherDB against the C baseline: inserts, scans, lookups, records, the query interface,
        // a pool's concurrent readers, observation.
        .executableTarget(
            name: "CoreBenchmark",
            dependencies: [
                .product(name: "CipherDB", package: "CipherDB"),
                .product(name: "CipherCrypto", package: "CipherDB"),
                "CSQLCipherRaw",
                "CBaseline",
            ]
        ),
        // DatabasePool: opening with a passphrase (derive once vs per connection), pool vs queue reads.
        .executableTarget(
            name: "PoolBenchmark",
            dependencies: [
                .product(name: "CipherDB", package: "CipherDB"),
                .product(name: "CipherCrypto", package: "CipherDB"),
            ]
        ),
    ]
)

// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "CipherDB",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "CipherDB", targets: ["CipherDB"]),
        .library(name: "CipherKeystore", targets: ["CipherKeystore"]),
        .library(name: "CipherCrypto", targets: ["CipherCrypto"]),
        .library(name: "CipherSnapshots", targets: ["CipherSnapshots"]),
        .executable(name: "cipherdb", targets: ["cipherdb"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // `swift package generate-documentation` (DocC catalogs under Sources/*/Documentation.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // System libraries. SQLCipher replaces SQLite: the system libsqlite3 must never be linked too.
        .systemLibrary(
            name: "CSQLCipher",
            pkgConfig: "sqlcipher",
            providers: [.apt(["libsqlcipher-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // Line editing and history for the interactive shell (readline-compatible interface).
        .systemLibrary(
            name: "CLineEdit",
            pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]
        ),

        // libcurl for the keystore's Transit slots (a C shim: libcurl's options are variadic; it
        // loads libcurl on the first request, so other commands do not pay for its 30 libraries).
        // Foundation's URLSession on Linux cannot trust a private CA (VAULT_CACERT): corelibs reads
        // its CA override only on Android.
        .target(name: "CCurlShim", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("ssl")]),

        // The PKCS#11 header (p11-kit's), and a C shim over PKCS#11 modules loaded at run time
        // (dlopen) for the keystore's PKCS#11 slots.
        .systemLibrary(name: "CP11Kit", pkgConfig: "p11-kit-1", providers: [.apt(["libp11-kit-dev"])]),
        .target(name: "CPKCS11Shim", dependencies: ["CP11Kit"], linkerSettings: [.linkedLibrary("dl")]),
        // The process's argv as glibc hands it to .init_array functions: Swift's CommandLine reads
        // /proc/self/cmdline on Linux and has no arguments where /proc is not mounted.
        .target(name: "CProcessArguments"),
        // A child process tied to its parent (a parent-death signal): restic must not outlive a snapshot.
        .target(name: "CChildProcess"),

        // The only Swift code that touches OpenSSL.
        .target(name: "CipherCrypto", dependencies: ["COpenSSL"]),
        // The FMDB-style database API over SQLCipher.
        .target(name: "CipherDB", dependencies: ["CSQLCipher", "CipherCrypto"]),
        // Key management for CipherDB databases.
        .target(name: "CipherKeystore", dependencies: ["CipherDB", "CipherCrypto", "CCurlShim", "CPKCS11Shim"]),
        // Encrypted snapshots to S3-compatible storage through restic (a subprocess); a module of
        // its own so that the database core never depends on it.
        .target(name: "CipherSnapshots", dependencies: ["CipherDB", "CipherCrypto", "CChildProcess"]),
        // The command line tool's commands, as a testable library.
        .target(
            name: "CipherCLI",
            dependencies: [
                "CipherDB", "CipherKeystore", "CipherCrypto", "CipherSnapshots", "CSQLCipher", "CLineEdit", "CProcessArguments",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "cipherdb", dependencies: ["CipherCLI"]),
        // Child process for the keystore crash-safety tests (SIGKILLed mid-rotation).
        .executableTarget(name: "keystore-crash-driver", dependencies: ["CipherKeystore", "CipherDB"], path: "tools/keystore-crash-driver"),

        // Helpers shared by the test targets (a real full disk, ...).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "CipherCryptoTests", dependencies: ["CipherCrypto"]),
        .testTarget(name: "CipherDBTests", dependencies: ["CipherDB", "CSQLCipher", "TestSupport"]),
        .testTarget(
            name: "CipherKeystoreTests",
            dependencies: ["CipherKeystore", "CipherDB", "CipherCrypto", "TestSupport"],
            exclude: ["Fixtures"]  // read from the source tree by the tests, never bundled
        ),
        .testTarget(name: "CipherSnapshotsTests", dependencies: ["CipherSnapshots", "CipherDB", "CipherCrypto", "TestSupport"]),
        .testTarget(
            name: "CLITests",
            dependencies: ["CipherCLI", "CipherKeystore", "CipherDB", "TestSupport"],
            exclude: ["Fixtures"]  // the recorded help screens, read from the source tree by HelpSnapshotTests
        ),
    ]
)

// swift-tools-version:6.0
// libFuzzer targets for the parsers that read untrusted bytes. Own package, so nothing here enters
// the main build; tools/fuzz/run.sh (`make fuzz`) builds it with -sanitize=fuzzer,address. See README.md.
import PackageDescription

let package = Package(
    name: "CipherDBFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "CipherDB", path: "../.."),
    ],
    targets: [
        // The executables' entry point: calls LLVMFuzzerRunDriver (why: README.md, "How the fuzzer is linked").
        .target(name: "FuzzerEntry"),
        // A scratch file reused for every input (the keystore and secret-file entry points take a path).
        .target(name: "FuzzSupport"),
        // Keystore.inspect(at:) and Keystore.open(at:credential:) on the input, as is and with its
        // length fields and checksum made consistent (so the structure parser behind the checksum runs).
        .executableTarget(
            name: "FuzzKeystoreFile",
            dependencies: ["FuzzerEntry", "FuzzSupport", .product(name: "CipherKeystore", package: "CipherDB"),
                           .product(name: "CipherCrypto", package: "CipherDB")]
        ),
        // KeyExportBundle(bytes:) and KeyExportBundle(armored:).
        .executableTarget(
            name: "FuzzKeyExportBundle",
            dependencies: ["FuzzerEntry", .product(name: "CipherKeystore", package: "CipherDB")]
        ),
        // SecretSource: .file, .fileDescriptor, .environment, readKeyFile; SecretBytes.hexDecoded.
        .executableTarget(
            name: "FuzzSecretSource",
            dependencies: ["FuzzerEntry", "FuzzSupport", .product(name: "CipherKeystore", package: "CipherDB"),
                           .product(name: "CipherCrypto", package: "CipherDB")]
        ),
        // Writes the seed corpus with the library (a normal executable: build it without the
        // fuzzer flags, see README.md).
        .executableTarget(
            name: "MakeSeeds",
            dependencies: ["FuzzSupport", .product(name: "CipherKeystore", package: "CipherDB"),
                           .product(name: "CipherCrypto", package: "CipherDB"), .product(name: "CipherDB", package: "CipherDB")]
        ),
    ]
)

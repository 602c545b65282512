// swift-tools-version:6.0
// The memory floor of `.import`'s peak-memory goal (docs/performance.md, "Not done yet"): what a
// process holds at its prompt when it is Swift alone, Swift with Foundation, and Swift with
// Foundation and ArgumentParser opening and keying a SQLCipher file. `run.sh` builds and measures.
import PackageDescription

let package = Package(
    name: "MemoryFloor",
    dependencies: [.package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")],
    targets: [
        .systemLibrary(name: "CSQLCipherFloor", pkgConfig: "sqlcipher"),
        .executableTarget(name: "SwiftOnly"),
        .executableTarget(name: "SwiftFoundation"),
        .executableTarget(
            name: "SwiftTool",
            dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser"), "CSQLCipherFloor"]),
    ]
)

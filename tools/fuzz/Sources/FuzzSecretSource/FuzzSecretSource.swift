// libFuzzer target: secret reading in SecretSource, with the input as the contents of a secret file
// (.file, readKeyFile), of an inherited descriptor (.fileDescriptor) and, up to its first NUL, of an
// environment variable (.environment); and SecretBytes.hexDecoded, which readKeyFile uses. Only a
// crash or trap is a finding; every thrown error is fine.
import CipherCrypto
import CipherKeystore
import FuzzSupport
import FuzzerEntry

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private let scratch = ScratchFile(name: "secret")
private let descriptor = scratch.openForReading()

/// An environment variable whose value is a buffer owned here (putenv), refilled for each input:
/// setenv would keep every value ever set and grow without bound over millions of inputs.
private final class EnvironmentVariable: @unchecked Sendable {
    static let name = "CIPHERDB_FUZZ_SECRET"
    static let capacity = 2 * SecretSource.maximumLength
    private let prefix = Array("\(name)=".utf8)
    private let buffer: UnsafeMutablePointer<CChar>

    init() {
        buffer = .allocate(capacity: prefix.count + Self.capacity + 1)
        buffer.initialize(repeating: 0, count: prefix.count + Self.capacity + 1)
        for (index, byte) in prefix.enumerated() { buffer[index] = CChar(bitPattern: byte) }
        guard putenv(buffer) == 0 else { fatalError("putenv failed") }
    }

    /// Sets the value to `bytes` (cut at `capacity`; C stops it at the first NUL anyway).
    func set(_ bytes: UnsafeBufferPointer<UInt8>) {
        let count = min(bytes.count, Self.capacity)
        for index in 0..<count { buffer[prefix.count + index] = CChar(bitPattern: bytes[index]) }
        buffer[prefix.count + count] = 0
    }
}

private let environment = EnvironmentVariable()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    scratch.write(UnsafeRawBufferPointer(input))
    _ = try? SecretSource.file(scratch.path).read()
    _ = try? SecretSource.readKeyFile(scratch.path)
    if lseek(descriptor, 0, SEEK_SET) == 0 {
        _ = try? SecretSource.fileDescriptor(descriptor).read()
    }
    environment.set(input)
    _ = try? SecretSource.environment(EnvironmentVariable.name).read()
    _ = try? SecretBytes(copying: input).hexDecoded()
    return 0
}

/// SwiftPM links `main` to this module's entry point (`FuzzSecretSource_main`), not to libFuzzer's `main`.
@main
enum Main {
    static func main() {
        cipherdb_fuzzer_run(CommandLine.argc, CommandLine.unsafeArgv)
    }
}

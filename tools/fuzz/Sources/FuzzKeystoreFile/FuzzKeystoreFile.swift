// libFuzzer target: the keystore file parser (KeystoreFile.parse, the slot decoder and, for files
// that unlock, the body decoder) through its public entry points Keystore.inspect(at:) and
// Keystore.open(at:credential:). Only a crash or trap is a finding; every thrown error is fine.
import CipherCrypto
import CipherKeystore
import FuzzSupport
import FuzzerEntry

private let scratch = ScratchFile(name: "keystore")
/// Kept as the SecretBytes itself: a global KeystoreCredential holds the reference with the enum
/// case in its spare bits, which LeakSanitizer cannot follow (it reported the global as a leak).
private let seedKey = SecretBytes(copying: seedKeyFileSecret)

/// Offsets in the v1 header (see KeystoreFile.swift): the file length, its complement, and the
/// trailing SHA-256 of everything before it.
private let lengthOffset = 12
private let complementOffset = 20
private let checksumLength = 32
private let fixedHeaderLength = 60

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    check(input)
    // Almost every mutation breaks the length fields or the checksum, which the parser checks
    // first; so each input is also tried with both made consistent, to reach the structure checks,
    // the slot decoder and the KDF limits behind them.
    if let consistent = withConsistentLengthAndChecksum(input), consistent != input {
        check(consistent)
    }
    return 0
}

private func check(_ bytes: [UInt8]) {
    scratch.write(bytes)
    _ = try? Keystore.inspect(at: scratch.path)
    // Only key-file slots accept this credential, so no KDF runs whatever the slots say.
    if let store = try? Keystore.open(at: scratch.path, credential: .keyFile(seedKey)) {
        _ = store.slots
        _ = try? store.list()
    }
}

private func withConsistentLengthAndChecksum(_ input: [UInt8]) -> [UInt8]? {
    guard input.count >= fixedHeaderLength + checksumLength else { return nil }
    var bytes = input
    let length = UInt64(bytes.count)
    for index in 0..<8 {
        let shift = UInt64(56 - 8 * index)
        bytes[lengthOffset + index] = UInt8(truncatingIfNeeded: length >> shift)
        bytes[complementOffset + index] = UInt8(truncatingIfNeeded: ~length >> shift)
    }
    guard let digest = try? SHA256.hash(bytes[..<(bytes.count - checksumLength)]) else { return nil }
    bytes.replaceSubrange((bytes.count - checksumLength)..., with: digest)
    return bytes
}

/// SwiftPM links `main` to this module's entry point (`FuzzKeystoreFile_main`), not to libFuzzer's `main`.
@main
enum Main {
    static func main() {
        cipherdb_fuzzer_run(CommandLine.argc, CommandLine.unsafeArgv)
    }
}

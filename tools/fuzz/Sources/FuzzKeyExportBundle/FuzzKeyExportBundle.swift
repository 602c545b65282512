// libFuzzer target: the key export bundle parser, binary (KeyExportBundle(bytes:)) and ASCII armor
// (KeyExportBundle(armored:), what `cipherdb keys import` reads). Only a crash or trap is a
// finding; every thrown error is fine. No import is attempted: that is scrypt and AES-GCM, not parsing.
import CipherKeystore
import FuzzerEntry

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    if let bundle = try? KeyExportBundle(bytes: input) {
        _ = try? KeyExportBundle(armored: bundle.armored)
    }
    if let bundle = try? KeyExportBundle(armored: String(decoding: input, as: UTF8.self)) {
        _ = try? KeyExportBundle(bytes: bundle.bytes)
    }
    return 0
}

/// SwiftPM links `main` to this module's entry point (`FuzzKeyExportBundle_main`), not to libFuzzer's `main`.
@main
enum Main {
    static func main() {
        cipherdb_fuzzer_run(CommandLine.argc, CommandLine.unsafeArgv)
    }
}

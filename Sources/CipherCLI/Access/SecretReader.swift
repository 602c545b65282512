import CipherCrypto
import CipherDB
import CipherKeystore

/// The command line's flags over the library's one secret reader (``SecretSource``): each read
/// names the flag it came from, and each failure gets its exit status.
enum SecretReader {
    /// Reads `source` for `flag` (e.g. `--passphrase-env DB_PASS`).
    static func read(_ source: SecretSource, flag: String, confirm: Bool = false) throws(CLIError) -> SecretBytes {
        do {
            return try source.read(confirm: confirm)
        } catch {
            throw CLIError.secretSource(error, flag: flag)
        }
    }

    /// A raw key file: exactly 32 bytes, or 64 hexadecimal characters (one trailing newline allowed).
    static func rawKey(fromFile path: String, flag: String) throws(CLIError) -> SecretBytes {
        do {
            return try SecretSource.readKeyFile(path)
        } catch .invalidKeyMaterial(let reason) {
            throw CLIError.usage(
                "\(flag) \(path): \(reason)",
                hint: "make one with `head -c 32 /dev/urandom > key.bin` or `openssl rand -hex 32 > key.hex`")
        } catch {
            throw CLIError.keystoreSecret(error, flag: flag)
        }
    }
}

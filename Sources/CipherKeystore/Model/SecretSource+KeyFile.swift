import CipherCrypto
import CipherDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SecretSource {
    /// Reads a key file: 32 raw bytes, or 64 hexadecimal characters and an optional newline.
    public static func readKeyFile(_ path: String) throws(KeystoreError) -> SecretBytes {
        let untrimmed: SecretBytes
        do { untrimmed = try readPrivateFile(path, source: SecretSource.file(path).description) } catch { throw .secretSource(error) }
        // 32 raw bytes are the key as they are: a random key ends in a newline byte once in 256
        // times, and trimming it would make the file unusable.
        if untrimmed.count == KeystoreCredential.keyFileLength { return untrimmed }
        let contents = trimmingNewline(untrimmed)
        guard contents.count > 0 else { throw .invalidKeyMaterial("the key file is empty") }
        if contents.count == KeystoreCredential.keyFileLength { return contents }
        guard contents.count == KeystoreCredential.keyFileLength * 2, let decoded = try? contents.hexDecoded() else {
            throw .invalidKeyMaterial("a key file holds 32 bytes or 64 hexadecimal characters, this one holds \(untrimmed.count) bytes")
        }
        return decoded
    }

    /// Writes a key file as 64 hexadecimal characters and a newline, mode 0600, refusing to overwrite.
    ///
    /// The file appears whole or not at all (CipherDB's `PendingFile`): a crash, a full disk or a file-size
    /// limit never leaves a partial key file, and a keystore slot made for the key never outlives
    /// the file on disk. A file whose folder cannot be flushed is removed again and the call throws
    /// ``KeystoreError/io(operation:path:errno:)``.
    public static func writeKeyFile(_ secret: SecretBytes, to path: String) throws(KeystoreError) {
        guard secret.count == KeystoreCredential.keyFileLength else { throw .invalidKeyMaterial("a key file holds 32 bytes") }
        var existing = stat()
        if PathBytes.lstat(path, &existing) == 0 { throw .alreadyExists(path: path) }
        let text = secret.hexEncoded().appending(SecretBytes(copying: [0x0A]))
        do throws(DatabaseError) {
            let pending = try PendingFile(beside: path)
            defer { pending.discard() }
            try text.withUnsafeBytes { bytes in Result { () throws(DatabaseError) in try pending.write(bytes) } }.get()
            try pending.publish(replacing: false)
        } catch  where error.kind == .notDurable {
            // Published by this call, but a power loss could take it back: a slot made for it
            // could outlive it. Removed, so nothing was made.
            PathBytes.unlink(path)
            throw KeystoreError.notDurable(path: path).unflushedAsIOError
        } catch {
            if PathBytes.lstat(path, &existing) == 0 { throw .alreadyExists(path: path) }
            throw .database(error)
        }
    }
}

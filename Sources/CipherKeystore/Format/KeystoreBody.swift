import CipherCrypto
import CipherDB
import Foundation

/// The state of one key version.

struct KeystoreBody {
    static let version: UInt16 = 1
    var entries: [KeyEntry] = []

    func entryIndex(_ id: String) throws(KeystoreError) -> Int {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { throw .keyNotFound(id: id) }
        return index
    }

    /// Serializes into a secret buffer: key bytes never pass through a Swift array.
    func encode() throws(KeystoreError) -> SecretBytes {
        let sorted = entries.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
        var size = 2 + 4
        for entry in sorted {
            try entry.validate()
            size += 2 + entry.id.utf8.count + 1 + 16 + 4
            for version in entry.versions { size += 4 + 1 + 1 + 8 + 1 + (version.key?.count ?? 0) }
        }
        do {
            return try SecretBytes(count: size) { buffer in
                var writer = SecretWriter(buffer)
                try writer.u16(Self.version)
                try writer.u32(UInt32(sorted.count))
                for entry in sorted {
                    try writer.u16(UInt16(entry.id.utf8.count))
                    try writer.bytes(Array(entry.id.utf8))
                    try writer.u8((entry.exportable ? 1 : 0) | (entry.deletionAllowed ? 2 : 0))
                    try writer.u32(UInt32(entry.primary))
                    try writer.u32(UInt32(entry.pending ?? 0))
                    try writer.u32(UInt32(entry.minimumDecryption))
                    try writer.u32(UInt32(entry.pageSize))
                    try writer.u32(UInt32(entry.versions.count))
                    for version in entry.versions {
                        try writer.u32(UInt32(version.number))
                        try writer.u8(version.state == .enabled ? 1 : version.state == .disabled ? 2 : 3)
                        try writer.u8(version.origin == .generated ? 1 : 2)
                        try writer.u64(UInt64(bitPattern: version.created))
                        if let key = version.key {
                            try writer.u8(UInt8(key.count))
                            try key.withUnsafeBytes { (bytes) throws(SecretWriter.Overflow) in try writer.raw(bytes) }
                        } else {
                            try writer.u8(0)
                        }
                    }
                }
                guard writer.offset == size else { throw SecretWriter.Overflow() }
            }
        } catch {
            throw .malformed("body size mismatch while encoding")
        }
    }

    /// Parses a decrypted body; any inconsistency is ``KeystoreError/malformed(_:)``.
    static func decode(_ plaintext: SecretBytes) throws(KeystoreError) -> KeystoreBody {
        try plaintext.withUnsafeBytes { (raw) throws(KeystoreError) -> KeystoreBody in
            var reader = ByteReader(raw)
            do {
                guard try reader.u16() == version else { throw KeystoreError.malformed("unknown body version") }
                let count = Int(try reader.u32())
                guard count <= raw.count else { throw KeystoreError.malformed("entry count") }
                var body = KeystoreBody()
                for _ in 0..<count {
                    let idLength = Int(try reader.u16())
                    guard let id = String(validating: try reader.take(idLength), as: UTF8.self) else {
                        throw KeystoreError.malformed("an id is not UTF-8")
                    }
                    let flags = try reader.u8()
                    guard flags & ~3 == 0 else { throw KeystoreError.malformed("unknown entry flags") }
                    let primary = Int(try reader.u32())
                    let pending = Int(try reader.u32())
                    let minimum = Int(try reader.u32())
                    let pageSize = Int(try reader.u32())
                    let versionCount = Int(try reader.u32())
                    guard versionCount >= 1, versionCount <= reader.remaining else { throw KeystoreError.malformed("version count") }
                    var versions: [KeyVersion] = []
                    for _ in 0..<versionCount {
                        let number = Int(try reader.u32())
                        let rawState = try reader.u8()
                        let rawOrigin = try reader.u8()
                        let created = Int64(bitPattern: try reader.u64())
                        let keyLength = Int(try reader.u8())
                        guard
                            let state: KeyVersionState = rawState == 1
                                ? .enabled : rawState == 2 ? .disabled : rawState == 3 ? .destroyed : nil,
                            let origin: KeyOrigin = rawOrigin == 1 ? .generated : rawOrigin == 2 ? .imported : nil
                        else {
                            throw KeystoreError.malformed("unknown version state or origin")
                        }
                        guard keyLength == 0 || keyLength == 32 else { throw KeystoreError.malformed("key length") }
                        let key = keyLength == 0 ? nil : try reader.secret(keyLength)
                        versions.append(KeyVersion(number: number, state: state, origin: origin, created: created, key: key))
                    }
                    let entry = KeyEntry(
                        id: id, exportable: flags & 1 != 0, deletionAllowed: flags & 2 != 0,
                        primary: primary, pending: pending == 0 ? nil : pending,
                        minimumDecryption: minimum, pageSize: pageSize, versions: versions)
                    try entry.validate()
                    guard body.entries.last.map({ $0.id.utf8.lexicographicallyPrecedes(id.utf8) }) ?? true else {
                        throw KeystoreError.malformed("entries out of order or duplicated")
                    }
                    body.entries.append(entry)
                }
                guard reader.remaining == 0 else { throw KeystoreError.malformed("bytes after the last entry") }
                return body
            } catch let error as KeystoreError {
                throw error
            } catch {
                throw KeystoreError.malformed("the body is cut short")
            }
        }
    }
}

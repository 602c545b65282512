/// Reads the one regular file of a tar stream as it arrives, in chunks of any size: what
/// `restic dump ID /` writes for a snapshot made by `cipherdb snapshot create`, which holds a
/// single file. The file's bytes go to a sink; its name and size come from its header.
///
/// The headers read are those Go's `archive/tar` writes (restic's): ustar, with PAX extended
/// headers (`x`, for a long name or a size of 8 GiB or more) and global ones (`g`, skipped),
/// GNU long names (`L`) and base-256 sizes, and directory entries (skipped). Anything else, a
/// second regular file, or a header that does not add up is ``Failure``. Memory stays bounded:
/// an extended header above 64 KiB is refused.
struct TarFileReader {
    /// Why a stream is not one file.
    enum Failure: Error, Equatable {
        /// A header's checksum, size or type is wrong, or the stream ended inside an entry.
        case malformed(String)
        /// A second regular file, a link or a device: not a snapshot's single file.
        case notOneFile(String)
    }

    /// The file found: its name (without a leading `/`) and size, once its header was read.
    private(set) var file: (name: String, size: Int)?

    private enum State: Equatable {
        case header
        case extendedHeader(kind: UInt8)
        case skipping, fileContent, afterFile, end
    }
    private var state = State.header
    private var block: [UInt8] = []
    private var remainingInEntry = 0
    private var padding = 0
    private var extended: [UInt8] = []
    private var pendingName: String?
    private var pendingSize: Int?

    private static let blockSize = 512
    private static let maximumExtendedHeader = 64 * 1024

    /// Takes the next `chunk` of the stream, handing the file's bytes to `sink` with the file's
    /// size.
    ///
    /// - Returns: `false` when `sink` returned `false` (asked to stop).
    mutating func consume(
        _ chunk: UnsafeRawBufferPointer, sink: (_ bytes: UnsafeRawBufferPointer, _ fileSize: Int) -> Bool
    ) throws(Failure) -> Bool {
        var offset = 0
        while offset < chunk.count {
            switch state {
            case .fileContent:
                let count = min(remainingInEntry, chunk.count - offset)
                let slice = UnsafeRawBufferPointer(rebasing: chunk[offset..<offset + count])
                offset += count
                remainingInEntry -= count
                if remainingInEntry == 0 { state = .afterFile }
                guard sink(slice, file?.size ?? 0) else { return false }
            case .skipping,
                .afterFile where remainingInEntry > 0 || padding > 0:
                let skip = min(remainingInEntry + padding, chunk.count - offset)
                offset += skip
                let fromEntry = min(skip, remainingInEntry)
                remainingInEntry -= fromEntry
                padding -= skip - fromEntry
                if remainingInEntry == 0 && padding == 0 && state == .skipping { state = .header }
            case .extendedHeader(let kind):
                let count = min(remainingInEntry, chunk.count - offset)
                extended.append(contentsOf: chunk[offset..<offset + count])
                offset += count
                remainingInEntry -= count
                if remainingInEntry == 0 {
                    try applyExtended(kind)
                    state = padding > 0 ? .skipping : .header
                }
            case .header, .afterFile:
                let count = min(Self.blockSize - block.count, chunk.count - offset)
                block.append(contentsOf: chunk[offset..<offset + count])
                offset += count
                if block.count == Self.blockSize {
                    let header = block
                    block.removeAll(keepingCapacity: true)
                    try readHeader(header)
                }
            case .end:
                // Only zero blocks may follow the end marker; restic writes them and nothing else.
                guard chunk[offset...].allSatisfy({ $0 == 0 }) else { throw .malformed("data after the end of the archive") }
                return true
            }
        }
        return true
    }

    /// Checks the stream ended where an archive may end: after the file and its padding.
    func finish() throws(Failure) {
        guard file != nil else { throw .notOneFile("the archive holds no file") }
        guard remainingInEntry == 0, padding == 0, state != .fileContent else {
            throw .malformed("the archive ends inside the file")
        }
    }

    private mutating func readHeader(_ header: [UInt8]) throws(Failure) {
        if header.allSatisfy({ $0 == 0 }) {
            if state == .afterFile || file != nil { state = .end }
            return
        }
        let stored = Self.octal(header[148..<156])
        let sum = header.indices.reduce(0) { $0 + ((148..<156).contains($1) ? 0x20 : Int(header[$1])) }
        guard stored == sum else { throw .malformed("a header's checksum is wrong") }
        let size: Int
        if let pendingSize { size = pendingSize } else { size = try Self.size(header[124..<136]) }
        // No file is that large, and the padding is added to the size: near Int.max it overflowed (a trap).
        guard size <= Self.maximumEntrySize else { throw .malformed("an entry of \(size) bytes") }
        let type = header[156]
        remainingInEntry = size
        padding = (Self.blockSize - size % Self.blockSize) % Self.blockSize
        switch type {
        case UInt8(ascii: "x"), UInt8(ascii: "g"), UInt8(ascii: "L"):
            guard size <= Self.maximumExtendedHeader else { throw .malformed("an extended header of \(size) bytes") }
            extended.removeAll(keepingCapacity: true)
            state = size == 0 ? .header : .extendedHeader(kind: type)
            if size == 0 { padding = 0 }
        case UInt8(ascii: "0"), 0, UInt8(ascii: "7"):
            guard file == nil else { throw .notOneFile("the archive holds more than one file") }
            let name = pendingName ?? Self.name(header)
            file = (name.hasPrefix("/") ? String(name.dropFirst()) : name, size)
            pendingName = nil
            pendingSize = nil
            state = size == 0 ? .afterFile : .fileContent
        case UInt8(ascii: "5"):
            pendingName = nil
            pendingSize = nil
            state = size + padding == 0 ? (file == nil ? .header : .afterFile) : .skipping
        default:
            throw .notOneFile("the archive holds an entry of type \(Character(Unicode.Scalar(type)))")
        }
    }

    /// A PAX header's records (`LENGTH KEY=VALUE\n`) for the next entry; a GNU long name.
    private mutating func applyExtended(_ kind: UInt8) throws(Failure) {
        defer { extended.removeAll(keepingCapacity: true) }
        if kind == UInt8(ascii: "L") {
            pendingName = String(decoding: extended.prefix { $0 != 0 }, as: UTF8.self)
            return
        }
        guard kind == UInt8(ascii: "x") else { return }  // global records: nothing restic writes that matters here
        var rest = extended[...]
        while !rest.isEmpty {
            guard let space = rest.firstIndex(of: 0x20), let length = Int(String(decoding: rest[rest.startIndex..<space], as: UTF8.self)),
                length > space - rest.startIndex + 1, length <= rest.count
            else { throw .malformed("a PAX record's length") }
            let record = rest[(space + 1)..<(rest.startIndex + length - 1)]
            rest = rest[(rest.startIndex + length)...]
            guard let equals = record.firstIndex(of: UInt8(ascii: "=")) else { throw .malformed("a PAX record without =") }
            let key = String(decoding: record[record.startIndex..<equals], as: UTF8.self)
            let value = record[(equals + 1)...]
            switch key {
            case "path": pendingName = String(decoding: value, as: UTF8.self)
            case "size":
                guard let size = Int(String(decoding: value, as: UTF8.self)), size >= 0 else { throw .malformed("a PAX size") }
                pendingSize = size
            default: break
            }
        }
    }

    /// The header's name: the ustar prefix, a slash and the name, each up to its first NUL.
    private static func name(_ header: [UInt8]) -> String {
        let name = String(decoding: header[0..<100].prefix { $0 != 0 }, as: UTF8.self)
        guard header[257..<262].elementsEqual("ustar".utf8) else { return name }
        let prefix = String(decoding: header[345..<500].prefix { $0 != 0 }, as: UTF8.self)
        return prefix.isEmpty ? name : prefix + "/" + name
    }

    /// The largest entry read (2^62 bytes): far past any database, far from overflowing.
    static let maximumEntrySize = 1 << 62

    /// A size field: octal digits, or base-256 (GNU) when its first byte has the high bit set.
    private static func size(_ field: ArraySlice<UInt8>) throws(Failure) -> Int {
        guard let first = field.first else { throw .malformed("a size") }
        if first & 0x80 != 0 {
            var value = 0
            for (index, byte) in field.enumerated() {
                let digit = index == 0 ? Int(byte & 0x7F) : Int(byte)
                guard value <= (Int.max - digit) >> 8 else { throw .malformed("a size beyond 2^63") }
                value = value << 8 | digit
            }
            return value
        }
        guard let value = octal(field) else { throw .malformed("a size that is not octal") }
        return value
    }

    /// An octal field (spaces and NULs around the digits allowed); `nil` if it holds anything else.
    private static func octal(_ field: ArraySlice<UInt8>) -> Int? {
        var value = 0
        var digits = 0
        for byte in field {
            if byte == 0 || byte == 0x20 {
                if digits > 0 { break }
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "7"), value < Int.max >> 3 else { return nil }
            value = value << 3 | Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? value : nil
    }
}

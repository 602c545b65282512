import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file or pipe read a chunk at a time, for the shell's `.read`, `.import` and stdin: whatever
/// comes (`/dev/zero`, a pipe that never ends), no more than one chunk is held here, and callers
/// bound what they keep of it.
final class ChunkedInput {
    /// How one line ended (``appendLine(to:limit:)``).
    enum LineEnd {
        /// A newline, consumed and not appended.
        case newline
        /// The end of the input.
        case endOfInput
        /// The line reached more than its limit; what was appended is its start.
        case tooLong
        /// A NUL byte, which is in no text the shell reads (SQLite's C strings end there).
        case nulByte
    }

    /// The name in messages: the path as given, or `stdin`.
    let name: String
    private let descriptor: Int32
    private let closes: Bool
    // One thread reads an input: its state needs no run-time exclusivity checks (a few per byte).
    /// The chunk's memory, owned here: reading a class's stored array retained and released its
    /// buffer around every scan (about 5 % of an import's time). Made once the input is open:
    /// an init that throws runs no deinit to free it.
    private let chunk: UnsafeMutableBufferPointer<UInt8>
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var count = 0
    @exclusivity(unchecked) private var finished = false
    /// The bytes of the chunks before this one.
    @exclusivity(unchecked) private var before = 0
    private static let chunkSize = 64 * 1024

    /// How many bytes have been taken.
    var consumed: Int { before + position }

    /// The size of a regular file, `nil` for a pipe, a terminal or a device (for progress).
    var size: Int? {
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(status.st_size)
    }

    /// Reads stdin (left open).
    init() {
        name = "stdin"
        descriptor = STDIN_FILENO
        closes = false
        chunk = Self.makeChunk()
    }

    /// Opens the file at `path`.
    ///
    /// - Throws: 66 when it cannot be opened.
    init(path: String) throws(CLIError) {
        let opened = PathBytes.open(path, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else { throw CLIError(.noInput, "cannot read \(path): \(String(cString: strerror(errno)))") }
        name = path
        descriptor = opened
        closes = true
        chunk = Self.makeChunk()
    }

    deinit {
        if closes { close(descriptor) }
        chunk.deallocate()
    }

    private static func makeChunk() -> UnsafeMutableBufferPointer<UInt8> {
        let chunk = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: chunkSize)
        chunk.initialize(repeating: 0)
        return chunk
    }

    /// Whether a byte is waiting, reading the next chunk when this one is used up.
    ///
    /// - Throws: 74 when the read fails (a folder, an I/O error).
    private func fill() throws(CLIError) -> Bool {
        if position < count { return true }
        if finished { return false }
        while true {
            let got = read(descriptor, chunk.baseAddress, chunk.count)
            if got < 0 {
                if errno == EINTR { continue }
                throw CLIError(.ioError, "cannot read \(name): \(String(cString: strerror(errno)))")
            }
            before += count
            position = 0
            count = got
            finished = got == 0
            return got > 0
        }
    }

    /// The next byte without taking it, `nil` at the end.
    func peek() throws(CLIError) -> UInt8? {
        try fill() ? chunk[position] : nil
    }

    /// Takes the next byte, `nil` at the end.
    func next() throws(CLIError) -> UInt8? {
        guard try fill() else { return nil }
        position += 1
        return chunk[position - 1]
    }

    /// Takes `prefix` when the input goes on with it, as far as the chunk read shows: for a
    /// byte-order mark at the start of a file, which the first read holds.
    func skipPrefix(_ prefix: [UInt8]) throws(CLIError) {
        guard try fill(), count - position >= prefix.count, chunk[position..<(position + prefix.count)].elementsEqual(prefix) else {
            return
        }
        position += prefix.count
    }

    /// A set of ASCII bytes that end a run (``appendRun(to:limit:stops:)``).
    struct StopBytes {
        private var low: UInt64 = 0
        private var high: UInt64 = 0
        /// The largest byte of the set: most bytes of text are above it (a CSV's stops are all
        /// below `0`), and one comparison clears them.
        private var maximum: UInt8 = 0

        /// The set of `bytes`, each below 0x80.
        init(_ bytes: [UInt8]) {
            for byte in bytes where byte < 0x80 {
                if byte < 64 { low |= 1 << byte } else { high |= 1 << (byte - 64) }
                maximum = max(maximum, byte)
            }
        }

        /// Whether `byte` is in the set.
        @inline(__always)
        func contains(_ byte: UInt8) -> Bool {
            guard byte <= maximum else { return false }
            // Masking shifts: `>>` by a variable amount also handles amounts past the width.
            return ((byte < 64 ? low : high) &>> UInt64(byte & 63)) & 1 != 0
        }
    }

    /// How a run ended (``appendRun(to:limit:stops:)``).
    enum RunEnd {
        /// At a byte of the stop set, left unread.
        case stop
        /// At the end of the input.
        case endOfInput
        /// `bytes` would have held more than its limit; what fit is appended, the rest left unread.
        case tooLong
    }

    /// Appends the bytes before the next byte of `stops` to `bytes`, never more than `limit` in
    /// all: a scan of the chunk, for the byte-by-byte readers' long stretches of ordinary bytes.
    func appendRun(to bytes: inout [UInt8], limit: Int, stops: StopBytes) throws(CLIError) -> RunEnd {
        while try fill() {
            let start = position
            let count = count
            // The scan and the copy in one pass over the chunk's memory: an import calls this for
            // every field, and a slice of the array per call cost more than its few bytes.
            let (end, fits) = { (buffer: UnsafeBufferPointer<UInt8>) -> (Int, Bool) in
                var index = start
                while index < count, !stops.contains(buffer[index]) { index += 1 }
                let room = limit - bytes.count
                guard index - start <= room else {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<(start + max(0, room))]))
                    return (start + max(0, room), false)
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<index]))
                return (index, true)
            }(UnsafeBufferPointer(chunk))
            position = end
            guard fits else { return .tooLong }
            if end < count { return .stop }
        }
        return .endOfInput
    }

    /// Appends the bytes before the next newline to `line`, never more than `limit` in all.
    ///
    /// - Returns: how the line ended; on ``LineEnd/tooLong`` and ``LineEnd/nulByte`` the rest of
    ///   the line is left unread.
    func appendLine(to line: inout [UInt8], limit: Int) throws(CLIError) -> LineEnd {
        while try fill() {
            let stop = chunk[position..<count].firstIndex { $0 == UInt8(ascii: "\n") || $0 == 0 }
            let end = stop ?? count
            guard line.count + (end - position) <= limit else { return .tooLong }
            line.append(contentsOf: chunk[position..<end])
            position = end
            guard let stop else { continue }
            if chunk[stop] == 0 { return .nulByte }
            position += 1
            return .newline
        }
        return .endOfInput
    }
}

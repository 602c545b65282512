import CipherCrypto

/// Appends big-endian fields to a byte array (for non-secret structures: headers, bundles).
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { bytes.append(contentsOf: [UInt8(value >> 8), UInt8(value & 0xFF)]) }
    mutating func u32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((value >> UInt64(shift)) & 0xFF)) }
    }
    mutating func raw(_ value: some Collection<UInt8>) { bytes.append(contentsOf: value) }
}

/// Reads big-endian fields from a byte buffer with bounds checks: running out of bytes is an
/// error, never a crash.
struct ByteReader {
    struct OutOfBytes: Error {}

    private let base: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ base: UnsafeRawBufferPointer, offset: Int = 0) {
        self.base = base
        self.offset = offset
    }

    var remaining: Int { base.count - offset }

    mutating func take(_ count: Int) throws(OutOfBytes) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw OutOfBytes() }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: base[offset..<(offset + count)])
    }

    mutating func u8() throws(OutOfBytes) -> UInt8 { try take(1)[0] }
    mutating func u16() throws(OutOfBytes) -> UInt16 { try take(2).reduce(0) { $0 << 8 | UInt16($1) } }
    mutating func u32() throws(OutOfBytes) -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func u64() throws(OutOfBytes) -> UInt64 { try take(8).reduce(0) { $0 << 8 | UInt64($1) } }
    mutating func bytes(_ count: Int) throws(OutOfBytes) -> [UInt8] { Array(try take(count)) }
    /// Copies `count` bytes straight into a new secret buffer, never through a Swift array.
    mutating func secret(_ count: Int) throws(OutOfBytes) -> SecretBytes {
        let source = try take(count)
        return SecretBytes(count: count) { buffer in
            if let address = source.baseAddress, count > 0 { buffer.baseAddress?.copyMemory(from: address, byteCount: count) }
        }
    }
}

/// Writes big-endian fields into a preallocated secret buffer, for plaintext that holds keys.
struct SecretWriter {
    struct Overflow: Error {}

    private let base: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ base: UnsafeMutableRawBufferPointer) { self.base = base }

    mutating func raw(_ source: UnsafeRawBufferPointer) throws(Overflow) {
        guard source.count <= base.count - offset else { throw Overflow() }
        if let address = source.baseAddress, let destination = base.baseAddress, source.count > 0 {
            (destination + offset).copyMemory(from: address, byteCount: source.count)
        }
        offset += source.count
    }
    mutating func bytes(_ value: [UInt8]) throws(Overflow) {
        guard value.count <= base.count - offset else { throw Overflow() }
        for byte in value {
            base[offset] = byte
            offset += 1
        }
    }
    mutating func u8(_ value: UInt8) throws(Overflow) { try bytes([value]) }
    mutating func u16(_ value: UInt16) throws(Overflow) {
        var w = ByteWriter()
        w.u16(value)
        try bytes(w.bytes)
    }
    mutating func u32(_ value: UInt32) throws(Overflow) {
        var w = ByteWriter()
        w.u32(value)
        try bytes(w.bytes)
    }
    mutating func u64(_ value: UInt64) throws(Overflow) {
        var w = ByteWriter()
        w.u64(value)
        try bytes(w.bytes)
    }
}

/// SQLite writes every integer of its file format big-endian, at any byte offset: the database
/// header, b-tree page headers and cell pointers, free-list trunks, the rollback journal's and
/// the write-ahead log's headers. The one place they are read (the shell's `.dbinfo` too).
extension RandomAccessCollection where Element == UInt8, Index == Int {
    /// The 2-byte big-endian integer at `offset`.
    package func bigEndianUInt16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
    }

    /// The 4-byte big-endian integer at `offset`.
    package func bigEndianUInt32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3])
    }
}

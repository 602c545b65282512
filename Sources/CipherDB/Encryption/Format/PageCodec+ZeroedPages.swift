extension PageCodec {
    /// The pages among a file's first `pageCount` that are all zeros, those of `unwritten` (and
    /// `alsoAllowed`) aside, in order, at most `limit` of them.
    ///
    /// SQLCipher 3 hands a page of zeros to SQLite unchecked, as a read past the end of the
    /// file: a zeroed page of a table reads as SQLite's empty page, and the zeroed last page of an
    /// overflow chain passes `integrity_check` with its bytes lost. Only this scan sees it. A
    /// file that shrank while it was read answers its first missing page.
    static func zeroedPages(
        descriptor: Int32, path: String, pageSize: Int, pageCount: Int, except unwritten: UnwrittenPages,
        alsoAllowed: Set<Int> = [], limit: Int = .max, cancellation: CancellationFlag? = nil
    ) throws(DatabaseError) -> [Int] {
        let chunkPages = pagesPerChunk(pageSize: pageSize)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkPages * pageSize, alignment: 16)
        defer { buffer.deallocate() }
        var zeroed: [Int] = []
        var firstPage = 1
        while firstPage <= pageCount {
            try cancellation?.throwIfCancelled("verification")
            let pages = min(chunkPages, pageCount - firstPage + 1)
            let wanted = pages * pageSize
            let got = try DatabaseFile.readFully(descriptor, into: buffer, count: wanted, offset: (firstPage - 1) * pageSize, path: path)
            guard got == wanted else { return zeroed + [firstPage + got / pageSize] }
            for index in 0..<pages {
                let number = firstPage + index
                if unwritten.contains(number) || alsoAllowed.contains(number) { continue }
                if isZeroed(UnsafeRawBufferPointer(rebasing: buffer[(index * pageSize)..<((index + 1) * pageSize)])) {
                    zeroed.append(number)
                    if zeroed.count >= limit { return zeroed }
                }
            }
            firstPage += pages
        }
        return zeroed
    }
}

import CipherCrypto

/// Counts the rows of tables straight from an encrypted database's pages, as `SELECT count(*)`
/// counts them, without SQLite.
///
/// `count(*)` walks a table's b-tree and adds up the cells of its leaves (of every page, for a
/// `WITHOUT ROWID` table, whose b-tree is an index: its interior cells are rows too). Through
/// SQLCipher that authenticates and decrypts every leaf. Here a leaf costs one AES block: its
/// cell count is in SQLite's page header, at the start of its first block, and CBC decrypts a
/// block from that block and the one before it (the page's IV) alone. Only the root and the
/// interior pages, about one in a hundred, are authenticated and decrypted whole, since their
/// cells say where the walk goes. Pages are read in runs of neighbours, as a table's leaves
/// mostly lie.
///
/// The root and interior pages are authenticated before the walk trusts them (the root's HMAC
/// also proves the key). The leaves are not, while counting: a damaged leaf could make a count
/// wrong, never the walk. ``authenticateReachedPages()`` checks every page the counts read
/// afterwards, for a caller that has the time then (a snapshot, while restic reads the file). A
/// page reached twice, a child out of the file, a page of the wrong kind, a page whose HMAC
/// fails: each ends with `corrupt`.
///
/// ```swift
/// let counter = try TableRowCounter(codec: codec, pageCount: 50_056) { first, count, buffer in
///     try image.readPages(first: first, count: count, into: buffer)
/// }
/// let rows = try counter.rows(inTreeAt: rootPage)
/// ```
final class TableRowCounter {
    /// Fills a buffer with `count` whole pages from page `first` on.
    typealias PageReader = (_ first: Int, _ count: Int, _ buffer: UnsafeMutableRawBufferPointer) throws(DatabaseError) -> Void

    /// SQLite's b-tree page kinds: the first byte of a page's header.
    private enum Kind: UInt8 {
        case interiorIndex = 2
        case interiorTable = 5
        case leafIndex = 10
        case leafTable = 13

        var isLeaf: Bool { self == .leafIndex || self == .leafTable }
        var isIndex: Bool { self == .interiorIndex || self == .leafIndex }
        /// The header's length: interior pages add their right-most child.
        var headerSize: Int { isLeaf ? 8 : 12 }
    }

    private let worker: PageCodec.Worker
    private let layout: CipherLayout
    private let pageCount: Int
    private let readPages: PageReader
    /// Bytes SQLite uses in a page: the rest is SQLCipher's reserve.
    private let usableSize: Int
    /// The pages read at a time: about 1 MiB.
    private let pagesPerRead: Int
    private let window: UnsafeMutableRawBufferPointer
    private let scratch: UnsafeMutableRawBufferPointer
    private let block: UnsafeMutableRawBufferPointer
    /// One bit per page: a page reached twice (a loop, two trees sharing a page) is damage.
    private var reached: [UInt64]

    /// A counter for a file of `pageCount` pages in `codec`'s layout, reading pages with `readPages`.
    ///
    /// - Throws: `unsupported` when the codec's layout cannot be read offline; crypto errors.
    init(codec: PageCodec, pageCount: Int, readPages: @escaping PageReader) throws(DatabaseError) {
        worker = try PageCodec.Worker(codec)
        layout = codec.layout
        self.pageCount = max(0, pageCount)
        self.readPages = readPages
        usableSize = layout.pageSize - layout.reserveSize
        pagesPerRead = PageCodec.pagesPerChunk(pageSize: layout.pageSize)
        window = .allocate(byteCount: pagesPerRead * layout.pageSize, alignment: 16)
        scratch = .allocate(byteCount: layout.pageSize, alignment: 16)
        block = .allocate(byteCount: AESCBC.blockLength, alignment: 16)
        reached = [UInt64](repeating: 0, count: self.pageCount / 64 + 1)
    }

    deinit {
        // `scratch` and `block` are wiped after each count; `window` holds ciphertext only.
        for buffer in [window, scratch, block] { buffer.deallocate() }
    }

    /// The rows of the table whose b-tree starts at page `root` (`sqlite_master.rootpage`): the
    /// cells of its leaves, and of its interior pages too for a `WITHOUT ROWID` table.
    ///
    /// - Throws: `corrupt` when the pages do not read as one sound b-tree (see the type's
    ///   discussion), or the root's HMAC fails (a damaged root, or the wrong key); read errors.
    func rows(inTreeAt root: Int) throws(DatabaseError) -> Int {
        // The plaintext of pages and headers is wiped as soon as the count is read, not when the
        // counter goes: a caller keeps it for ``authenticateReachedPages()``, which reads only
        // ciphertext.
        defer {
            scratch.initializeMemory(as: UInt8.self, repeating: 0)
            block.initializeMemory(as: UInt8.self, repeating: 0)
        }
        var rows = 0
        var isIndex: Bool?
        try markReached(root)
        // Read whole and authenticated: the root, then every interior page below it.
        var wholePages = [root]
        while let page = wholePages.popLast() {
            try readPages(page, 1, scratch)
            guard try worker.decrypt(scratch, number: page, evenIfUnauthentic: false) else {
                throw corrupt("page \(page) fails its HMAC")
            }
            let plaintext = UnsafeRawBufferPointer(scratch)
            guard let kind = Kind(rawValue: plaintext[0]), kind.isIndex == (isIndex ?? kind.isIndex), page == root || !kind.isLeaf else {
                throw corrupt("page \(page) is not a page of this b-tree")
            }
            isIndex = kind.isIndex
            let cells = try cellCount(plaintext, kind: kind, page: page)
            // An index b-tree keeps rows in its interior cells as well; a leaf root holds them all.
            if kind.isIndex || kind.isLeaf { rows += cells }
            if kind.isLeaf { continue }
            var children: [Int] = []
            children.reserveCapacity(cells + 1)
            for index in 0..<cells {
                let pointer = Int(plaintext.bigEndianUInt16(at: kind.headerSize + 2 * index))
                guard pointer >= kind.headerSize + 2 * cells, pointer + 4 <= usableSize else {
                    throw corrupt("cell \(index) of page \(page) points outside the page")
                }
                children.append(Int(plaintext.bigEndianUInt32(at: pointer)))
            }
            children.append(Int(plaintext.bigEndianUInt32(at: 8)))
            children.sort()
            try visit(children, rows: &rows, interiorPages: &wholePages, isIndex: &isIndex)
        }
        return rows
    }

    /// Checks the HMAC of every page the counts so far have read, in runs of neighbours:
    /// afterwards a count is known to come from sound pages under the right key.
    ///
    /// - Parameter cancellation: checked before each run; once set, this throws `interrupted`.
    /// - Throws: `corrupt` naming the first page whose HMAC fails; read errors.
    func authenticateReachedPages(cancellation: CancellationFlag? = nil) throws(DatabaseError) {
        var page = 2
        while page <= pageCount {
            guard isReached(page) else {
                page += 1
                continue
            }
            var count = 1
            while count < pagesPerRead, page + count <= pageCount, isReached(page + count) { count += 1 }
            try cancellation?.throwIfCancelled("page authentication")
            try readPages(page, count, window)
            for index in 0..<count {
                let start = index * layout.pageSize
                let bytes = UnsafeMutableRawBufferPointer(rebasing: window[start..<(start + layout.pageSize)])
                guard try worker.isAuthentic(bytes, number: page + index) else {
                    throw DatabaseError(
                        kind: .corrupt, message: "page \(page + index) fails its HMAC (a page the row counts were read from)")
                }
            }
            page += count
        }
    }

    /// Reads `pages` (in ascending order) in runs of neighbours, adds up the leaves' cells, and
    /// queues the interior pages; the first page visited fixes the tree's family (table or index).
    private func visit(_ pages: [Int], rows: inout Int, interiorPages: inout [Int], isIndex: inout Bool?) throws(DatabaseError) {
        var next = 0
        while next < pages.count {
            let first = pages[next]
            var count = 1
            while next + count < pages.count, count < pagesPerRead, pages[next + count] == first + count { count += 1 }
            for number in first..<(first + count) { try markReached(number) }
            try readPages(first, count, window)
            for index in 0..<count {
                let number = first + index
                let start = index * layout.pageSize
                let page = UnsafeRawBufferPointer(rebasing: window[start..<(start + layout.pageSize)])
                try worker.decryptFirstBlock(of: page, number: number, into: block)
                guard let kind = Kind(rawValue: block[0]), kind.isIndex == (isIndex ?? kind.isIndex) else {
                    throw corrupt("page \(number) is not a page of this b-tree")
                }
                isIndex = kind.isIndex
                if kind.isLeaf {
                    rows += try cellCount(UnsafeRawBufferPointer(block), kind: kind, page: number)
                } else {
                    interiorPages.append(number)
                }
            }
            next += count
        }
    }

    /// The cell count in a page header (at the start of `header`), checked to fit the page.
    private func cellCount(_ header: UnsafeRawBufferPointer, kind: Kind, page: Int) throws(DatabaseError) -> Int {
        let cells = Int(header.bigEndianUInt16(at: 3))
        guard kind.headerSize + 2 * cells <= usableSize else {
            throw corrupt("page \(page) claims \(cells) cells")
        }
        return cells
    }

    private func isReached(_ page: Int) -> Bool {
        reached[page / 64] & (UInt64(1) << UInt64(page % 64)) != 0
    }

    private func markReached(_ page: Int) throws(DatabaseError) {
        // Page 1 is the schema's root: never a table's page.
        guard page >= 2, page <= pageCount else { throw corrupt("a b-tree points to page \(page) of \(pageCount)") }
        guard !isReached(page) else { throw corrupt("page \(page) is reached twice") }
        reached[page / 64] |= UInt64(1) << UInt64(page % 64)
    }

    private func corrupt(_ what: String) -> DatabaseError {
        DatabaseError(kind: .corrupt, message: "cannot count the rows from the pages: \(what)")
    }
}

import Foundation

extension PageCodec {
    /// SQLite's account of a file's pages, read through the codec: page 1's header and the
    /// free-list trunks, each decrypted and its HMAC checked.
    struct FreeList: Sendable {
        /// The database's size in pages as its header records it, or the file's when that
        /// record is stale (written by a version that did not keep it); at most the file's.
        let databasePages: Int
        /// The free-list leaves in the file: SQLite never reads them, and need not have written them.
        let leaves: [Int]
    }

    /// The pages a sound file may hold as zeros, which SQLCipher hands SQLite unchecked (it takes
    /// them for reads past the end of the file): SQLite's lock-byte page, which it never writes,
    /// and, with `secure_delete` off, a free-list leaf that a transaction added and freed, which
    /// it does not write either (at the end of the file it pads over it with zeros).
    struct UnwrittenPages: Sendable {
        /// The page holding SQLite's lock bytes (past the end of files under 1 GiB).
        let lockBytePage: Int
        /// The free-list leaves; empty when the free list could not be read.
        let freeLeaves: Set<Int>

        /// The lock-byte page of `pageSize`-byte pages and the leaves of `freeList`, if it could be read.
        init(pageSize: Int, freeList: FreeList?) {
            lockBytePage = CipherLayout.lockBytePage(pageSize: pageSize)
            freeLeaves = Set(freeList?.leaves ?? [])
        }

        /// Whether page `number` may hold zeros in a sound file.
        func contains(_ number: Int) -> Bool { number == lockBytePage || freeLeaves.contains(number) }
    }

    /// The file's free list, or `nil` at any fault: page 1 or a trunk that fails its HMAC, a
    /// chain out of the database or longer than its free-page count, a count that does not add up.
    func readFreeList(descriptor: Int32, path: String, filePages: Int) throws(DatabaseError) -> FreeList? {
        let pageSize = layout.pageSize
        // A plaintext header longer than 32 bytes leaves the free-list fields (bytes 32 to 39)
        // outside page 1's HMAC: anyone could point them at pages of their choosing.
        guard filePages > 0, layout.pageOneClearSize <= 32 else { return nil }
        let worker = try Worker(self)
        let page = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)
        defer {
            // Page 1 and the trunks are decrypted here.
            page.initializeMemory(as: UInt8.self, repeating: 0)
            page.deallocate()
        }
        func read(_ number: Int) throws(DatabaseError) -> Bool {
            let got = try DatabaseFile.readFully(descriptor, into: page, count: pageSize, offset: (number - 1) * pageSize, path: path)
            guard got == pageSize else { return false }
            return try worker.decrypt(page, number: number)
        }
        func word(_ offset: Int) -> Int { Int(page.bigEndianUInt32(at: offset)) }

        guard try read(1) else { return nil }
        // SQLite's header: the database's size in pages, the first free-list trunk (32) and the
        // number of free pages (36). A log not yet copied back may hold pages past the file's end.
        let databasePages = Self.recordedPageCount(inPageOne: UnsafeRawBufferPointer(page)) ?? filePages
        let freePages = word(36)
        let leavesPerTrunk = (pageSize - layout.reserveSize) / 4 - 2
        var leaves: [Int] = []
        var trunk = word(32)
        var listed = 0
        while trunk != 0 {
            listed += 1
            // A chain longer than the free list, or out of the file, is a fault (and no endless loop).
            guard trunk <= min(databasePages, filePages), listed <= freePages, try read(trunk) else { return nil }
            let count = word(4)
            guard count <= leavesPerTrunk else { return nil }
            for index in 0..<count {
                let leaf = word(8 + 4 * index)
                guard (1...databasePages).contains(leaf) else { return nil }
                leaves.append(leaf)
            }
            listed += count
            trunk = word(0)
        }
        guard listed == freePages else { return nil }
        return FreeList(databasePages: min(databasePages, filePages), leaves: leaves.filter { $0 <= filePages })
    }

    /// The database's size in pages as page 1's header records it, when page 1 authenticates and
    /// the record is current (written with the change counter it was last changed with); `nil`
    /// otherwise.
    func recordedPageCount(descriptor: Int32, path: String) throws(DatabaseError) -> Int? {
        let pageSize = layout.pageSize
        let page = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)
        defer {
            page.initializeMemory(as: UInt8.self, repeating: 0)  // decrypted
            page.deallocate()
        }
        guard try DatabaseFile.readFully(descriptor, into: page, count: pageSize, offset: 0, path: path) == pageSize,
            try Worker(self).decrypt(page, number: 1)
        else { return nil }
        return Self.recordedPageCount(inPageOne: UnsafeRawBufferPointer(page))
    }

    /// The database's size in pages in a decrypted page 1's header (offset 28), when it counts:
    /// written with the change counter (92) that is the current one (24); `nil` otherwise.
    private static func recordedPageCount(inPageOne page: UnsafeRawBufferPointer) -> Int? {
        let recorded = Int(page.bigEndianUInt32(at: 28))
        return recorded > 0 && page.bigEndianUInt32(at: 92) == page.bigEndianUInt32(at: 24) ? recorded : nil
    }

    /// The pages of the file open as `descriptor` that may hold zeros when it is sound (see
    /// ``UnwrittenPages``); only the lock-byte page when the free list cannot be read.
    func unwrittenPages(descriptor: Int32, path: String, filePages: Int) throws(DatabaseError) -> UnwrittenPages {
        UnwrittenPages(pageSize: layout.pageSize, freeList: try readFreeList(descriptor: descriptor, path: path, filePages: filePages))
    }
}

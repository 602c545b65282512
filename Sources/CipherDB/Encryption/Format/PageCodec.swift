import CipherCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SQLCipher's page format both ways, with OpenSSL: what ``PageVerifier`` checks, read and written.
///
/// A page of `pageSize` bytes holds its encrypted content, then a reserve: a random IV (its first
/// 16 bytes; the rest is random too), the HMAC of content + IV + page number (four little-endian
/// bytes), and padding to a multiple of 16. Page 1's first 16 bytes are the salt, outside the
/// encryption (or, with SQLCipher 4's plaintext header, the first bytes of SQLite's header). AES-256-CBC without padding encrypts the content under the page key.
///
/// Rekeying through the codec decrypts and re-encrypts every page with the layout unchanged, so
/// the plaintext, and the b-tree SQLite sees, stays the same byte for byte; only the key, the salt
/// and the IVs change. That is what SQLCipher's own rekey does, without SQLite's pager, journal
/// and cache in between, and on every core.
struct PageCodec: Sendable {
    /// The page layout (page size, reserve, hashes).
    let layout: CipherLayout
    /// The KDF salt (the first 16 bytes of the file, unless it keeps a plaintext header).
    let salt: [UInt8]
    /// The key that encrypts the pages.
    let pageKey: SecretBytes
    private let hmacKey: SecretBytes

    /// A codec for the page key (a raw key, or a passphrase derived over `salt`) and the file's salt.
    init(layout: CipherLayout, pageKey: SecretBytes, salt: [UInt8]) throws(DatabaseError) {
        guard layout.isVerifiableOffline, salt.count == CipherLayout.saltSize else {
            throw DatabaseError(kind: .unsupported, message: "the page codec needs page HMACs and a 16-byte salt")
        }
        self.layout = layout
        self.salt = salt
        self.pageKey = pageKey
        self.hmacKey = try PageKeys.hmacKey(pageKey: pageKey, salt: salt, layout: layout)
    }

    /// Whether a file in layout `old` can be rewritten page by page into layout `new`: SQLite's
    /// content area (page size minus reserve) must stay the same, or the b-tree would not fit,
    /// and so must the clear start of page 1 (salt or plaintext header).
    static func canTranscode(from old: CipherLayout, to new: CipherLayout) -> Bool {
        old.isVerifiableOffline && new.isVerifiableOffline && old.pageSize == new.pageSize && old.reserveSize == new.reserveSize
            && old.plaintextHeaderSize == new.plaintextHeaderSize
    }

    /// Cipher contexts and an HMAC with their keys set up: one per thread.
    final class Worker {
        let layout: CipherLayout
        private let salt: [UInt8]
        private let encryptor: AESCBC
        private let decryptor: AESCBC
        private let mac: HMAC
        private let code = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)

        init(_ codec: PageCodec) throws(DatabaseError) {
            layout = codec.layout
            salt = codec.salt
            do {
                encryptor = try AESCBC(key: codec.pageKey, direction: .encrypt)
                decryptor = try AESCBC(key: codec.pageKey, direction: .decrypt)
                mac = try HMAC(key: codec.hmacKey, hash: codec.layout.hmacAlgorithm.hashFunction)
            } catch {
                throw PageKeys.cryptoError(error)
            }
        }

        deinit {
            code.deallocate()
        }

        /// Computes the HMAC of page `number` as it stands (encrypted content and IV) into `code`.
        private func authenticate(_ page: UnsafeMutableRawBufferPointer, number: Int) throws(DatabaseError) {
            var pageNumber = UInt32(truncatingIfNeeded: number).littleEndian
            do {
                try withUnsafeBytes(of: &pageNumber) { numberBytes throws(CryptoError) in
                    try mac.authenticate(
                        UnsafeRawBufferPointer(rebasing: page[layout.authenticatedRange(ofPage: number)]), numberBytes, into: code)
                }
            } catch {
                throw PageKeys.cryptoError(error)
            }
        }

        /// Checks page `number`'s HMAC and, when it matches, decrypts its content in place.
        ///
        /// - Parameter evenIfUnauthentic: decrypt a page whose HMAC fails too (salvage: a flipped
        ///   bit garbles two AES blocks, the rest of the page still reads).
        /// - Returns: `false` when the HMAC does not match (wrong key, damaged or altered page);
        ///   the page is then left as it was, unless `evenIfUnauthentic`.
        func decrypt(_ page: UnsafeMutableRawBufferPointer, number: Int, evenIfUnauthentic: Bool = false) throws(DatabaseError) -> Bool {
            let authentic = try isAuthentic(page, number: number)
            guard authentic || evenIfUnauthentic else { return false }
            let content = UnsafeMutableRawBufferPointer(rebasing: page[layout.contentRange(ofPage: number)])
            do {
                try decryptor.run(
                    iv: UnsafeRawBufferPointer(rebasing: page[layout.ivRange]), input: UnsafeRawBufferPointer(content),
                    output: content)
            } catch {
                throw PageKeys.cryptoError(error)
            }
            return authentic
        }

        /// Whether page `number`'s stored HMAC matches its encrypted content and IV (the page is
        /// left as it is).
        func isAuthentic(_ page: UnsafeMutableRawBufferPointer, number: Int) throws(DatabaseError) -> Bool {
            try authenticate(page, number: number)
            var difference: UInt8 = 0
            for (offset, index) in layout.hmacRange.enumerated() { difference |= page[index] ^ code[offset] }
            return difference == 0
        }

        /// Decrypts the first AES block of page `number`'s content into `block` (16 bytes),
        /// leaving the page as it is and its HMAC unchecked: CBC needs only the block and the
        /// one before it (the IV) for that. From page 2 on, the block starts with SQLite's b-tree
        /// page header (kind, first free block, cell count).
        func decryptFirstBlock(
            of page: UnsafeRawBufferPointer, number: Int, into block: UnsafeMutableRawBufferPointer
        ) throws(DatabaseError) {
            let start = layout.contentRange(ofPage: number).lowerBound
            do {
                try decryptor.run(
                    iv: UnsafeRawBufferPointer(rebasing: page[layout.ivRange]),
                    input: UnsafeRawBufferPointer(rebasing: page[start..<(start + AESCBC.blockLength)]),
                    output: UnsafeMutableRawBufferPointer(rebasing: block[0..<AESCBC.blockLength]))
            } catch {
                throw PageKeys.cryptoError(error)
            }
        }

        /// Encrypts page `number`'s plaintext content in place under a fresh random reserve (and
        /// IV), writes its HMAC, and on page 1 the salt.
        ///
        /// - Parameter randomReserve: `reserveSize` random bytes to use (drawn for many pages at
        ///   once: OpenSSL checks for a fork with a system call on every draw); `nil` draws them.
        func encrypt(_ page: UnsafeMutableRawBufferPointer, number: Int, randomReserve: UnsafeRawBufferPointer? = nil) throws(DatabaseError)
        {
            let content = UnsafeMutableRawBufferPointer(rebasing: page[layout.contentRange(ofPage: number)])
            let reserve = UnsafeMutableRawBufferPointer(rebasing: page[layout.ivRange.lowerBound..<layout.pageSize])
            do {
                // As SQLCipher does: the whole reserve random, its first 16 bytes the IV.
                if let randomReserve, randomReserve.count == reserve.count {
                    reserve.copyMemory(from: randomReserve)
                } else {
                    try SecureRandom.fill(reserve)
                }
                try encryptor.run(
                    iv: UnsafeRawBufferPointer(rebasing: page[layout.ivRange]), input: UnsafeRawBufferPointer(content),
                    output: content)
            } catch {
                throw PageKeys.cryptoError(error)
            }
            // A plaintext header stays as it is; otherwise the salt opens the file.
            if number == 1, layout.plaintextHeaderSize == 0 {
                for index in 0..<CipherLayout.saltSize { page[index] = salt[index] }
            }
            try authenticate(page, number: number)
            UnsafeMutableRawBufferPointer(rebasing: page[layout.hmacRange])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: code[0..<layout.hmacSize]))
        }
    }
}

// MARK: - Rewriting a whole file

extension PageCodec {
    /// How many pages one thread reads, rewrites and writes at a time: about 1 MiB, so memory
    /// stays flat in the file size.
    static func pagesPerChunk(pageSize: Int) -> Int { max(1, (1 << 20) / pageSize) }

    /// Whether `page` is all zeros: never a page SQLCipher wrote, which begins with ciphertext,
    /// the salt or SQLite's header, so the first word almost always answers. SQLCipher itself
    /// passes such a page to SQLite unchecked, as a read past the end of the file.
    static func isZeroed(_ page: UnsafeRawBufferPointer) -> Bool {
        page.loadUnaligned(as: UInt64.self) == 0 && page.allSatisfy { $0 == 0 }
    }

    /// Rewrites every page of the file open as `source` from `old`'s key to `new`'s into
    /// `target`, on `threads` threads, each taking every `threads`-th chunk.
    ///
    /// Every chunk is read back from `target` and each page's HMAC checked under the new key.
    ///
    /// - Throws: `corrupt` naming the first page whose HMAC fails under the old key (nothing is
    ///   trusted past a bad page); `notADatabase` when the file is not a whole number of pages;
    ///   `ioError` when a page reads back wrong; read and write errors (`diskFull` when the
    ///   target's disk fills).
    static func transcode(
        source: Int32, sourcePath: String, into target: PendingFile, from old: PageCodec, to new: PageCodec,
        threads requestedThreads: Int = ProcessInfo.processInfo.activeProcessorCount,
        progress: ((_ pages: Int, _ total: Int) -> Void)? = nil
    ) throws(DatabaseError) {
        _ = try transcode(
            source: source, sourcePath: sourcePath, into: target, from: old, to: new, passingDamage: false, threads: requestedThreads,
            progress: progress)
    }

    /// As ``transcode(source:sourcePath:into:from:to:threads:)``; with `passingDamage`, a page
    /// whose HMAC fails is decrypted anyway (a zeroed page stays zeros) and written with a valid
    /// HMAC, instead of stopping the copy. Returns those pages' numbers, in order. `progress`
    /// hears the pages written and checked so far after each chunk (about 1 MiB), from one worker
    /// at a time.
    static func transcode(
        source: Int32, sourcePath: String, into target: PendingFile, from old: PageCodec, to new: PageCodec,
        passingDamage: Bool, threads requestedThreads: Int = ProcessInfo.processInfo.activeProcessorCount,
        progress: ((_ pages: Int, _ total: Int) -> Void)? = nil
    ) throws(DatabaseError) -> [Int] {
        var status = stat()
        guard fstat(source, &status) == 0 else { throw DatabaseFile.fileError("cannot read the size of", sourcePath) }
        let pageSize = old.layout.pageSize
        let fileSize = Int(status.st_size)
        guard fileSize % pageSize == 0 else {
            throw DatabaseError(
                kind: .notADatabase, message: "\(sourcePath) is \(fileSize) bytes, not a whole number of \(pageSize)-byte pages")
        }
        let pageCount = fileSize / pageSize
        let chunkPages = pagesPerChunk(pageSize: pageSize)
        let chunkCount = (pageCount + chunkPages - 1) / chunkPages
        let threads = max(1, min(requestedThreads, chunkCount))
        // Pages SQLite left as zeros stay zeros: SQLCipher hands them on unchecked as it always did.
        let unwritten = try old.unwrittenPages(descriptor: source, path: sourcePath, filePages: pageCount)
        let failure = Locked<DatabaseError?>(nil)
        let damaged = Locked<[Int]>([])
        let done = Locked(0)
        // Called under `done`'s lock only, so never from two threads at once.
        nonisolated(unsafe) let progress = progress
        // Only the positional write is used from the threads: `pwrite` at distinct offsets.
        nonisolated(unsafe) let target = target

        // Worker `thread` handles chunks thread, thread + threads, ...; the first failure stops all.
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            let chunkBytes = chunkPages * pageSize
            // Plaintext passes through this memory: SecretBytes keeps it out of core dumps and
            // swap where it can and wipes it at the end. One half for the pages, one for their
            // plaintext, which the copy must give back when read under the new key.
            _ = SecretBytes(count: 2 * chunkBytes) { memory in
                let buffer = UnsafeMutableRawBufferPointer(rebasing: memory[0..<chunkBytes])
                let plaintext = UnsafeMutableRawBufferPointer(rebasing: memory[chunkBytes..<(2 * chunkBytes)])
                do throws(DatabaseError) {
                    try rewrite(
                        chunksFrom: thread, every: threads, buffer: buffer, plaintext: plaintext,
                        context: TranscodeContext(
                            source: source, sourcePath: sourcePath, target: target, old: old, new: new, pageSize: pageSize,
                            pageCount: pageCount, chunkPages: chunkPages, chunkCount: chunkCount, unwritten: unwritten,
                            damaged: passingDamage ? damaged : nil,
                            reportDone: { pages in
                                done.withLock { count in
                                    count += pages
                                    progress?(count, pageCount)
                                }
                            }),
                        failure: failure)
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return damaged.withLock { $0 }.sorted()
    }

    /// What every worker of one ``transcode(source:sourcePath:into:from:to:threads:)`` shares.
    private struct TranscodeContext {
        let source: Int32
        let sourcePath: String
        let target: PendingFile
        let old: PageCodec
        let new: PageCodec
        let pageSize: Int
        let pageCount: Int
        let chunkPages: Int
        let chunkCount: Int
        let unwritten: UnwrittenPages
        /// Where pages that fail their HMAC are listed when they are passed on; `nil`: they stop the copy.
        let damaged: Locked<[Int]>?
        /// Counts the pages of a chunk once it is written and checked.
        let reportDone: (Int) -> Void
    }

    /// One worker's share: chunks `first`, `first + every`, ... read, checked under the old key,
    /// encrypted under the new one, written, read back and compared with their plaintext.
    private static func rewrite(
        chunksFrom first: Int, every: Int, buffer: UnsafeMutableRawBufferPointer, plaintext: UnsafeMutableRawBufferPointer,
        context: TranscodeContext, failure: Locked<DatabaseError?>
    ) throws(DatabaseError) {
        let pageSize = context.pageSize
        let reader = try Worker(context.old)
        let writer = try Worker(context.new)
        let reserveSize = context.new.layout.reserveSize
        let random = UnsafeMutableRawBufferPointer.allocate(byteCount: context.chunkPages * reserveSize, alignment: 16)
        defer { random.deallocate() }
        func page(_ memory: UnsafeMutableRawBufferPointer, _ index: Int) -> UnsafeMutableRawBufferPointer {
            UnsafeMutableRawBufferPointer(rebasing: memory[(index * pageSize)..<((index + 1) * pageSize)])
        }
        // The pages of the chunk left as the zeros they were, which must read back as zeros.
        var keptZeros = [Bool](repeating: false, count: context.chunkPages)
        var chunk = first
        while chunk < context.chunkCount, failure.withLock({ $0 == nil }) {
            let firstPage = chunk * context.chunkPages + 1
            let pages = min(context.chunkPages, context.pageCount - firstPage + 1)
            let offset = (firstPage - 1) * pageSize
            let bytes = pages * pageSize
            let got = try DatabaseFile.readFully(context.source, into: buffer, count: bytes, offset: offset, path: context.sourcePath)
            guard got == bytes else {
                throw DatabaseError(kind: .ioError, message: "\(context.sourcePath) became shorter while it was rewritten")
            }
            do { try SecureRandom.fill(UnsafeMutableRawBufferPointer(rebasing: random[0..<(pages * reserveSize)])) } catch {
                throw PageKeys.cryptoError(error)
            }
            for index in 0..<pages {
                let number = firstPage + index
                // SQLite's lock-byte page and the free pages it never wrote stay the zeros they are.
                let zeroed = isZeroed(UnsafeRawBufferPointer(page(buffer, index)))
                keptZeros[index] = zeroed && context.unwritten.contains(number)
                if keptZeros[index] { continue }
                if try !reader.decrypt(page(buffer, index), number: number, evenIfUnauthentic: context.damaged != nil && !zeroed) {
                    guard let damaged = context.damaged else {
                        throw DatabaseError(
                            kind: .corrupt, resultCode: 11,
                            message:
                                "page \(number) of \(context.sourcePath) fails its HMAC: the file is damaged or altered; nothing was changed"
                        )
                    }
                    // Decrypted as it is; a zeroed page stays zeros, which SQLite calls malformed.
                    if zeroed { page(buffer, index).initializeMemory(as: UInt8.self, repeating: 0) }
                    damaged.withLock { $0.append(number) }
                }
                page(plaintext, index).copyMemory(from: UnsafeRawBufferPointer(page(buffer, index)))
                try writer.encrypt(
                    page(buffer, index), number: number,
                    randomReserve: UnsafeRawBufferPointer(rebasing: random[(index * reserveSize)..<((index + 1) * reserveSize)]))
            }
            try context.target.write(UnsafeRawBufferPointer(rebasing: buffer[0..<bytes]), at: offset)
            // Read back, decrypted under the new key and compared with the plaintext it came from:
            // what reaches the copy gives SQLite exactly the pages it had, or the copy is dropped.
            let back = try DatabaseFile.readFully(
                context.target.descriptor, into: buffer, count: bytes, offset: offset, path: context.target.targetPath)
            for index in 0..<pages {
                let number = firstPage + index
                let sound: Bool
                if back != bytes {
                    sound = false
                } else if keptZeros[index] {
                    sound = isZeroed(UnsafeRawBufferPointer(page(buffer, index)))
                } else {
                    // The content only: the salt, IV and HMAC around it are new by design.
                    let content = context.new.layout.contentRange(ofPage: number)
                    sound =
                        try writer.decrypt(page(buffer, index), number: number)
                        && sameBytes(
                            UnsafeRawBufferPointer(rebasing: page(buffer, index)[content]),
                            UnsafeRawBufferPointer(rebasing: page(plaintext, index)[content]))
                }
                guard sound else {
                    throw DatabaseError(
                        kind: .ioError, resultCode: 10,
                        message: "page \(number) of the rewritten copy of \(context.sourcePath) reads back wrong; nothing was changed")
                }
            }
            context.reportDone(pages)
            chunk += every
        }
    }

    /// Whether two buffers hold the same bytes (`memcmp`: this runs once per page).
    private static func sameBytes(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Bool {
        guard first.count == second.count else { return false }
        guard let a = first.baseAddress, let b = second.baseAddress else { return first.count == 0 }
        return memcmp(a, b, first.count) == 0
    }
}

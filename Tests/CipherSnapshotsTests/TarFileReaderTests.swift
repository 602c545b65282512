import Foundation
import XCTest

@testable import CipherSnapshots

/// `TarFileReader` on archives GNU tar writes (ustar, PAX and GNU long names) and on damaged
/// ones, fed in chunks of every awkward size.
final class TarFileReaderTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cipherdb-tar-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    func testTheOneFileComesOutWholeInEveryFormatAndChunkSize() throws {
        let content = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let longName = String(repeating: "long-name-", count: 15) + ".db"
        for (format, name) in [("ustar", "app.db"), ("pax", longName), ("gnu", longName), ("pax", "app.db")] {
            let archive = try tar(format: format, files: [(name, content)])
            for chunkSize in [1, 7, 511, 512, 513, 4096, archive.count] {
                let (found, bytes) = try read(archive, chunkSize: chunkSize)
                XCTAssertEqual(found?.name, name, "\(format), chunks of \(chunkSize)")
                XCTAssertEqual(found?.size, content.count)
                XCTAssertEqual(bytes, content, "\(format), chunks of \(chunkSize)")
            }
        }
        // An empty file and a size of exactly one block.
        for size in [0, 512] {
            let (found, bytes) = try read(try tar(format: "ustar", files: [("f", [UInt8](repeating: 9, count: size))]), chunkSize: 100)
            XCTAssertEqual(found?.size, size)
            XCTAssertEqual(bytes.count, size)
        }
    }

    /// Go's `archive/tar` writes a size that octal digits cannot hold in base-256.
    func testABase256SizeIsRead() throws {
        var archive = try tar(format: "ustar", files: [("big.db", [UInt8](repeating: 1, count: 700))])
        archive.replaceSubrange(124..<136, with: [0x80] + [UInt8](repeating: 0, count: 9) + [0x02, 0xBC])  // 700
        Self.fixChecksum(&archive)
        let (found, bytes) = try read(archive, chunkSize: 300)
        XCTAssertEqual(found?.size, 700)
        XCTAssertEqual(bytes, [UInt8](repeating: 1, count: 700))
    }

    func testAnythingButOneFileIsRefused() throws {
        let two = try tar(format: "ustar", files: [("a", [1, 2, 3]), ("b", [4])])
        XCTAssertEqual(failure(two), .notOneFile("the archive holds more than one file"))

        let link = directory.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/etc/passwd")
        XCTAssertEqual(
            failure(try run(["tar", "--format=ustar", "-cf", "-", "-C", directory.path, "link"])),
            .notOneFile("the archive holds an entry of type 2"))

        var damaged = try tar(format: "ustar", files: [("a", [1, 2, 3])])
        damaged[10] ^= 0x40
        XCTAssertEqual(failure(damaged), .malformed("a header's checksum is wrong"))

        let whole = try tar(format: "ustar", files: [("a", [UInt8](repeating: 5, count: 3000))])
        XCTAssertEqual(failure(Array(whole.prefix(1500))), .malformed("the archive ends inside the file"))
        XCTAssertEqual(failure([UInt8](repeating: 0, count: 1024)), .notOneFile("the archive holds no file"))

        var hugeExtended = try tar(format: "pax", files: [("a", [1])])
        hugeExtended.replaceSubrange(124..<136, with: Array(String(format: "%011o", 1 << 20).utf8) + [0])
        Self.fixChecksum(&hugeExtended)
        XCTAssertEqual(failure(hugeExtended), .malformed("an extended header of 1048576 bytes"))
    }

    /// A size near Int.max (base-256, as a hostile repository could serve it) overflowed as its
    /// padding was added: a trap that ended the restore. Refused as malformed.
    func testASizeNearTheLargestIntegerIsRefused() throws {
        for type in [UInt8(ascii: "5"), UInt8(ascii: "0")] {
            var archive = try tar(format: "ustar", files: [("a", [1, 2, 3])])
            archive[156] = type
            archive.replaceSubrange(124..<136, with: [0x80, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
            Self.fixChecksum(&archive)
            XCTAssertEqual(failure(archive), .malformed("an entry of \(Int.max) bytes"), "type \(type)")
        }
    }

    // MARK: - Helpers

    private func read(_ archive: [UInt8], chunkSize: Int) throws -> (file: (name: String, size: Int)?, bytes: [UInt8]) {
        var reader = TarFileReader()
        var bytes: [UInt8] = []
        var offset = 0
        while offset < archive.count {
            let end = min(offset + chunkSize, archive.count)
            _ = try archive[offset..<end].withUnsafeBytes { chunk in
                try reader.consume(chunk) { part, _ in
                    bytes.append(contentsOf: part)
                    return true
                }
            }
            offset = end
        }
        try reader.finish()
        return (reader.file, bytes)
    }

    private func failure(_ archive: [UInt8]) -> TarFileReader.Failure? {
        do {
            _ = try read(archive, chunkSize: 1000)
            return nil
        } catch let failure as TarFileReader.Failure {
            return failure
        } catch {
            XCTFail("\(error)")
            return nil
        }
    }

    /// An archive of `files` written by GNU tar in `format`.
    private func tar(format: String, files: [(String, [UInt8])]) throws -> [UInt8] {
        let folder = directory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, content) in files { try Data(content).write(to: folder.appendingPathComponent(name)) }
        return try run(["tar", "--format=\(format)", "-cf", "-", "-C", folder.path] + files.map(\.0))
    }

    private func run(_ arguments: [String]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return [UInt8](data)
    }

    /// Rewrites the first header's checksum after a test changed the header.
    private static func fixChecksum(_ archive: inout [UInt8]) {
        archive.replaceSubrange(148..<156, with: [UInt8](repeating: 0x20, count: 8))
        let sum = archive[0..<512].reduce(0) { $0 + Int($1) }
        archive.replaceSubrange(148..<156, with: Array(String(format: "%06o", sum).utf8) + [0, 0x20])
    }
}

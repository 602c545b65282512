import CipherDB
import XCTest

@testable import CipherCLI

/// ``CipherDBTool/arguments(argc:argv:)``: whatever argc and argv the process was given.
final class ArgumentCollectionTests: XCTestCase {
    /// Calls `body` with a NULL-terminated C vector of `strings`.
    private func withVector<T>(_ strings: [[UInt8]], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { bytes in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (index, byte) in bytes.enumerated() { copy[index] = CChar(bitPattern: byte) }
            copy[bytes.count] = 0
            return copy
        }
        let vector = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: copies.count + 1)
        defer {
            for copy in copies { copy?.deallocate() }
            vector.deallocate()
        }
        for (index, copy) in copies.enumerated() { vector[index] = copy }
        vector[copies.count] = nil
        return body(vector)
    }

    func testNoArgumentsWhenArgcIsZero() {
        XCTAssertEqual(CipherDBTool.arguments(argc: 0, argv: nil), [])
        XCTAssertEqual(withVector([]) { CipherDBTool.arguments(argc: 0, argv: $0) }, [])
        XCTAssertEqual(CipherDBTool.arguments(argc: -1, argv: nil), [])
    }

    func testTheProgramNameIsLeftOut() {
        XCTAssertEqual(withVector([Array("cipherdb".utf8)]) { CipherDBTool.arguments(argc: 1, argv: $0) }, [])
        XCTAssertEqual(
            withVector([Array("cipherdb".utf8), Array("--version".utf8)]) { CipherDBTool.arguments(argc: 2, argv: $0) }, ["--version"])
    }

    /// An argc larger than the vector stops at its NULL; an argc without a vector is no arguments.
    func testAVectorShorterThanArgcEndsAtItsNull() {
        XCTAssertEqual(withVector([Array("cipherdb".utf8), Array("info".utf8)]) { CipherDBTool.arguments(argc: 5, argv: $0) }, ["info"])
        XCTAssertEqual(CipherDBTool.arguments(argc: 3, argv: nil), [])
    }

    /// A byte that is not UTF-8 is kept (as ``PathBytes`` spells it), not replaced by U+FFFD.
    func testBytesThatAreNotUTF8AreKept() {
        let name: [UInt8] = [0x63, 0x61, 0x66, 0xE9]
        let arguments = withVector([Array("cipherdb".utf8), name]) { CipherDBTool.arguments(argc: 2, argv: $0) }
        XCTAssertEqual(arguments, [PathBytes.string(fromBytes: name)])
    }

    /// The process's own arguments are found: this test process has some (at least none is lost).
    func testTheProcessArgumentsAreRead() {
        XCTAssertEqual(CipherDBTool.rawArguments().count, max(0, CommandLine.arguments.count - 1))
    }
}

import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// Custom SQL functions written in Swift.
final class FunctionTests: DatabaseTestCase {
    private struct Custom: Error, CustomStringConvertible {
        var description: String { "custom failure 42" }
    }

    func testFunctionsReturnEveryKindOfValue() throws {
        let db = try memoryDatabase()
        try db.createFunction("greet", argumentCount: 1) { args in
            guard case .text(let name) = args[0] else { throw FunctionError("greet needs text") }
            return "héllo, \(name) 👋"
        }
        try db.createFunction("half", argumentCount: 1) { args in
            guard case .integer(let value) = args[0] else { return nil }
            return Double(value) / 2
        }
        try db.createFunction("bytes", argumentCount: 1) { args in
            guard case .integer(let count) = args[0] else { return nil }
            return Data((0..<Int(count)).map { UInt8($0 % 3) })
        }
        try db.createFunction("twice", argumentCount: 1) { args in
            guard case .integer(let value) = args[0] else { return nil }
            return value * 2
        }
        try db.createFunction("null_result", argumentCount: 0) { _ in nil }
        try db.createFunction("empty_text", argumentCount: 0) { _ in "" }
        try db.createFunction("empty_blob", argumentCount: 0) { _ in Data() }

        XCTAssertEqual(try db.stringForQuery("SELECT greet('Ann')"), "héllo, Ann 👋")
        XCTAssertEqual(try db.doubleForQuery("SELECT half(5)"), 2.5)
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(half(5))"), "real")
        XCTAssertEqual(try db.dataForQuery("SELECT bytes(5)"), Data([0, 1, 2, 0, 1]))
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(bytes(5))"), "blob")
        XCTAssertEqual(try db.int64ForQuery("SELECT twice(?)", Int64(1) << 40), Int64(1) << 41)
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(null_result())"), "null")
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(empty_text()) || length(empty_text())"), "text0")
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(empty_blob()) || length(empty_blob())"), "blob0")
    }

    func testFunctionsReceiveEveryKindOfArgument() throws {
        let db = try memoryDatabase()
        let seen = TestBox<[DatabaseValue]>([])
        try db.createFunction("probe") { args in
            seen.value = args
            return args.count
        }
        XCTAssertEqual(try db.intForQuery("SELECT probe(1, 2.5, 'three', x'0004', NULL, ?, '')", Data()), 7)
        XCTAssertEqual(seen.value, [.integer(1), .real(2.5), .text("three"), .blob(Data([0, 4])), .null, .blob(Data()), .text("")])
        XCTAssertEqual(try db.intForQuery("SELECT probe()"), 0)
    }

    func testTheErrorMessageReachesTheCaller() throws {
        let db = try memoryDatabase()
        try db.createFunction("fail", argumentCount: 1) { args in
            throw FunctionError("cannot handle \(args[0])")
        }
        try db.createFunction("fail_custom", argumentCount: 0) { _ in throw Custom() }
        guard let error = captureError({ _ = try db.stringForQuery("SELECT fail(7)") }) else { return }
        XCTAssertEqual(error.kind, .sqlite)
        XCTAssertEqual(error.message, "cannot handle 7")
        XCTAssertEqual(error.sql, "SELECT fail(7)")
        guard let custom = captureError({ _ = try db.stringForQuery("SELECT fail_custom()") }) else { return }
        XCTAssertEqual(custom.message, "custom failure 42")
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    func testArgumentCountIsEnforced() throws {
        let db = try memoryDatabase()
        try db.createFunction("one_arg", argumentCount: 1) { args in args[0] }
        assertThrows(.sqlite) { try db.validateSQL("SELECT one_arg(1, 2)") }
        assertThrows(.sqlite) { _ = try db.intForQuery("SELECT one_arg()") }
        XCTAssertEqual(try db.intForQuery("SELECT one_arg(3)"), 3)
    }

    func testFilteringRowsWithAFunction() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE ftest(foo TEXT)")
        for text in ["hello", "hi", "not h!", "definitely not h!"] {
            try db.executeUpdate("INSERT INTO ftest VALUES (?)", text)
        }
        try db.createFunction("StringStartsWithH", argumentCount: 1, deterministic: true) { args in
            guard case .text(let text) = args[0] else { throw FunctionError("text expected") }
            return text.hasPrefix("h")
        }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM ftest WHERE StringStartsWithH(foo)"), 2)
    }

    func testDeterministicFlagAllowsIndexesOnExpressions() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(x)")
        try db.createFunction("stable", argumentCount: 1, deterministic: true) { args in args[0] }
        try db.createFunction("unstable", argumentCount: 1) { args in args[0] }
        try db.executeUpdate("CREATE INDEX t_stable ON t(stable(x))")
        assertThrows(.sqlite) { try db.executeUpdate("CREATE INDEX t_unstable ON t(unstable(x))") }
    }

    func testReplacingAndRemovingAFunction() throws {
        let db = try memoryDatabase()
        try db.createFunction("version_of", argumentCount: 0) { _ in 1 }
        XCTAssertEqual(try db.intForQuery("SELECT version_of()"), 1)
        try db.createFunction("version_of", argumentCount: 0) { _ in 2 }
        XCTAssertEqual(try db.intForQuery("SELECT version_of()"), 2)
        try db.removeFunction("version_of", argumentCount: 0)
        guard let error = captureError({ _ = try db.intForQuery("SELECT version_of()") }) else { return }
        XCTAssertTrue(error.message.contains("no such function"), error.message)
    }

    func testFunctionsNeedAnOpenDatabase() {
        let db = Database(path: nil)
        assertThrows(.misuse) { try db.createFunction("f") { _ in nil } }
    }

    func testAFunctionChoosesTheResultCodeItsStatementFailsWith() throws {
        let db = try memoryDatabase()
        try db.createFunction("guarded", argumentCount: 1) { arguments in
            guard case .text(let text) = arguments[0] else { throw FunctionError("text only", resultCode: SQLITE_MISMATCH) }
            guard text.utf8.count <= 8 else { throw FunctionError("longer than 8 bytes", resultCode: SQLITE_TOOBIG) }
            guard text != "dup" else { throw FunctionError("duplicate", resultCode: SQLITE_CONSTRAINT) }
            return text.uppercased()
        }
        XCTAssertEqual(try db.stringForQuery("SELECT guarded('ok')"), "OK")
        for (argument, code) in [("'far too long text'", SQLITE_TOOBIG), ("42", SQLITE_MISMATCH), ("'dup'", SQLITE_CONSTRAINT)] {
            do {
                _ = try db.stringForQuery("SELECT guarded(\(argument))")
                XCTFail("\(argument) must fail")
            } catch {
                XCTAssertEqual(error.resultCode, code, "\(error)")
            }
        }
        do {
            _ = try db.stringForQuery("SELECT guarded('dup')")
        } catch {
            XCTAssertEqual(error.kind, .constraint)
            XCTAssertTrue(error.message.contains("duplicate"), error.message)
        }
    }
}

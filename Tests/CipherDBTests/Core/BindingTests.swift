import CSQLCipher
import CipherDB
import Foundation
import XCTest

/// Binding arguments: every bindable type round-trips; mismatched arguments throw.
final class BindingTests: DatabaseTestCase {
    private func tableDatabase() throws -> Database {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE t(a, b)")
        return db
    }

    func testNilAndNullStoreNull() throws {
        let db = try tableDatabase()
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", nil, 5)
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", DatabaseValue.null, 6)
        let none: Int? = nil
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", none, 7)
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (:a, :b)", ["a": nil, "b": 8])
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", arguments: [nil, 9])
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE typeof(a) = 'null'"), 5)
        let rs = try db.executeQuery("SELECT a, b FROM t ORDER BY b")
        while try rs.next() {
            XCTAssertNil(rs.string(at: 0))
            XCTAssertTrue(rs.isNull(at: 0))
            XCTAssertNotNil(rs.string(at: 1))
        }
    }

    func testEmptyBlobStaysAZeroLengthBlob() throws {
        let db = try tableDatabase()
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, 'data')", Data())
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, 'bytes')", [UInt8]())
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, 'value')", DatabaseValue.blob(Data()))
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, 'text')", "")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE typeof(a) = 'blob' AND length(a) = 0"), 3)
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(a) FROM t WHERE b = 'text'"), "text")
        XCTAssertEqual(try db.dataForQuery("SELECT a FROM t WHERE b = 'data'"), Data())
        XCTAssertEqual(try db.boolForQuery("SELECT ? NOT NULL", Data()), true)
        XCTAssertEqual(try db.boolForQuery("SELECT ? NOT NULL", ""), true)
    }

    func testIntegerExtremesRoundTrip() throws {
        let db = try tableDatabase()
        let values: [(Bindable, Int64)] = [
            (Int64.max, Int64.max), (Int64.min, Int64.min), (UInt32.max, Int64(UInt32.max)),
            (Int32.min, Int64(Int32.min)), (Int32.max, Int64(Int32.max)), (Int.max, Int64(Int.max)),
            (Int16.min, Int64(Int16.min)), (Int8.min, Int64(Int8.min)), (UInt16.max, Int64(UInt16.max)),
            (UInt8.max, Int64(UInt8.max)), (0, 0), (-1, -1),
        ]
        for (index, (value, expected)) in values.enumerated() {
            try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", value, index)
            XCTAssertEqual(try db.int64ForQuery("SELECT a FROM t WHERE b = ?", index), expected)
            XCTAssertEqual(try db.stringForQuery("SELECT typeof(a) FROM t WHERE b = ?", index), "integer")
        }
        XCTAssertEqual(try db.int64ForQuery("SELECT ?", Int64.max), Int64.max)
        XCTAssertEqual(try db.intForQuery("SELECT ?", Int.min), Int.min)
        // The FMDB-style getter truncates as sqlite3_column_int does; a typed read does not.
        XCTAssertEqual(try db.scalar(Int32.self, "SELECT ?", arguments: [UInt32.max]), nil, "does not fit: not truncated")
        let rows = try db.executeQuery("SELECT ?", UInt32.max)
        XCTAssertTrue(try rows.next())
        XCTAssertEqual(rows.int32(at: 0), -1, "int32(at:) truncates as sqlite3_column_int does")
        rows.close()
        XCTAssertEqual(try db.scalar(Int64.self, "SELECT ?", arguments: [UInt32.max]), 4_294_967_295)
    }

    func testDoubleExtremesRoundTrip() throws {
        let db = try memoryDatabase()
        let values: [Double] = [
            .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude,
            .infinity, -.infinity, 0, .pi, -1.5, 1e-300, 123_456_789.123_456_789,
        ]
        for value in values {
            XCTAssertEqual(try db.doubleForQuery("SELECT ?", value), value)
            XCTAssertEqual(try db.stringForQuery("SELECT typeof(?)", value), "real")
        }
        let float: Float = 2.2
        XCTAssertEqual(try db.doubleForQuery("SELECT ?", float), Double(float))
        XCTAssertEqual(try db.doubleForQuery("SELECT ?", DatabaseValue.real(-0.25)), -0.25)
    }

    func testBoolStoresOneAndZero() throws {
        let db = try tableDatabase()
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", true, false)
        let rs = try db.executeQuery("SELECT a, b, typeof(a) FROM t")
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.int(at: 0), 1)
        XCTAssertEqual(rs.int(at: 1), 0)
        XCTAssertEqual(rs.bool(at: 0), true)
        XCTAssertEqual(rs.bool(at: 1), false)
        XCTAssertEqual(rs.string(at: 2), "integer")
        rs.close()
        XCTAssertEqual(try db.boolForQuery("SELECT ?", 12), true, "non-zero reads as true")
    }

    func testAllOfUnicodeRoundTrips() throws {
        let db = try tableDatabase()
        var scalars = String.UnicodeScalarView()
        for value in UInt32(0)...0x10FFFF {
            if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
        }
        let everything = String(scalars)
        let samples = [
            everything, "/übertest", "hi'", "\u{0}leading and trailing\u{0}", "e\u{301}", "\u{e9}",
            "👩‍👩‍👧‍👦🏳️‍🌈", "עברית", "中文字符", "\u{FEFF}bom", "",
        ]
        for (index, sample) in samples.enumerated() {
            try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", sample, index)
        }
        for (index, sample) in samples.enumerated() {
            let stored = try XCTUnwrap(db.stringForQuery("SELECT a FROM t WHERE b = ?", index))
            // Compare bytes: Swift's String equality would call "e\u{301}" and "\u{e9}" equal.
            XCTAssertEqual(Array(stored.utf8), Array(sample.utf8), "sample \(index)")
            XCTAssertEqual(try db.intForQuery("SELECT length(CAST(a AS BLOB)) FROM t WHERE b = ?", index), sample.utf8.count)
            XCTAssertEqual(try db.intForQuery("SELECT b FROM t WHERE a = ?", sample), index, "binding in a comparison, sample \(index)")
        }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE a = ?", "e\u{301}"), 1, "no normalization")
        XCTAssertEqual(try db.stringForQuery("SELECT ?", Substring("a substring")), "a substring")
    }

    func testBlobsWithZeroBytesRoundTrip() throws {
        let db = try tableDatabase()
        let bytes: [UInt8] = [0, 1, 0, 255, 0, 0]
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, 1)", Data(bytes))
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, 2)", bytes)
        let large = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, 3)", large)
        XCTAssertEqual(try db.dataForQuery("SELECT a FROM t WHERE b = 1"), Data(bytes))
        XCTAssertEqual(try db.dataForQuery("SELECT a FROM t WHERE b = 2"), Data(bytes))
        XCTAssertEqual(try db.intForQuery("SELECT length(a) FROM t WHERE b = 2"), 6)
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(a) FROM t WHERE b = 2"), "blob")
        XCTAssertEqual(try db.dataForQuery("SELECT a FROM t WHERE b = 3"), large)
        XCTAssertEqual(try db.intForQuery("SELECT b FROM t WHERE a = ?", Data(bytes)), 1)
    }

    func testBoundBuffersAreCopied() throws {
        let db = try memoryDatabase()
        let expectedData = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0) })
        let expectedText = String(repeating: "secret-text-", count: 300)
        var rs: ResultSet
        do {
            // Values built at run time, gone once executeQuery returns.
            let data = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0) })
            let text = (0..<300).map { _ in "secret-text-" }.joined()
            rs = try db.executeQuery("SELECT ?, ?", data, text)
        }
        // Reuse the freed memory before the statement runs.
        var noise: [Data] = []
        for _ in 0..<64 { noise.append(Data(repeating: 0xAA, count: 4096)) }
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.data(at: 0), expectedData)
        XCTAssertEqual(rs.string(at: 1), expectedText)
        rs.close()
        XCTAssertEqual(noise.count, 64)
    }

    func testTooFewOrTooManyArgumentsThrow() throws {
        let db = try tableDatabase()
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", 1) }
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", 1, 2, 3) }
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t(a, b) VALUES (1, 2)", 3) }
        assertThrows(.invalidArguments) { _ = try db.executeQuery("SELECT * FROM t WHERE a = ?", arguments: []) }
        assertThrows(.invalidArguments) { _ = try db.intForQuery("SELECT ?") }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 0, "nothing ran with a NULL in place of a missing value")
        XCTAssertEqual(db.openResultSetCount, 0)
        // The statements that refused their arguments still work.
        try db.executeUpdate("INSERT INTO t(a, b) VALUES (?, ?)", 1, 2)
        let rs = try db.executeQuery("SELECT * FROM t WHERE a = ?", arguments: [1])
        XCTAssertTrue(try rs.next())
        rs.close()
    }

    func testArgumentsOfKnownTypesBindAsTheirExistentialsDo() throws {
        // Concrete types take the generic form; a bare nil or an `any Bindable` the variadic one.
        let db = try memoryDatabase()
        db.dateFormatter = utcDateFormatter()
        try db.executeUpdate("CREATE TABLE t(i, s, d, od, oi, b)")
        let date = Date(timeIntervalSince1970: 1_361_361_600)
        let optionalDate: Date? = date
        let missing: Int? = nil
        try db.executeUpdate("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", 7, "seven", date, optionalDate, missing, Data([7]))
        let anyValues: [Bindable] = [7, "seven", date, date]
        try db.executeUpdate(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", anyValues[0], anyValues[1], anyValues[2], anyValues[3], nil, Data([7]))
        let rows = try db.executeQuery(
            "SELECT i, s, d, od, oi, hex(b), typeof(d), typeof(od), typeof(oi) FROM t WHERE i = ? AND s = ?", 7, "seven")
        var seen: [[String?]] = []
        while try rows.next() { seen.append((0..<9).map { rows.string(at: $0) }) }
        let expected: [String?] = ["7", "seven", "2013-02-20 12:00:00", "2013-02-20 12:00:00", nil, "07", "text", "text", "null"]
        XCTAssertEqual(seen, [expected, expected])
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t(i) VALUES (?)", 1, "two") }
        assertThrows(.invalidArguments) { _ = try db.executeQuery("SELECT ?, ?", 1) }
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    /// The scalar one-liners bind arguments of known types without an array of existentials and
    /// read as their `Bindable?...` forms do: values, NULL and no row as `nil`, a date through the
    /// formatter, a wrong count or bad SQL as an error, no statement left in use.
    func testScalarOneLinersWithArgumentsOfKnownTypesReadAsTheVariadicFormsDo() throws {
        let db = try memoryDatabase()
        db.dateFormatter = utcDateFormatter()
        let date = Date(timeIntervalSince1970: 1_361_361_600)
        try db.executeUpdate("CREATE TABLE t(id INTEGER PRIMARY KEY, i, r, s, b, d, n)")
        try db.executeUpdate("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)", 1, 42, 2.5, "forty-two", Data([4, 2]), date, nil)
        let id = 1
        let key = "forty-two"
        XCTAssertEqual(try db.intForQuery("SELECT i FROM t WHERE id = ?", id), 42)
        XCTAssertEqual(try db.int64ForQuery("SELECT i FROM t WHERE id = ? AND s = ?", id, key), 42)
        XCTAssertEqual(try db.doubleForQuery("SELECT r FROM t WHERE id = ?", id), 2.5)
        XCTAssertEqual(try db.boolForQuery("SELECT i > ? FROM t WHERE id = ?", 40, id), true)
        XCTAssertEqual(try db.stringForQuery("SELECT s FROM t WHERE id = ?", id), "forty-two")
        XCTAssertEqual(try db.dataForQuery("SELECT b FROM t WHERE id = ?", id), Data([4, 2]))
        XCTAssertEqual(try db.dateForQuery("SELECT d FROM t WHERE id = ?", id), date)
        XCTAssertEqual(try db.stringForQuery("SELECT typeof(d) FROM t WHERE id = ?", id), "text", "the date bound through the formatter")
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE d = ?", date), 1, "a date argument bound through the formatter")
        XCTAssertEqual(try db.int64ForQuery("SELECT id FROM t WHERE d = ? AND i = ?", date, 42), 1)
        // NULL and no row are nil, whichever form binds.
        XCTAssertNil(try db.stringForQuery("SELECT n FROM t WHERE id = ?", id))
        XCTAssertNil(try db.intForQuery("SELECT i FROM t WHERE id = ?", 2))
        XCTAssertNil(try db.dataForQuery("SELECT b FROM t WHERE s = ?", "none"))
        let boxed: Bindable? = 1
        XCTAssertEqual(try db.stringForQuery("SELECT s FROM t WHERE id = ?", boxed), "forty-two", "the variadic form, as before")
        assertThrows(.invalidArguments) { _ = try db.intForQuery("SELECT i FROM t WHERE id = ?", 1, 2) }
        assertThrows(.invalidArguments) { _ = try db.stringForQuery("SELECT ?, ?", "one") }
        XCTAssertThrowsError(try db.int64ForQuery("SELECT nothing FROM t WHERE id = ?", id))
        XCTAssertEqual(db.openResultSetCount, 0)
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t WHERE id >= ?", id), 1, "the statements are usable again")
    }

    /// One to eight arguments take overloads of fixed arity, nine the parameter pack: each binds
    /// as the array of `Bindable?` does, and refuses a count that does not match.
    func testEveryArityBindsAsTheArrayFormDoes() throws {
        let db = try memoryDatabase()
        db.dateFormatter = utcDateFormatter()
        try db.executeUpdate("CREATE TABLE t(n, a, b, c, d, e, f, g, h, i)")
        let date = Date(timeIntervalSince1970: 1_361_361_600)
        let missing: String? = nil
        let optionalDate: Date? = date
        let values: [Bindable?] = [date, "s", Data([3]), missing, 2.5, Int64(6), optionalDate, true, UInt8(9)]
        let columns = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
        func insert(_ n: Int) -> String {
            "INSERT INTO t(n, \(columns.prefix(n).joined(separator: ", "))) VALUES (\(n), "
                + Array(repeating: "?", count: n).joined(separator: ", ") + ")"
        }
        try db.executeUpdate(insert(1), date)
        try db.executeUpdate(insert(2), date, "s")
        try db.executeUpdate(insert(3), date, "s", Data([3]))
        try db.executeUpdate(insert(4), date, "s", Data([3]), missing)
        try db.executeUpdate(insert(5), date, "s", Data([3]), missing, 2.5)
        try db.executeUpdate(insert(6), date, "s", Data([3]), missing, 2.5, Int64(6))
        try db.executeUpdate(insert(7), date, "s", Data([3]), missing, 2.5, Int64(6), optionalDate)
        try db.executeUpdate(insert(8), date, "s", Data([3]), missing, 2.5, Int64(6), optionalDate, true)
        try db.executeUpdate(insert(9), date, "s", Data([3]), missing, 2.5, Int64(6), optionalDate, true, UInt8(9))
        let typed = try rows(db)
        try db.executeUpdate("DELETE FROM t")
        for n in 1...9 { try db.executeUpdate(insert(n), arguments: .positional(Array(values.prefix(n)))) }
        XCTAssertEqual(try rows(db), typed)
        XCTAssertEqual(
            typed.last, ["9", "2013-02-20 12:00:00", "s", "03", nil, "2.5", "6", "2013-02-20 12:00:00", "1", "9", "text"])

        assertThrows(.invalidArguments) { try db.executeUpdate("SELECT ?, ?", 1) }
        assertThrows(.invalidArguments) { try db.executeUpdate("SELECT ?", 1, 2) }
        assertThrows(.invalidArguments) { try db.executeUpdate("SELECT ?, ?", 1, 2, 3) }
        assertThrows(.invalidArguments) { try db.executeUpdate("SELECT ?, ?, ?, ?, ?", 1, 2, 3, 4) }
        assertThrows(.invalidArguments) { try db.executeUpdate("SELECT ?, ?, ?, ?", 1, 2, 3, 4, 5) }
        assertThrows(.invalidArguments) { try db.executeUpdate("SELECT ?, ?, ?, ?, ?, ?, ?", 1, 2, 3, 4, 5, 6) }
        assertThrows(.invalidArguments) { try db.executeUpdate("SELECT ?, ?, ?, ?, ?, ?", 1, 2, 3, 4, 5, 6, 7) }
        assertThrows(.invalidArguments) { try db.executeUpdate("SELECT ?, ?, ?, ?, ?, ?, ?", 1, 2, 3, 4, 5, 6, 7, 8) }
        assertThrows(.invalidArguments) { try db.executeUpdate("SELECT ?, ?, ?, ?, ?, ?, ?, ?", 1, 2, 3, 4, 5, 6, 7, 8, 9) }
        // The statements went back to the cache unbound: the same SQL runs again.
        try db.executeUpdate("SELECT ?, ?", 1, 2)
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    /// Every row of t as text, with the type of g.
    private func rows(_ db: Database) throws -> [[String?]] {
        let rows = try db.executeQuery("SELECT n, a, b, hex(c), d, e, f, g, h, i, typeof(g) FROM t ORDER BY n")
        var seen: [[String?]] = []
        while try rows.next() { seen.append((0..<11).map { rows.string(at: $0) }) }
        return seen
    }

    func testNamedArgumentsWithEveryPrefix() throws {
        let db = try memoryDatabase()
        try db.executeUpdate("CREATE TABLE n(a TEXT, b TEXT, c INTEGER, d REAL)")
        try db.executeUpdate("INSERT INTO n VALUES (:a, @b, $c, :d)", ["a": "Text1", "b": "Text2", "c": 1, "d": 2.0])
        try db.executeUpdate("INSERT INTO n VALUES (:a, @b, $c, :d)", [":a": "Text3", "@b": "Text4", "$c": 3, ":d": 4.0])
        try db.executeUpdate("INSERT INTO n VALUES (:a, :a, :c, :c)", arguments: ["a": "same", "c": 5])
        let rs = try db.executeQuery("SELECT * FROM n ORDER BY c")
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.string("a"), "Text1")
        XCTAssertEqual(rs.string("b"), "Text2")
        XCTAssertEqual(rs.int("c"), 1)
        XCTAssertEqual(rs.double("d"), 2.0)
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.string("a"), "Text3")
        XCTAssertEqual(rs.string("b"), "Text4")
        XCTAssertEqual(rs.int("c"), 3)
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.string("b"), "same")
        XCTAssertEqual(rs.double("d"), 5)
        XCTAssertFalse(try rs.next())

        let query = try db.executeQuery("SELECT * FROM n WHERE b = :blah", ["blah": "Text2"])
        XCTAssertTrue(try query.next())
        XCTAssertEqual(query.string("b"), "Text2")
        query.close()
        XCTAssertEqual(try db.scalar(String.self, "SELECT a FROM n WHERE c = @c", arguments: ["c": 3]), "Text3")
    }

    /// SQLite reads SQL as a C string: the text after a NUL byte was dropped without an error,
    /// a second statement after it included.
    func testSQLWithANULByteIsRefused() throws {
        let db = try tableDatabase()
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t VALUES (1, 2)\u{0}; DROP TABLE t") }
        assertThrows(.invalidArguments) { _ = try db.intForQuery("SELECT 1\u{0} + 41") }
        assertThrows(.invalidArguments) { try db.executeStatements("INSERT INTO t VALUES (1, 2);\u{0} DROP TABLE t;") }
        assertThrows(.invalidArguments) { try db.validateSQL("SELECT 1\u{0}") }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 0)
    }

    /// The checked getter truncated: 3,000,000,000 read as an `Int32` was -1,294,967,296.
    func testATypedInt32ReadOfAValueThatDoesNotFitIsAMismatch() throws {
        let db = try tableDatabase()
        let rows = try db.executeQuery("SELECT 3000000000, 7")
        XCTAssertTrue(try rows.next())
        XCTAssertThrowsError(try rows.get(at: 0, as: Int32.self))
        XCTAssertEqual(try rows.get(at: 1, as: Int32.self), 7)
        rows.close()
    }

    func testUnknownOrMissingNamesThrow() throws {
        let db = try tableDatabase()
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t VALUES (:a, :b)", ["a": 1]) }
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t VALUES (:a, :b)", ["a": 1, "b": 2, "c": 3]) }
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t VALUES (:a, :b)", ["a": 1, "x": 2]) }
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t VALUES (1, 2)", ["a": 1]) }
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t VALUES (?, :b)", ["b": 1]) }
        assertThrows(.invalidArguments) { _ = try db.executeQuery("SELECT * FROM t WHERE a = :a", ["b": 1]) }
        // A wrong name was ignored when the counts matched: `:a` and `$a` are two parameters of
        // one name, and `a` and `:a` two keys for one parameter.
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t VALUES (:a, $a)", ["a": 1, "zz": 2]) }
        assertThrows(.invalidArguments) { try db.executeUpdate("INSERT INTO t VALUES (:a, 0)", ["a": 1, ":a": 2]) }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 0)
        XCTAssertEqual(db.openResultSetCount, 0)
    }

    func testPositionalArgumentsFillNamedParametersInOrder() throws {
        let db = try tableDatabase()
        try db.executeUpdate("INSERT INTO t VALUES (:first, @second)", "one", 2)
        XCTAssertEqual(try db.stringForQuery("SELECT a FROM t WHERE b = ?", 2), "one")
        try db.executeUpdate("INSERT INTO t VALUES (?2, ?1)", 3, "three")
        XCTAssertEqual(try db.stringForQuery("SELECT a FROM t WHERE b = 3"), "three")
    }

    func testArgumentsInArrays() throws {
        let db = try tableDatabase()
        try db.executeUpdate("INSERT INTO t VALUES (?, ?)", arguments: ["one", 2])
        try db.executeUpdate("INSERT INTO t VALUES (?, ?)", arguments: .positional(["one", 3]))
        let rs = try db.executeQuery("SELECT * FROM t WHERE b > ? ORDER BY b", arguments: [1])
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.string(at: 0), "one")
        XCTAssertEqual(rs.int(at: 1), 2)
        XCTAssertTrue(try rs.next())
        XCTAssertEqual(rs.int(at: 1), 3)
        XCTAssertFalse(try rs.next())
    }

    func testStatementsAreRebound() throws {
        let db = try tableDatabase()
        for value in 0..<50 {
            try db.executeUpdate("INSERT INTO t VALUES (?, ?)", value, "v\(value)")
        }
        for value in stride(from: 49, through: 0, by: -7) {
            XCTAssertEqual(try db.stringForQuery("SELECT b FROM t WHERE a = ?", value), "v\(value)")
        }
        XCTAssertEqual(try db.intForQuery("SELECT count(*) FROM t"), 50)
    }

    func testCustomBindableType() throws {
        struct Celsius: Bindable {
            var degrees: Double
            var databaseValue: DatabaseValue { .real(degrees) }
        }
        let db = try memoryDatabase()
        XCTAssertEqual(try db.doubleForQuery("SELECT ? + 1", Celsius(degrees: 20.5)), 21.5)
        let some: Celsius? = Celsius(degrees: 1)
        XCTAssertEqual(try db.doubleForQuery("SELECT ?", some), 1)
    }
}

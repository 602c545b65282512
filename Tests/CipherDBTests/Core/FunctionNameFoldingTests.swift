import CipherDB
import Foundation
import XCTest

/// SQLite folds only ASCII letters in function names, so `Ä` and `ä` are two functions to it; the
/// closure of one must stay alive when the other is registered. Guards a use-after-free found in
/// review (closures were keyed by a fully folded name).
final class FunctionNameFoldingTests: DatabaseTestCase {
    private final class Marker {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    func testNamesDifferingOnlyInNonASCIICaseKeepBothClosures() throws {
        let db = try memoryDatabase()
        defer { db.close() }
        weak var firstMarker: Marker?
        do {
            let marker = Marker(1)
            firstMarker = marker
            try db.createFunction("Äfn", argumentCount: 0) { _ in marker.value }
        }
        let second = Marker(2)
        try db.createFunction("äfn", argumentCount: 0) { _ in second.value }
        XCTAssertNotNil(firstMarker, "the closure SQLite still calls for Äfn was released")
        XCTAssertEqual(try db.intForQuery("SELECT \"Äfn\"()"), 1)
        XCTAssertEqual(try db.intForQuery("SELECT \"äfn\"()"), 2)
        // ASCII case is folded by SQLite: registering AFN replaces afn, as before.
        try db.createFunction("afn", argumentCount: 0) { _ in 3 }
        try db.createFunction("AFN", argumentCount: 0) { _ in 4 }
        XCTAssertEqual(try db.intForQuery("SELECT afn()"), 4)
    }
}

import Foundation
import XCTest

@testable import CipherSnapshots

/// The retention rules as restic's `forget` reads them, applied by CipherDB to each database on
/// its own: the last N, and the latest snapshot of each of the last N days, weeks, months.
final class RetentionPolicyTests: XCTestCase {
    private var calendar: Calendar {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        return calendar
    }

    private func snapshot(_ id: String, _ text: String) throws -> Snapshot {
        let date = try XCTUnwrap(ISO8601DateFormatter().date(from: text))
        return Snapshot(id: id, shortID: id, time: date, hostname: "h", paths: ["/app.db"], tags: [], manifest: nil)
    }

    func testEachRuleKeepsTheLatestOfItsPeriodsAndAnyRuleKeeps() throws {
        let snapshots = [
            try snapshot("mon-a", "2026-11-02T08:00:00Z"), try snapshot("mon-b", "2026-11-02T20:00:00Z"),
            try snapshot("tue", "2026-11-03T09:00:00Z"), try snapshot("next-week", "2026-11-10T09:00:00Z"),
            try snapshot("next-month", "2026-12-01T09:00:00Z"),
        ]
        XCTAssertEqual(RetentionPolicy(keepLast: 2).kept(snapshots, calendar: calendar), ["next-month", "next-week"])
        XCTAssertEqual(RetentionPolicy(keepDaily: 3).kept(snapshots, calendar: calendar), ["next-month", "next-week", "tue"])
        XCTAssertEqual(RetentionPolicy(keepDaily: 4).kept(snapshots, calendar: calendar), ["next-month", "next-week", "tue", "mon-b"])
        XCTAssertEqual(RetentionPolicy(keepWeekly: 3).kept(snapshots, calendar: calendar), ["next-month", "next-week", "tue"])
        XCTAssertEqual(RetentionPolicy(keepMonthly: 2).kept(snapshots, calendar: calendar), ["next-month", "next-week"])
        XCTAssertEqual(
            RetentionPolicy(keepLast: 1, keepMonthly: 2).kept(snapshots, calendar: calendar), ["next-month", "next-week"],
            "a snapshot two rules keep counts once")
        XCTAssertEqual(RetentionPolicy(keepDaily: 10).kept(snapshots, calendar: calendar).count, 4, "one a day")
    }
}

import Foundation

/// One snapshot in a restic repository, as `restic snapshots` lists it, with CipherDB's manifest.
public struct Snapshot: Sendable, Equatable {
    /// restic's full snapshot id (64 hex digits).
    public let id: String
    /// The first 8 hex digits, as restic prints them.
    public let shortID: String
    /// When it was taken.
    public let time: Date
    /// The host restic ran on.
    public let hostname: String
    /// The paths restic recorded (`/NAME` for a database snapshot).
    public let paths: [String]
    /// restic's tags, the manifest's tag left out.
    public let tags: [String]
    /// CipherDB's manifest; `nil` for a snapshot made by something else.
    public let manifest: SnapshotManifest?

    /// The file name inside the snapshot (what `restic dump` reads).
    var fileInSnapshot: String? { paths.first }

    /// Which database the snapshot is of, for retention, as far as it tells: the file's identity
    /// (its salt: a rekey starts a new count), else its origin (a plaintext file), else the
    /// snapshot itself (an older snapshot of a plaintext file, or one made by something else,
    /// stands alone). Names do not tell: two databases in two folders may share one.
    var databaseIdentity: String {
        guard let manifest else { return "snapshot " + id }
        if !manifest.fileIdentity.isEmpty { return manifest.fileIdentity }
        return manifest.origin ?? "snapshot " + id
    }
}

/// What `restic snapshots --json` prints for each snapshot.
struct ResticSnapshotRecord: Decodable {
    let id: String
    let shortID: String?
    let time: String
    let hostname: String?
    let paths: [String]?
    let tags: [String]?

    enum CodingKeys: String, CodingKey {
        case id, time, hostname, paths, tags
        case shortID = "short_id"
    }

    var snapshot: Snapshot {
        let tags = tags ?? []
        return Snapshot(
            id: id, shortID: shortID ?? String(id.prefix(8)), time: Self.parseTime(time), hostname: hostname ?? "",
            paths: paths ?? [], tags: tags.filter { !$0.hasPrefix(SnapshotManifest.tagPrefix) },
            manifest: SnapshotManifest.from(tags: tags))
    }

    /// restic's RFC 3339 time with nanoseconds.
    static func parseTime(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        // More than millisecond digits: ISO8601DateFormatter takes at most a few.
        if let dot = text.firstIndex(of: "."), let zone = text[dot...].firstIndex(where: { $0 == "Z" || $0 == "+" || $0 == "-" }) {
            let trimmed =
                String(text[..<dot]) + String(text[dot..<text.index(dot, offsetBy: min(4, text.distance(from: dot, to: zone)))])
                + String(text[zone...])
            if let date = formatter.date(from: trimmed) { return date }
        }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text) ?? Date(timeIntervalSince1970: 0)
    }
}

/// Which snapshots `forget` keeps: restic's retention rules (each a count; at least one).
public struct RetentionPolicy: Sendable, Equatable {
    /// Keep the last N snapshots.
    public var keepLast: Int?
    /// Keep the last snapshot of each of the last N days that have one.
    public var keepDaily: Int?
    /// Keep the last snapshot of each of the last N weeks that have one.
    public var keepWeekly: Int?
    /// Keep the last snapshot of each of the last N months that have one.
    public var keepMonthly: Int?

    /// A policy; give at least one count.
    ///
    /// - Parameters:
    ///   - keepLast: keep the last N snapshots.
    ///   - keepDaily: keep one snapshot for each of the last N days.
    ///   - keepWeekly: keep one snapshot for each of the last N weeks.
    ///   - keepMonthly: keep one snapshot for each of the last N months.
    public init(keepLast: Int? = nil, keepDaily: Int? = nil, keepWeekly: Int? = nil, keepMonthly: Int? = nil) {
        self.keepLast = keepLast
        self.keepDaily = keepDaily
        self.keepWeekly = keepWeekly
        self.keepMonthly = keepMonthly
    }

    /// Whether the policy has a rule.
    var hasRule: Bool { [keepLast, keepDaily, keepWeekly, keepMonthly].contains { $0 != nil } }

    /// Whether every rule keeps at least one snapshot: a count of 0 keeps none, and a policy of
    /// zeros would delete every snapshot (restic takes 0 for no rule; here it is refused).
    var keepsSomething: Bool { [keepLast, keepDaily, keepWeekly, keepMonthly].allSatisfy { ($0 ?? 1) >= 1 } }

    /// The snapshots of one database the policy keeps, as restic's `forget` decides: the last
    /// N; for each of the last N days (weeks, months) that have snapshots, the latest of it (in
    /// this machine's time zone). A snapshot any rule keeps is kept.
    func kept(_ snapshots: [Snapshot], calendar: Calendar = .current) -> Set<String> {
        let newestFirst = snapshots.sorted { $0.time > $1.time }
        var kept = Set(newestFirst.prefix(keepLast ?? 0).map(\.id))
        let buckets: [(Int?, (Date) -> DateComponents)] = [
            (keepDaily, { calendar.dateComponents([.year, .month, .day], from: $0) }),
            (keepWeekly, { calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: $0) }),
            (keepMonthly, { calendar.dateComponents([.year, .month], from: $0) }),
        ]
        for case (let count?, let bucket) in buckets {
            var left = count
            var last: DateComponents?
            for snapshot in newestFirst where left > 0 {
                let current = bucket(snapshot.time)
                guard current != last else { continue }
                kept.insert(snapshot.id)
                last = current
                left -= 1
            }
        }
        return kept
    }
}

/// What ``SnapshotRepository/create(from:key:settings:keyReference:tags:allowingPlaintext:progress:)`` made.
public struct CreatedSnapshot: Sendable, Equatable {
    /// The snapshot (its manifest included).
    public let snapshot: Snapshot
    /// Bytes restic added to the repository for it (new chunks after deduplication and
    /// compression, before encryption overhead): what a 1-row change costs.
    public let bytesAdded: Int
}

/// What ``SnapshotRepository/drill(_:scratchFolder:openingWith:)`` found.
public struct DrillReport: Sendable, Equatable {
    /// One table whose rows differ from the manifest's count.
    public struct Difference: Sendable, Equatable {
        /// The table.
        public let table: String
        /// Rows the manifest recorded; `nil` for a table the manifest does not list.
        public let expected: Int?
        /// Rows in the restored copy; `nil` for a table missing from it.
        public let found: Int?
    }

    /// The snapshot drilled.
    public let snapshot: Snapshot
    /// Pages whose HMAC failed in the restored copy (page numbers; empty for a plaintext copy).
    public let badPages: [Int]
    /// `PRAGMA integrity_check`'s lines (`["ok"]` when sound).
    public let integrityCheck: [String]
    /// Tables whose row counts differ from the manifest's.
    public let differences: [Difference]

    /// Whether the restore is sound: every page, integrity_check and every count.
    public var isSound: Bool { badPages.isEmpty && integrityCheck == ["ok"] && differences.isEmpty }
}

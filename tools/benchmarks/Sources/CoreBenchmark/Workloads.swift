// The table `run.py` prints and `--list` gives: each row a subject side's cost over a baseline
// side's (the sides are defined in main.swift).

/// One row of the table: the subject side's cost over the baseline side's.
struct Workload {
    let group: String
    let name: String
    let baselineName: String
    /// The goal from issue 23 or 24 (or issue 10 for the older rows); `nil`: no goal, reported.
    let goal: Double?
    let baseline: String
    let subject: String
}

let workloads: [Workload] = [
    Workload(
        group: "insert", name: "insert of 5 values, executeUpdate", baselineName: "C", goal: 1.10,
        baseline: "c.insert5", subject: "cipher.insert5"),
    Workload(
        group: "insert", name: "insert of 5 values, PreparedStatement", baselineName: "C", goal: 1.10,
        baseline: "c.insert5", subject: "cipher.insert5.prepared"),
    Workload(
        group: "insert", name: "insert of 8 values, executeUpdate", baselineName: "C", goal: 1.10,
        baseline: "c.insert8", subject: "cipher.insert8"),
    Workload(
        group: "scan", name: "scan, columns by index", baselineName: "C copying", goal: 1.15,
        baseline: "c.scan", subject: "cipher.scan.index"),
    Workload(
        group: "scan", name: "scan, columns by name", baselineName: "C copying", goal: 1.30,
        baseline: "c.scan", subject: "cipher.scan.name"),
    Workload(
        group: "lookups", name: "lookups, cached pages, executeQuery", baselineName: "C copying", goal: 1.15,
        baseline: "c.lookups.cached", subject: "cipher.lookups.cached"),
    Workload(
        group: "lookups", name: "lookups, cached pages, stringForQuery", baselineName: "C copying", goal: 1.15,
        baseline: "c.lookups.cached", subject: "cipher.lookups.cached.forQuery"),
    Workload(
        group: "lookups", name: "lookups, cached pages, PreparedStatement", baselineName: "C copying", goal: 1.15,
        baseline: "c.lookups.cached", subject: "cipher.lookups.cached.prepared"),
    Workload(
        group: "lookups", name: "lookups, cache misses, executeQuery", baselineName: "C copying", goal: 1.25,
        baseline: "c.lookups.misses", subject: "cipher.lookups.misses"),
    Workload(
        group: "lookups", name: "lookups, cache misses, stringForQuery", baselineName: "C copying", goal: 1.25,
        baseline: "c.lookups.misses", subject: "cipher.lookups.misses.forQuery"),
    Workload(
        group: "lookups", name: "lookups, cache misses, PreparedStatement", baselineName: "C copying", goal: 1.25,
        baseline: "c.lookups.misses", subject: "cipher.lookups.misses.prepared"),
    Workload(
        group: "records", name: "Codable insert, one transaction", baselineName: "C structs", goal: 1.5,
        baseline: "c.players.insert", subject: "cipher.players.insert"),
    Workload(
        group: "records", name: "Codable fetchAll (SQL)", baselineName: "C structs", goal: 1.5,
        baseline: "c.players.fetchAll", subject: "cipher.players.fetchAll"),
    Workload(
        group: "records", name: "fetchAll (SQL), record's own init(row:)", baselineName: "C structs", goal: 1.5,
        baseline: "c.players.fetchAll", subject: "cipher.players.fetchAll.byColumns"),
    Workload(
        group: "query interface", name: "builder lookups (scalar), cached pages", baselineName: "C copying", goal: 1.15,
        baseline: "c.lookups.cached", subject: "cipher.qi.lookups"),
    Workload(
        group: "query interface", name: "builder lookups / executeQuery with SQL", baselineName: "CipherDB executeQuery",
        goal: 1.10, baseline: "cipher.lookups.cached", subject: "cipher.qi.lookups"),
    Workload(
        group: "query interface", name: "Player.filter(...).fetchAll, all rows", baselineName: "C structs", goal: 1.5,
        baseline: "c.players.filter", subject: "cipher.qi.players.filter"),
    Workload(
        group: "query interface", name: "Player.filter(...).fetchAll, own init(row:)", baselineName: "C structs", goal: 1.5,
        baseline: "c.players.filter", subject: "cipher.qi.players.filter.byColumns"),
    Workload(
        group: "query interface", name: "Player.including(required: Player.self, ...), pairs", baselineName: "C structs",
        goal: nil, baseline: "c.players.pairs", subject: "cipher.qi.players.pairs"),
    Workload(
        group: "query interface", name: "table.insert(...) + run, one transaction", baselineName: "C", goal: 1.15,
        baseline: "c.insert5", subject: "cipher.qi.insert"),
    Workload(
        group: "query interface", name: "builder lookups, prepared once, cached pages", baselineName: "C copying", goal: 1.15,
        baseline: "c.lookups.cached", subject: "cipher.qi.lookups.prepared"),
    Workload(
        group: "query interface", name: "builder lookups, prepared once / executeQuery with SQL",
        baselineName: "CipherDB executeQuery", goal: 1.10, baseline: "cipher.lookups.cached", subject: "cipher.qi.lookups.prepared"),
    Workload(
        group: "query interface", name: "table.insert(...), prepared once, one transaction", baselineName: "C", goal: 1.15,
        baseline: "c.insert5", subject: "cipher.qi.insert.prepared"),
    Workload(
        group: "pool", name: "DatabasePool, 4 concurrent readers", baselineName: "C, 4 threads", goal: nil,
        baseline: "c.pool.readers", subject: "cipher.pool.readers"),
    Workload(
        group: "observation", name: "write txs, DatabaseQueue, 1 observer", baselineName: "no observer", goal: 1.15,
        baseline: "observation.queue.0", subject: "observation.queue.1"),
    Workload(
        group: "observation", name: "write txs, DatabaseQueue, 10 observers", baselineName: "no observer", goal: 2.0,
        baseline: "observation.queue.0", subject: "observation.queue.10"),
    Workload(
        group: "observation", name: "write txs, DatabasePool, 1 observer", baselineName: "no observer", goal: 1.15,
        baseline: "observation.pool.0", subject: "observation.pool.1"),
    Workload(
        group: "observation", name: "write txs, DatabasePool, 10 observers", baselineName: "no observer", goal: 2.0,
        baseline: "observation.pool.0", subject: "observation.pool.10"),
    Workload(
        group: "swift over C", name: "Swift over the C API: insert of 5", baselineName: "C", goal: nil,
        baseline: "c.insert5", subject: "swiftc.insert5"),
    Workload(
        group: "swift over C", name: "Swift over the C API: scan", baselineName: "C copying", goal: nil,
        baseline: "c.scan", subject: "swiftc.scan"),
    Workload(
        group: "swift over C", name: "Swift over the C API: lookups, misses", baselineName: "C copying", goal: nil,
        baseline: "c.lookups.misses", subject: "swiftc.lookups.misses"),
    Workload(
        group: "encryption", name: "insert, encrypted, default page size", baselineName: "plaintext", goal: 1.25,
        baseline: "plain.insert", subject: "encrypted.insert.default"),
    Workload(
        group: "encryption", name: "scan, encrypted, default page size", baselineName: "plaintext", goal: 1.50,
        baseline: "plain.scan", subject: "encrypted.scan.default"),
    // The same with 4 KiB pages (SQLCipher 4's default): what the default page size costs on 3.x.
    Workload(
        group: "encryption", name: "insert, encrypted, 4 KiB pages", baselineName: "plaintext", goal: 1.25,
        baseline: "plain.insert", subject: "encrypted.insert.4k"),
    Workload(
        group: "encryption", name: "scan, encrypted, 4 KiB pages", baselineName: "plaintext", goal: 1.50,
        baseline: "plain.scan", subject: "encrypted.scan.4k"),
]

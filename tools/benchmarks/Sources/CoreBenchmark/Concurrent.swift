// The workloads with threads: a DatabasePool's concurrent readers against C threads with a
// connection each, and ValueObservation's cost to the writer and its notification latency.
import CBaseline
import CipherCrypto
import CipherDB
import Foundation
import Synchronization

/// Runs `work(thread)` on `threads` threads at once. Each thread first runs `setUp(thread)`
/// (outside the measurement), then all start together; the meter measures from the start signal
/// to the end of the last one. Returns the wrapping sum of what the threads returned.
func inParallel(
    _ threads: Int, meter: Meter,
    setUp: @escaping @Sendable (Int) throws -> Void = { _ in },
    work: @escaping @Sendable (Int) throws -> Int,
    tearDown: @escaping @Sendable (Int) -> Void = { _ in }
) throws -> Int {
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let finish = DispatchSemaphore(value: 0)
    let results = Mutex<[Int]>([])
    let failures = Mutex<[String]>([])
    for thread in 0..<threads {
        Thread {
            do {
                try setUp(thread)
                ready.signal()
                go.wait()
                let value = try work(thread)
                results.withLock { $0.append(value) }
            } catch {
                failures.withLock { $0.append("\(error)") }
                ready.signal()
                go.wait()
            }
            done.signal()
            finish.wait()
            tearDown(thread)
            done.signal()
        }.start()
    }
    for _ in 0..<threads { ready.wait() }
    meter.measure {
        for _ in 0..<threads { go.signal() }
        for _ in 0..<threads { done.wait() }
    }
    for _ in 0..<threads { finish.signal() }
    for _ in 0..<threads { done.wait() }
    if let failure = failures.withLock({ $0.first }) { fatalError("a thread failed: \(failure)") }
    return results.withLock { $0.reduce(0, &+) }
}

/// The share of `ids` thread `thread` of `threads` looks up.
func slice(_ ids: [Int64], _ thread: Int, of threads: Int) -> ArraySlice<Int64> {
    let size = (ids.count + threads - 1) / threads
    return ids[min(ids.count, thread * size)..<min(ids.count, (thread + 1) * size)]
}

enum PoolReaders {
    static let threads = 4
    /// Lookups per read transaction (`pool.read { }` / BEGIN ... COMMIT).
    static let batch = 100
    static let cacheSize = "PRAGMA cache_size = -65536"

    /// C: a connection per thread, 64 MiB of page cache each, warmed by a scan before measuring.
    static func c(path: String, key: String, ids: [Int64], meter: Meter) throws -> Checksum {
        final class Connections: @unchecked Sendable { var handles: [OpaquePointer?] = Array(repeating: nil, count: PoolReaders.threads) }
        let connections = Connections()
        let sum = try inParallel(
            threads, meter: meter,
            setUp: { thread in
                let db = cb_open(path, key, 4096)
                cb_exec(db, cacheSize)
                _ = cb_checksum_query(db, "SELECT id, i, r, s, b FROM t")
                connections.handles[thread] = db
            },
            work: { thread in
                let share = Array(slice(ids, thread, of: threads))
                return Int(
                    truncatingIfNeeded: share.withUnsafeBufferPointer {
                        cb_lookups(connections.handles[thread], $0.baseAddress, Int32($0.count), Int32(batch), 0)
                    })
            },
            tearDown: { thread in cb_close(connections.handles[thread]) })
        return Checksum(value: sum)
    }

    /// CipherDB: a pool of `threads` readers (64 MiB of page cache each, every reader warmed by a
    /// scan before measuring), each thread reading its share `batch` lookups per `pool.read`.
    static func cipher(path: String, key: DatabaseKey, ids: [Int64], meter: Meter) throws -> Checksum {
        var configuration = DatabaseConfiguration()
        configuration.maximumReaderCount = threads
        configuration.prepareDatabase = { db in try db.executeUpdate(cacheSize) }
        let pool = try DatabasePool(path: path, key: key, settings: CipherSettings(pageSize: 4096), configuration: configuration)
        defer { try? pool.close() }
        // Every reader opened and warmed: `threads` reads held at once.
        _ = try inParallel(
            threads, meter: Meter(counting: false),
            work: { _ in
                try pool.read { db in
                    _ = try Cipher.scanByIndex(db)
                    Thread.sleep(forTimeInterval: 0.05)
                }
                return 0
            })
        precondition(pool.openConnectionCount == threads + 1, "the pool did not open every reader")
        let sum = try inParallel(
            threads, meter: meter,
            work: { thread in
                var sum = Checksum()
                let share = Array(slice(ids, thread, of: threads))
                var start = 0
                while start < share.count {
                    let end = min(start + batch, share.count)
                    try pool.read { db in
                        for id in share[start..<end] {
                            let rows = try db.executeQuery(Fixture.lookup, id)
                            if try rows.next() { sum.add(rows.string(at: 0) ?? "") }
                            rows.close()
                        }
                    }
                    start = end
                }
                return sum.value
            })
        return Checksum(value: sum)
    }
}

// MARK: - Observation

/// What the observers of one run saw: the latest value each delivered, and when each first saw
/// a given value.
final class Deliveries: Sendable {
    private struct State {
        var latest: [Int]
        var waiting: (target: Int, semaphore: DispatchSemaphore)?
        var firstSeen: [[Int: ContinuousClock.Instant]]
    }
    private let state: Mutex<State>
    let observers: Int
    let recordsTimes: Bool

    init(observers: Int, recordsTimes: Bool) {
        self.observers = observers
        self.recordsTimes = recordsTimes
        state = Mutex(State(latest: Array(repeating: -1, count: observers), firstSeen: Array(repeating: [:], count: observers)))
    }

    func deliver(_ value: Int, observer: Int) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.latest[observer] = value
            if recordsTimes, state.firstSeen[observer][value] == nil { state.firstSeen[observer][value] = now }
            if let waiting = state.waiting, state.latest.allSatisfy({ $0 >= waiting.target }) {
                state.waiting = nil
                waiting.semaphore.signal()
            }
        }
    }

    /// Waits until every observer delivered a value of at least `target`.
    func wait(until target: Int) {
        let semaphore = DispatchSemaphore(value: 0)
        let reached = state.withLock { state -> Bool in
            if state.latest.allSatisfy({ $0 >= target }) { return true }
            state.waiting = (target, semaphore)
            return false
        }
        if !reached {
            guard semaphore.wait(timeout: .now() + 60) == .success else { fatalError("observers did not deliver \(target) in 60 s") }
        }
    }

    /// When each observer first delivered a value of at least `value`.
    func deliveries(reaching value: Int) -> [ContinuousClock.Instant] {
        state.withLock { state in
            state.firstSeen.map { seen in seen.filter { $0.key >= value }.map(\.value).min() ?? .now }
        }
    }
}

enum Observing {
    static let createTable = "CREATE TABLE obs(id INTEGER PRIMARY KEY, note TEXT)"
    /// What every observer fetches: the newest row's id (reads the column `id`, so the fetch
    /// records the table).
    static let query = "SELECT max(id) FROM obs"

    enum Writer: String { case queue, pool }

    /// `PRAGMA synchronous = OFF` on every connection, with and without observers: with the
    /// default a one-row commit waits ~10 ms for the disk here, which would hide what observing
    /// costs the CPU.
    static func open(_ kind: Writer, _ path: String, key: DatabaseKey) throws -> any DatabaseWriter {
        var configuration = DatabaseConfiguration()
        configuration.prepareDatabase = { db in try db.executeUpdate("PRAGMA synchronous = OFF") }
        let settings = CipherSettings(pageSize: 4096)
        switch kind {
        case .queue: return try DatabaseQueue(path: path, key: key, settings: settings, configuration: configuration)
        case .pool: return try DatabasePool(path: path, key: key, settings: settings, configuration: configuration)
        }
    }

    /// Starts `count` observations of `query`; returns once each delivered its first value.
    static func observe(_ writer: any DatabaseWriter, _ deliveries: Deliveries) -> [DatabaseCancellable] {
        let observation = ValueObservation { db in try db.intForQuery(query) ?? 0 }
        let cancellables = (0..<deliveries.observers).map { observer in
            observation.start(in: writer) { error in
                fatalError("observation failed: \(error)")
            } onChange: { value in
                deliveries.deliver(value, observer: observer)
            }
        }
        deliveries.wait(until: 0)
        return cancellables
    }

    /// `commits` one-row write transactions with `observers` observations started; the
    /// measured part ends when every observer has delivered the value of the last commit.
    static func writes(_ kind: Writer, path: String, key: DatabaseKey, observers: Int, commits: Int, meter: Meter) throws {
        let writer = try open(kind, path, key: key)
        try writer.write { db in try db.executeUpdate(createTable) }
        let deliveries = Deliveries(observers: observers, recordsTimes: false)
        let cancellables = observe(writer, deliveries)
        try meter.measure {
            for id in 1...commits {
                try writer.write { db in try db.executeUpdate("INSERT INTO obs(id, note) VALUES (?, ?)", id, "commit") }
            }
            deliveries.wait(until: commits)
        }
        for cancellable in cancellables { cancellable.cancel() }
    }

    /// Notification latency: `commits` one-row write transactions, one at a time (each waits
    /// until every observer delivered it); for each commit and observer the time from the end of
    /// the write block (the COMMIT starts) to the observer's `onChange` with that row's id.
    /// Returns the latencies in seconds and the durations of the `write` calls.
    static func latency(
        _ kind: Writer, path: String, key: DatabaseKey, observers: Int, commits: Int
    ) throws -> (
        latencies: [Double], writes: [Double]
    ) {
        let writer = try open(kind, path, key: key)
        try writer.write { db in try db.executeUpdate(createTable) }
        let deliveries = Deliveries(observers: observers, recordsTimes: true)
        let cancellables = observe(writer, deliveries)
        defer { for cancellable in cancellables { cancellable.cancel() } }
        var latencies: [Double] = []
        var writes: [Double] = []
        for id in 1...commits {
            let start = ContinuousClock.now
            // The last thing the write block does: the COMMIT runs right after it returns.
            let committing = try writer.write { db in
                try db.executeUpdate("INSERT INTO obs(id, note) VALUES (?, ?)", id, "commit")
                return ContinuousClock.now
            }
            writes.append(seconds(ContinuousClock.now - start))
            deliveries.wait(until: id)
            latencies += deliveries.deliveries(reaching: id).map { seconds($0 - committing) }
        }
        return (latencies, writes)
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a progress count counts; sizes and rates are shown in its terms.
enum ProgressUnit: Sendable, Equatable {
    /// Bytes: shown as kB, MB, GB; the rate in MB/s.
    case bytes
    /// Pages of `size` bytes: shown as bytes, and the rate in MB/s.
    case pages(size: Int)
    /// Things with a name ("rows"): shown as counts, the rate in things per second.
    case items(String)
}

/// What work followed by ``ProgressReporter/follow(_:)`` is doing and how far it is.
struct ProgressReading: Sendable {
    /// The part under way ("integrity_check: b-trees").
    var label: String
    /// What `done` and `total` count.
    var unit: ProgressUnit
    /// How much is done; `nil`: nothing to count, only the time it has run.
    var done: Int?
    /// How much there is; `nil`: not known (no percentage or time left).
    var total: Int?
}

/// How progress reaches stderr.
enum ProgressStyle: Sendable, Equatable {
    /// Nothing.
    case off
    /// One line redrawn in place (`\r`, then clear to the end of the line), at most every
    /// ``ProgressReporter/Environment/interval``; never wider than the terminal.
    case terminal
    /// Plain lines for a log or a pipe (`--progress` on a stderr that is no terminal): one each
    /// time another tenth is done, or every ten intervals (a second) when the total is unknown.
    case lines

    /// The style for a command's flags and stderr: `--quiet` wins over everything (a script's
    /// `-q` is never overridden); `--progress` forces it on (plain lines off a terminal); `--json`
    /// keeps stderr for errors unless `--progress` says otherwise; else only a terminal sees it.
    static func choose(quiet: Bool, forced: Bool, json: Bool, stderrIsTerminal: Bool) -> ProgressStyle {
        if quiet { return .off }
        if forced { return stderrIsTerminal ? .terminal : .lines }
        if json { return .off }
        return stderrIsTerminal ? .terminal : .off
    }
}

/// What one piece of counted work took, for the final line and `--json`.
struct ProgressSummary: Sendable, Equatable {
    /// Units done (pages for ``ProgressUnit/pages(size:)``).
    var done: Int
    /// What they count.
    var unit: ProgressUnit
    /// Seconds from the start of the work to its end.
    var seconds: Double

    /// The bytes done, when the unit has a size.
    var bytes: Int? {
        switch unit {
        case .bytes: return done
        case .pages(let size): return done * size
        case .items: return nil
        }
    }

    /// The average rate in units (bytes where they have a size) per second; `nil` for no time.
    var rate: Double? {
        guard seconds > 0 else { return nil }
        return Double(bytes ?? done) / seconds
    }

    /// `{"pages"?, "bytes"?, "<items>"?, "seconds", "bytes_per_second" | "<items>_per_second"}`.
    var json: JSONValue {
        var members: [(String, JSONValue)] = []
        switch unit {
        case .pages: members.append(("pages", .int(Int64(done))))
        case .items(let name): members.append((name, .int(Int64(done))))
        case .bytes: break
        }
        if let bytes { members.append(("bytes", .int(Int64(bytes)))) }
        members.append(("seconds", .double((seconds * 1000).rounded() / 1000)))
        let rateName: String
        if case .items(let name) = unit { rateName = "\(name)_per_second" } else { rateName = "bytes_per_second" }
        members.append((rateName, rate.map { .double($0.rounded()) } ?? .null))
        return .object(members)
    }
}

/// Progress for long work, on stderr: percentage, rate and time left on a terminal, redrawn in
/// place; plain lines with `--progress` elsewhere; nothing with `--quiet`, or off a terminal
/// unless asked (``ProgressStyle/choose(quiet:forced:json:stderrIsTerminal:)``).
///
/// Callbacks may come from worker threads (the page check, the page-by-page rekey): every entry
/// point takes the lock, so the unchecked `Sendable` is sound.
final class ProgressReporter: @unchecked Sendable {
    /// The clock, the terminal and stderr, injected by the tests.
    struct Environment: Sendable {
        /// Seconds on a monotonic clock.
        var clock: @Sendable () -> Double
        /// The terminal's width in columns.
        var width: @Sendable () -> Int
        /// The least time between two redraws.
        var interval: Double
        /// Writes to stderr.
        var write: @Sendable (String) -> Void

        /// The real ones. `CIPHERDB_PROGRESS_INTERVAL` (seconds) lowers the redraw interval, so
        /// that the terminal tests see several redraws of a small database (not documented).
        static var process: Environment {
            // One variable read, not ProcessInfo's copy of all of them (the passphrases' among them).
            let interval = EnvironmentVariable.value("CIPHERDB_PROGRESS_INTERVAL").flatMap(Double.init) ?? 0.1
            return Environment(
                clock: { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 },
                width: { ProgressReporter.terminalWidth() },
                interval: max(0, interval),
                write: { Console.rawError($0) })
        }
    }

    /// The style in use.
    let style: ProgressStyle
    private let environment: Environment
    private let lock = NSLock()
    private let created: Double
    // Touched only under `lock`.
    private var label = ""
    private var unit = ProgressUnit.items("")
    private var started: Double?
    private var done = 0
    private var total: Int?
    private var lastDraw: Double?
    private var lastTenth = 0
    private var drewLine = false
    /// Redraws the elapsed time of work with no count (``tick(_:)``); a new generation voids
    /// the timer's handlers already under way.
    private var ticker: DispatchSourceTimer?
    private var tickGeneration = 0
    /// The part ``follow(_:)`` last drew, and when it was first seen.
    private var followed: (label: String, since: Double)?

    /// A reporter with `style` in `environment`.
    init(style: ProgressStyle, environment: Environment = .process) {
        self.style = style
        self.environment = environment
        created = environment.clock()
    }

    /// Progress on a terminal stderr unless `quiet` (for the shell's `.import` and other work
    /// without `--progress`).
    convenience init(quiet: Bool) {
        self.init(style: .choose(quiet: quiet, forced: false, json: false, stderrIsTerminal: Console.stderrIsTerminal))
    }

    /// Progress as a long command's flags ask.
    convenience init(_ common: CommonOptions, _ options: ProgressOptions, json: Bool = false) {
        self.init(
            style: .choose(quiet: common.quiet, forced: options.progress, json: json, stderrIsTerminal: Console.stderrIsTerminal))
    }

    deinit { ticker?.cancel() }

    /// Whether anything is shown.
    var isShowing: Bool { style != .off }

    /// Announces a phase on a line of its own ("rekeying app.db…").
    func phase(_ text: String) {
        guard style != .off else { return }
        locked {
            stopTicker()
            clearLine()
            environment.write("\(Console.escapingControlCharacters(text))…\n")
        }
    }

    /// Work with no total to give (SQLite's `integrity_check`, the proof of a copy): on a
    /// terminal, `label`, the bytes `read` says were read and their rate if given, and the seconds
    /// it has run, redrawn each interval until the next report; as lines, `label` once.
    func tick(_ label: String, read: (@Sendable () -> Int)? = nil) {
        follow { ProgressReading(label: label, unit: .bytes, done: read?(), total: nil) }
    }

    /// Work that says how far it is only when asked, in parts that count differently
    /// (`integrity_check`: its walk of every b-tree, whose pages are known, then its index
    /// checks, whose reads are not): `reading` is sampled each interval, and the line redrawn
    /// from it, until the next report. Each part (a new label) has its own rate and time left,
    /// from when it was first seen. As lines, each label once.
    func follow(_ reading: @escaping @Sendable () -> ProgressReading) {
        guard style != .off else { return }
        locked {
            stopTicker()
            clearLine()
            followed = nil
            let generation = tickGeneration
            let draw = { [self] in
                let now = reading()
                let clock = environment.clock()
                if followed?.label != now.label {
                    followed = (now.label, clock)
                    if style == .lines { environment.write("\(now.label)…\n") }
                }
                guard style == .terminal else { return }
                let elapsed = clock - (followed?.since ?? clock)
                let width = environment.width()
                let line =
                    now.done.map {
                        Self.line(label: now.label, unit: now.unit, done: $0, total: now.total, elapsed: elapsed, width: width)
                    } ?? Self.tickLine(label: now.label, elapsed: elapsed, width: width)
                environment.write("\r" + line + "\u{1B}[K")
                drewLine = true
            }
            draw()
            let timer = DispatchSource.makeTimerSource(queue: .global())
            // A timer at the redraw interval; at least 5 ms when the tests set it to 0.
            let every = DispatchTimeInterval.milliseconds(Int(max(0.005, environment.interval) * 1000))
            timer.schedule(deadline: .now() + every, repeating: every)
            timer.setEventHandler { [weak self] in
                guard let self else { return }
                self.locked { if self.tickGeneration == generation { draw() } }
            }
            timer.resume()
            ticker = timer
        }
    }

    /// Stops redrawing what ``tick(_:read:)`` shows (its work is over); the line stays until the
    /// next report.
    func stopTicking() {
        locked { stopTicker() }
    }

    /// Turns a copy's ``CopyProgress`` into progress: the bytes written, then `checking` ticking.
    func copy(_ event: CopyProgress, checking: String) {
        switch event {
        case .writing(let done, let total): update(done: done, total: total)
        case .checking: tick(checking)
        }
    }

    /// Starts counting work called `label` ("encrypting") in `unit`: the rate and time left
    /// count from here.
    func begin(_ label: String, unit: ProgressUnit) {
        locked {
            stopTicker()
            self.label = label
            self.unit = unit
            started = environment.clock()
            (done, total, lastDraw, lastTenth) = (0, nil, nil, 0)
        }
    }

    /// `done` of `total` units (`nil`: not known); redrawn at most once an interval, and always
    /// when the work is done.
    func update(done: Int, total: Int?) {
        locked {
            stopTicker()
            let now = environment.clock()
            if started == nil { started = now }
            self.done = done
            self.total = total
            draw(now: now)
        }
    }

    /// `done` of `total` units of `label`, counted as they come (the shell's `.import`).
    func update(_ label: String, done: Int, total: Int) {
        locked {
            if label != self.label || started == nil {
                self.label = label
                started = environment.clock()
                (lastDraw, lastTenth) = (nil, 0)
            }
        }
        update(done: done, total: total)
    }

    /// What the work took so far.
    var summary: ProgressSummary {
        locked {
            let now = environment.clock()
            return ProgressSummary(done: done, unit: unit, seconds: now - (started ?? created))
        }
    }

    /// `done` units of the whole run, from when this reporter was made: for work counted in
    /// steps of different units (a drill), or not counted (SQLite's check of a sound file).
    func overall(done: Int, unit: ProgressUnit) -> ProgressSummary {
        locked { ProgressSummary(done: done, unit: unit, seconds: environment.clock() - created) }
    }

    /// Ends the progress line and says what was done: "`verb` 29.4 MB in 3.6 s (8.1 MB/s)";
    /// `summary` replaces the count of the last piece of work. Returns the summary (for `--json`).
    @discardableResult
    func complete(_ verb: String, summary given: ProgressSummary? = nil) -> ProgressSummary {
        let summary = given ?? self.summary
        guard style != .off else { return summary }
        locked {
            stopTicker()
            clearLine()
            environment.write(Self.summaryLine(verb, summary) + "\n")
        }
        return summary
    }

    /// Ends a progress line; with `text`, says it and the time since this reporter was made.
    func finish(_ text: String? = nil) {
        guard style != .off else { return }
        locked {
            stopTicker()
            clearLine()
            if let text {
                environment.write("\(text) (\(Self.seconds(environment.clock() - created)))\n")
            }
        }
    }

    // MARK: - Drawing (under the lock)

    private func draw(now: Double) {
        guard style != .off, let started else { return }
        let finished = total.map { done >= $0 } ?? false
        let elapsed = now - started
        switch style {
        case .off:
            return
        case .terminal:
            if let lastDraw, now - lastDraw < environment.interval, !finished { return }
            let line = Self.line(
                label: label, unit: unit, done: done, total: total, elapsed: elapsed, width: environment.width())
            environment.write("\r" + line + "\u{1B}[K")
            drewLine = true
        case .lines:
            if let total, total > 0 {
                let tenth = min(10, done * 10 / total)
                guard tenth > lastTenth else { return }
                lastTenth = tenth
            } else {
                if let lastDraw, now - lastDraw < environment.interval * 10 { return }
            }
            environment.write(Self.line(label: label, unit: unit, done: done, total: total, elapsed: elapsed, width: nil) + "\n")
        }
        lastDraw = now
    }

    private func stopTicker() {
        ticker?.cancel()
        ticker = nil
        tickGeneration += 1
    }

    private func clearLine() {
        if drewLine {
            environment.write("\r\u{1B}[K")
            drewLine = false
        }
    }

    private func locked<Result>(_ body: () -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    // MARK: - Formatting

    /// The progress line: label, percentage, done of total, rate, time left; the rate once there
    /// is half a second to average over, the time left once a second and 2 % are behind (before,
    /// it swings too much to help). With `width`, the parts that do not fit are left out from the
    /// end (time left, rate, sizes), then the label is cut: one column stays free, as a line that
    /// fills the last column wraps on some terminals.
    static func line(label: String, unit: ProgressUnit, done: Int, total: Int?, elapsed: Double, width: Int?) -> String {
        var parts: [String] = []
        let rate = elapsed >= 0.5 && done > 0 ? Double(done) / elapsed : nil
        if let total, total > 0 {
            let percent = done >= total ? 100 : min(99, done * 100 / total)
            parts.append(label + " " + String(repeating: " ", count: max(0, 3 - String(percent).count)) + "\(percent)%")
            parts.append("\(amount(done, unit, withUnit: false, like: total)) of \(amount(total, unit))")
            if let rate { parts.append(rateText(rate, unit)) }
            if let rate, elapsed >= 1, Double(done) >= 0.02 * Double(total), done < total {
                parts.append(duration(Double(total - done) / rate, roundingUp: true) + " left")
            }
        } else {
            parts.append(label)
            parts.append(amount(done, unit))
            if let rate { parts.append(rateText(rate, unit)) }
            parts.append(seconds(elapsed))
        }
        guard let width else { return parts.joined(separator: "  ") }
        let room = max(1, width - 1)
        while parts.count > 1, parts.joined(separator: "  ").count > room { parts.removeLast() }
        let line = parts.joined(separator: "  ")
        return line.count > room ? String(line.prefix(room)) : line
    }

    /// The line of work with no count: "integrity_check  3.2 s", cut to `width` less one column.
    static func tickLine(label: String, elapsed: Double, width: Int) -> String {
        String((label + "  " + seconds(elapsed)).prefix(max(1, width - 1)))
    }

    /// The final line: "encrypted 29.4 MB in 3.6 s (8.1 MB/s)".
    static func summaryLine(_ verb: String, _ summary: ProgressSummary) -> String {
        var text = "\(verb) \(amount(summary.done, summary.unit)) in \(seconds(summary.seconds))"
        if let rate = summary.rate {
            text += " (" + (summary.bytes == nil ? rateText(rate, summary.unit) : bytes(Int(rate.rounded())) + "/s") + ")"
        }
        return text
    }

    /// `count` units as shown: "29.4 MB" (pages too), "12000 rows". Without the
    /// unit, a size in the same unit as `like` ("12.0" of "29.4 MB").
    static func amount(_ count: Int, _ unit: ProgressUnit, withUnit: Bool = true, like: Int? = nil) -> String {
        switch unit {
        case .bytes:
            return withUnit ? bytes(count) : bytes(count, scaleOf: like ?? count).number
        case .pages(let size):
            if !withUnit { return bytes(count * size, scaleOf: (like ?? count) * size).number }
            return bytes(count * size)
        case .items(let name):
            return withUnit && !name.isEmpty ? "\(count) \(name)" : "\(count)"
        }
    }

    /// The rate of `unitsPerSecond`: "8.1 MB/s", "3858 rows/s".
    static func rateText(_ unitsPerSecond: Double, _ unit: ProgressUnit) -> String {
        switch unit {
        case .bytes: return bytes(Int(unitsPerSecond.rounded())) + "/s"
        case .pages(let size): return bytes(Int((unitsPerSecond * Double(size)).rounded())) + "/s"
        case .items(let name): return "\(Int(unitsPerSecond.rounded()))\(name.isEmpty ? "" : " " + name)/s"
        }
    }

    /// A size in decimal units, as `ls -h --si` and disk makers count: "512 B", "1.5 kB",
    /// "29.4 MB", "1.40 GB" (three significant digits from 1 kB on).
    static func bytes(_ count: Int) -> String {
        let shown = bytes(count, scaleOf: count)
        return shown.number + " " + shown.unit
    }

    /// `count` in the unit that suits `scale`, and that unit.
    static func bytes(_ count: Int, scaleOf scale: Int) -> (number: String, unit: String) {
        let units = ["B", "kB", "MB", "GB", "TB", "PB"]
        var index = 0
        var divisor = 1.0
        while index < units.count - 1, Double(scale) / divisor >= 999.5 {
            divisor *= 1000
            index += 1
        }
        let value = Double(count) / divisor
        guard index > 0 else { return ("\(count)", "B") }
        let scaled = Double(scale) / divisor
        let decimals = scaled >= 99.95 ? 0 : scaled >= 9.995 ? 1 : 2
        return (String(format: "%.\(decimals)f", value), units[index])
    }

    /// Elapsed time: "0.4 s", "12.3 s", "2:05", "1:02:05".
    static func seconds(_ value: Double) -> String {
        value < 59.95 ? String(format: "%.1f s", max(0, value)) : duration(value, roundingUp: false)
    }

    /// A duration in whole seconds: "7 s", "2:05", "1:02:05".
    static func duration(_ value: Double, roundingUp: Bool) -> String {
        let total = Int(min(max(0, roundingUp ? value.rounded(.up) : value.rounded()), 359_999_999))
        if total < 60 { return "\(total) s" }
        let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, seconds) : String(format: "%d:%02d", minutes, seconds)
    }

    /// The width of the terminal on stderr (TIOCGWINSZ); 80 when it does not say.
    static func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}

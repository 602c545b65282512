import Foundation
import XCTest

@testable import CipherCLI

/// The progress line's formatting and pacing, on an injected clock, terminal width and stderr:
/// no sleeps, no timing.
final class ProgressReporterTests: XCTestCase {
    /// A clock the test moves, a width it sets, and what was written.
    private final class FakeTerminal: @unchecked Sendable {
        private let lock = NSLock()
        private var time = 0.0
        private var columns = 80
        private var written = ""

        var now: Double {
            get { lock.withLock { time } }
            set { lock.withLock { time = newValue } }
        }
        var width: Int {
            get { lock.withLock { columns } }
            set { lock.withLock { columns = newValue } }
        }
        var output: String { lock.withLock { written } }

        func environment(interval: Double = 0.1) -> ProgressReporter.Environment {
            ProgressReporter.Environment(
                clock: { self.now }, width: { self.width }, interval: interval,
                write: { text in self.lock.withLock { self.written += text } })
        }
    }

    func testSizesRatesAndDurationsAreShortAndDecimal() {
        XCTAssertEqual(ProgressReporter.bytes(512), "512 B")
        XCTAssertEqual(ProgressReporter.bytes(1_500), "1.50 kB")
        XCTAssertEqual(ProgressReporter.bytes(29_400_000), "29.4 MB")
        XCTAssertEqual(ProgressReporter.bytes(123_456_789), "123 MB")
        XCTAssertEqual(ProgressReporter.bytes(1_400_000_000), "1.40 GB")
        XCTAssertEqual(ProgressReporter.rateText(8_123_456, .bytes), "8.12 MB/s")
        XCTAssertEqual(ProgressReporter.rateText(2_000, .pages(size: 4096)), "8.19 MB/s")
        XCTAssertEqual(ProgressReporter.rateText(3_857.6, .items("rows")), "3858 rows/s")
        XCTAssertEqual(ProgressReporter.duration(7.2, roundingUp: true), "8 s")
        XCTAssertEqual(ProgressReporter.duration(125, roundingUp: false), "2:05")
        XCTAssertEqual(ProgressReporter.duration(3_725, roundingUp: false), "1:02:05")
        XCTAssertEqual(ProgressReporter.seconds(3.64), "3.6 s")
        XCTAssertEqual(ProgressReporter.seconds(75), "1:15")
    }

    func testTheLineShowsTheRateAfterHalfASecondAndTimeLeftAfterASecondAndTwoPercent() {
        func line(_ done: Int, _ elapsed: Double) -> String {
            ProgressReporter.line(label: "encrypting", unit: .bytes, done: done, total: 40_000_000, elapsed: elapsed, width: nil)
        }
        XCTAssertEqual(line(10_000_000, 0.4), "encrypting  25%  10.0 of 40.0 MB")
        XCTAssertEqual(line(5_000_000, 0.8), "encrypting  12%  5.0 of 40.0 MB  6.25 MB/s")
        XCTAssertEqual(line(10_000_000, 2), "encrypting  25%  10.0 of 40.0 MB  5.00 MB/s  6 s left")
        XCTAssertEqual(line(600_000, 3), "encrypting   1%  0.6 of 40.0 MB  200 kB/s", "under 2 %: no time left yet")
        XCTAssertEqual(line(39_999_999, 4), "encrypting  99%  40.0 of 40.0 MB  10.0 MB/s  1 s left", "100 % only when done")
        XCTAssertEqual(line(40_000_000, 4), "encrypting 100%  40.0 of 40.0 MB  10.0 MB/s")
        XCTAssertEqual(
            ProgressReporter.line(label: "salvaging", unit: .items("rows"), done: 12_000, total: nil, elapsed: 2, width: nil),
            "salvaging  12000 rows  6000 rows/s  2.0 s", "an unknown total: no percentage, no time left")
    }

    func testTheLineNeverFillsTheTerminalDroppingTimeLeftThenRateThenSizes() {
        func line(width: Int) -> String {
            ProgressReporter.line(label: "encrypting", unit: .bytes, done: 10_000_000, total: 40_000_000, elapsed: 2, width: width)
        }
        XCTAssertEqual(line(width: 80), "encrypting  25%  10.0 of 40.0 MB  5.00 MB/s  6 s left")
        XCTAssertEqual(line(width: 50), "encrypting  25%  10.0 of 40.0 MB  5.00 MB/s")
        XCTAssertEqual(line(width: 40), "encrypting  25%  10.0 of 40.0 MB")
        XCTAssertEqual(line(width: 20), "encrypting  25%")
        XCTAssertEqual(line(width: 8), "encrypt")
        for width in 1...60 { XCTAssertLessThan(line(width: width).count, max(2, width), "width \(width)") }
        XCTAssertEqual(ProgressReporter.tickLine(label: "integrity_check", elapsed: 3.21, width: 12), "integrity_c")
    }

    func testATerminalIsRedrawnInPlaceAtMostOnceAnIntervalAndAlwaysAtTheEnd() {
        let terminal = FakeTerminal()
        let progress = ProgressReporter(style: .terminal, environment: terminal.environment())
        progress.begin("rekeying", unit: .pages(size: 4096))
        progress.update(done: 100, total: 1000)  // drawn: the first
        terminal.now = 0.05
        progress.update(done: 200, total: 1000)  // too soon
        terminal.now = 0.1
        progress.update(done: 300, total: 1000)  // drawn
        terminal.now = 0.12
        progress.update(done: 1000, total: 1000)  // drawn: done
        terminal.now = 2
        let summary = progress.complete("rekeyed")
        XCTAssertEqual(
            terminal.output,
            "\rrekeying  10%  0.41 of 4.10 MB\u{1B}[K\rrekeying  30%  1.23 of 4.10 MB\u{1B}[K"
                + "\rrekeying 100%  4.10 of 4.10 MB\u{1B}[K\r\u{1B}[Krekeyed 4.10 MB in 2.0 s (2.05 MB/s)\n")
        XCTAssertEqual(summary, ProgressSummary(done: 1000, unit: .pages(size: 4096), seconds: 2))
        XCTAssertEqual(
            summary.json.serialized(), #"{"pages":1000,"bytes":4096000,"seconds":2.0,"bytes_per_second":2048000.0}"#)
    }

    func testPlainLinesComeATenthAtATimeWithoutCarriageReturns() {
        let terminal = FakeTerminal()
        let progress = ProgressReporter(style: .lines, environment: terminal.environment())
        progress.phase("encrypting a.db into b.db")
        progress.begin("encrypting", unit: .bytes)
        for done in stride(from: 0, through: 1_000_000, by: 10_000) {
            terminal.now += 0.01
            progress.update(done: done, total: 1_000_000)
        }
        progress.complete("encrypted")
        let lines = terminal.output.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertFalse(terminal.output.contains("\r"))
        XCTAssertEqual(lines.first, "encrypting a.db into b.db…")
        XCTAssertEqual(lines.filter { $0.hasPrefix("encrypting ") && $0.contains("%") }.count, 10, terminal.output)
        XCTAssertTrue(lines.contains("encrypting 100%  1.00 of 1.00 MB  990 kB/s"), terminal.output)
        XCTAssertEqual(lines.suffix(2), ["encrypted 1.00 MB in 1.0 s (990 kB/s)", ""])
    }

    func testPlainLinesOfAnUnknownTotalComeOnceASecond() {
        let terminal = FakeTerminal()
        let progress = ProgressReporter(style: .lines, environment: terminal.environment())
        progress.begin("salvaging", unit: .items("rows"))
        for step in 0...8 {
            terminal.now = Double(step) * 0.25
            progress.update(done: step * 1000, total: nil)
        }
        XCTAssertEqual(
            terminal.output,
            "salvaging  0 rows  0.0 s\nsalvaging  4000 rows  4000 rows/s  1.0 s\nsalvaging  8000 rows  4000 rows/s  2.0 s\n")
    }

    func testWorkWithNoCountTicksOnTheTerminalAndIsOneLineElsewhere() {
        let terminal = FakeTerminal()
        let progress = ProgressReporter(style: .terminal, environment: terminal.environment())
        progress.tick("integrity_check")
        terminal.now = 1
        progress.complete("checked", summary: progress.overall(done: 10, unit: .pages(size: 1000)))
        XCTAssertEqual(terminal.output, "\rintegrity_check  0.0 s\u{1B}[K\r\u{1B}[Kchecked 10.0 kB in 1.0 s (10.0 kB/s)\n")

        let log = FakeTerminal()
        let lines = ProgressReporter(style: .lines, environment: log.environment())
        lines.tick("integrity_check")
        XCTAssertEqual(log.output, "integrity_check…\n")
    }

    func testQuietWinsProgressForcesPlainLinesOffATerminalAndJSONKeepsStderrClear() {
        XCTAssertEqual(ProgressStyle.choose(quiet: false, forced: false, json: false, stderrIsTerminal: true), .terminal)
        XCTAssertEqual(ProgressStyle.choose(quiet: false, forced: false, json: false, stderrIsTerminal: false), .off)
        XCTAssertEqual(ProgressStyle.choose(quiet: false, forced: true, json: false, stderrIsTerminal: false), .lines)
        XCTAssertEqual(ProgressStyle.choose(quiet: false, forced: true, json: false, stderrIsTerminal: true), .terminal)
        XCTAssertEqual(ProgressStyle.choose(quiet: false, forced: false, json: true, stderrIsTerminal: true), .off)
        XCTAssertEqual(ProgressStyle.choose(quiet: false, forced: true, json: true, stderrIsTerminal: false), .lines)
        XCTAssertEqual(ProgressStyle.choose(quiet: true, forced: true, json: false, stderrIsTerminal: true), .off)

        let terminal = FakeTerminal()
        let off = ProgressReporter(style: .off, environment: terminal.environment())
        off.phase("encrypting")
        off.begin("encrypting", unit: .bytes)
        off.update(done: 5, total: 10)
        terminal.now = 1
        XCTAssertEqual(off.complete("encrypted").done, 5, "the summary is kept for --json")
        XCTAssertEqual(terminal.output, "")
    }
}

import Foundation

/// Progress for long work, on stderr, only when stderr is a terminal and `--quiet` is off.
final class ProgressReporter {
    private let enabled: Bool
    private var lastDraw = Date.distantPast
    private var drewLine = false
    private let started = Date()

    init(quiet: Bool) {
        enabled = !quiet && Console.stderrIsTerminal
    }

    /// Announces a phase ("rekeying…").
    func phase(_ text: String) {
        guard enabled else { return }
        clearLine()
        Console.rawError("\(text)…\n")
    }

    /// Shows `done` of `total` units, redrawn at most ten times a second.
    func update(_ label: String, done: Int, total: Int) {
        guard enabled, total > 0 else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 || done >= total else { return }
        lastDraw = now
        let percent = done * 100 / total
        Console.rawError("\r\(label): \(done)/\(total) (\(percent)%)")
        drewLine = true
    }

    /// Ends a progress line and reports the time spent.
    func finish(_ text: String? = nil) {
        guard enabled else { return }
        clearLine()
        if let text {
            let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
            Console.rawError("\(text) (\(seconds) s)\n")
        }
    }

    private func clearLine() {
        if drewLine {
            Console.rawError("\r\u{1B}[K")
            drewLine = false
        }
    }
}

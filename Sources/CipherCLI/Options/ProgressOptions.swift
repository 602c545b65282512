import ArgumentParser

/// `--progress`, for the commands that do long work (`encrypt`, `rekey`, `verify`, …).
package struct ProgressOptions: ParsableArguments {
    /// `--progress`.
    @Flag(
        name: .customLong("progress"),
        help: "Show progress even off a terminal (as plain lines) or with --json; --quiet wins.")
    var progress = false

    /// Creates empty options (for ArgumentParser).
    package init() {}
}

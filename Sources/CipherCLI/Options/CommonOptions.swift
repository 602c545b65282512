import ArgumentParser

/// Options every command shares: `--quiet`, `--verbose`.
package struct CommonOptions: ParsableArguments {
    /// `--quiet`.
    @Flag(name: [.customShort("q"), .customLong("quiet")], help: "No progress and no informational messages.")
    var quiet = false

    /// `--verbose`.
    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "More detail on stderr (never key material).")
    var verbose = false

    /// Creates empty options (for ArgumentParser).
    package init() {}

    /// Writes an informational message to stderr unless quiet.
    func info(_ text: String) {
        if !quiet { Console.error(text) }
    }

    /// Writes a detail to stderr when verbose.
    func detail(_ text: String) {
        if verbose { Console.error(text) }
    }
}

import ArgumentParser

/// `--version N`: the key version a command acts on (`keys enable`, `keys disable`).
struct KeyVersionOption: ParsableArguments {
    /// `--version N`.
    @Option(name: .customLong("version"), help: ArgumentHelp("The key version.", valueName: "N"))
    var number: Int

    /// Checks that the version is a version number.
    func validate() throws {
        guard number >= 1 else { throw ValidationError("--version takes a version number (1 or more)") }
    }
}

import ArgumentParser
import CProcessArguments
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `cipherdb` root command.
package struct CipherDBCommand: ParsableCommand {
    /// This tool's version.
    package static let toolVersion = "0.1.0"

    /// The command's configuration: subcommands, version, help. Made once: ArgumentParser reads
    /// it several times while it parses, and its help text formats the exit code table.
    package static let configuration = CommandConfiguration(
        commandName: "cipherdb",
        abstract:
            "Create, inspect, query, encrypt, decrypt, rekey, export, back up, verify and salvage SQLCipher databases, and manage keystore keys.",
        discussion: """
            Secrets are never taken as arguments (argv is visible to every user through ps and /proc). Give a \
            database key with --passphrase-env VAR, --passphrase-file PATH, --passphrase-fd N, --passphrase-stdin, \
            --raw-key-file PATH (32 bytes or 64 hex characters) or --key-id ID (from the keystore); a new key with \
            the same flags prefixed by new- (--new-passphrase-env, ...). Without a key flag, cipherdb asks on the \
            terminal without echo; without a terminal it stops with exit code 64.

            Examples:
              export DB_PASS='correct horse battery staple'
              cipherdb create app.db --passphrase-env DB_PASS --schema schema.sql
              cipherdb query app.db "SELECT * FROM people" --passphrase-env DB_PASS --json
              cipherdb verify app.db --passphrase-env DB_PASS

            `cipherdb --version` prints the tool's version and the SQLCipher it runs on.

            Exit codes:
            \(ExitStatus.table)
            """,
        subcommands: [
            CreateCommand.self, InfoCommand.self, QueryCommand.self, ShellCommand.self,
            EncryptCommand.self, DecryptCommand.self, RekeyCommand.self, ExportCommand.self,
            VerifyCommand.self, SalvageCommand.self, BackupCommand.self, SnapshotCommand.self, KeysCommand.self,
        ]
    )

    /// "cipherdb 0.1.0 (SQLCipher 3.4.1 community)".
    static var versionText: String {
        let sqlcipher = SQLCipherVersion.current.map { "SQLCipher \($0.text)" } ?? "no SQLCipher codec linked"
        return "cipherdb \(toolVersion) (\(sqlcipher))"
    }

    /// Creates the command (for ArgumentParser).
    package init() {}
}

/// The entry point of the `cipherdb` executable.
package enum CipherDBTool {
    /// The process's arguments after the program name, with every byte kept (``PathBytes``):
    /// Swift's own decoding replaces bytes that are not UTF-8 with U+FFFD, which names another file.
    ///
    /// Swift's `CommandLine` reads `/proc/self/cmdline` on Linux: without `/proc` (a chroot, a
    /// minimal container) its argc is 0. The vector glibc handed the program is used then.
    static func rawArguments() -> [String] {
        if CommandLine.argc > 0 { return arguments(argc: CommandLine.argc, argv: CommandLine.unsafeArgv) }
        return arguments(argc: cdb_saved_argc(), argv: cdb_saved_argv())
    }

    /// The arguments after the program name in the C vector `argv` of `argc` entries, each byte
    /// kept. No arguments when `argc` is 0 or less or `argv` is `nil` (a process started with an
    /// empty vector, or whose vector is not known); the vector's NULL ends it even if `argc` says more.
    ///
    /// - Parameters:
    ///   - argc: the number of entries, the program name included.
    ///   - argv: the NULL-terminated vector, or `nil`.
    static func arguments(argc: Int32, argv: UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> [String] {
        guard argc > 1, let argv else { return [] }
        var arguments: [String] = []
        for index in 1..<Int(argc) {
            guard let argument = argv[index] else { break }
            arguments.append(
                PathBytes.string(fromBytes: UnsafeBufferPointer(start: argument, count: strlen(argument)).map { UInt8(bitPattern: $0) }))
        }
        return arguments
    }

    /// Hardens the process, parses `arguments` (default: the process's), runs the command and exits
    /// with its status. Errors are printed on stderr with a hint and the documented exit code.
    package static func main(_ arguments: [String]? = nil) -> Never {
        Hardening.apply()
        var status: Int32
        let arguments = arguments ?? rawArguments()
        // `--version` is the root's alone, read here: ArgumentParser's version flag would be
        // inherited by every subcommand, beside `keys export --version N` and the like.
        if arguments == ["--version"] {
            print(CipherDBCommand.versionText)
            exit(finishingStdout(ExitStatus.ok.rawValue))
        }
        if let typo = mistypedCommand(in: arguments) {
            Console.error(typo.description)
            exit(typo.status.rawValue)
        }
        do {
            var command = try CipherDBCommand.parseAsRoot(arguments)
            try command.run()
            // The work is done; a keystore record of it is not (reported as it failed).
            status = KeystoreAccess.recordFailed ? ExitStatus.changedIncompletely.rawValue : ExitStatus.ok.rawValue
        } catch let error as CLIError {
            Console.flush()
            Console.error(error.description)
            status = error.status.rawValue
        } catch let error as CommandFailure {
            Console.flush()
            status = error.status.rawValue
        } catch {
            Console.flush()
            guard CipherDBCommand.exitCode(for: error) == .success else { CipherDBCommand.exit(withError: error) }
            // Help and the other clean exits print to stdout, checked below like any output.
            let message = CipherDBCommand.fullMessage(for: error)
            if !message.isEmpty { Console.out(message) }
            status = ExitStatus.ok.rawValue
        }
        exit(finishingStdout(status))
    }

    /// `status`, or 74 when it is a success but the output did not all reach stdout (a full
    /// disk, an I/O error): the command went well, its results did not arrive.
    private static func finishingStdout(_ status: Int32) -> Int32 {
        guard let failure = Console.finishStdout(), status == ExitStatus.ok.rawValue else {
            Console.flush()
            return status
        }
        Console.error("cipherdb: cannot write stdout: \(String(cString: strerror(failure)))")
        return ExitStatus.ioError.rawValue
    }
}

extension CipherDBTool {
    /// A usage error with a suggestion when a command name is a typo of a real one (`qurey`,
    /// `keys rotat`): ArgumentParser would only call it an unexpected argument.
    static func mistypedCommand(in arguments: [String]) -> CLIError? {
        var command: any ParsableCommand.Type = CipherDBCommand.self
        var path = ["cipherdb"]
        for argument in arguments {
            let subcommands = command.configuration.subcommands
            // `help` is ArgumentParser's own: `cipherdb help rekey`.
            guard !subcommands.isEmpty, !argument.hasPrefix("-"), argument != "help" else { return nil }
            let names = subcommands.map { $0.configuration.commandName ?? "" }
            if let index = names.firstIndex(of: argument) {
                command = subcommands[index]
                path.append(argument)
                continue
            }
            guard let guess = Suggestion.closest(to: argument, among: names) else { return nil }
            let shown = (path + [argument]).joined(separator: " ")
            return CLIError(
                .usage, "unknown command '\(argument)' in `\(shown)`", hint: "did you mean `\((path + [guess]).joined(separator: " "))`?")
        }
        return nil
    }
}

/// Ends a command with a status after it printed its own report (verify: bad pages found).
struct CommandFailure: Error {
    let status: ExitStatus
}

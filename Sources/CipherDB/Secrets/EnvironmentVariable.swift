import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads one environment variable that holds no secret (a path, an address).
///
/// `ProcessInfo.processInfo.environment` copies every variable of the process into Swift
/// strings that nobody wipes, secrets included: the `DB_PASS` a `--passphrase-env DB_PASS` names,
/// a `BAO_TOKEN`. So CipherDB never asks for the whole environment: secrets are read with
/// ``SecretSource/environment(_:)`` into wiped buffers, everything else one name at a time here.
///
/// ```swift
/// let folder = EnvironmentVariable.value("XDG_DATA_HOME") ?? NSHomeDirectory()
/// ```
public enum EnvironmentVariable {
    /// The value of `name`, or `nil` when it is not set.
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Whether `name` is set to a non-empty value, without copying the value (which may be a secret).
    public static func isSet(_ name: String) -> Bool {
        getenv(name).map { $0.pointee != 0 } ?? false
    }
}

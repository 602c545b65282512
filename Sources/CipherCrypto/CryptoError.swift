/// An error from a cryptographic operation.
///
/// Errors never carry key material, passphrases or plaintext.
public enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// OpenSSL could not produce random bytes.
    case randomFailure
    /// Authenticated decryption failed: wrong key, or the data or its associated data was altered.
    case authenticationFailed
    /// A parameter is outside what the algorithm accepts (the message names the parameter).
    case invalidParameter(String)
    /// Text that should be hexadecimal is not.
    case invalidHex
    /// OpenSSL reported a failure in the named operation.
    case openSSLFailure(String)

    /// A readable explanation without secrets.
    public var description: String {
        switch self {
        case .randomFailure: return "the system could not produce random bytes"
        case .authenticationFailed: return "authentication failed: wrong key, or the data was altered"
        case .invalidParameter(let name): return "invalid cryptographic parameter: \(name)"
        case .invalidHex: return "not a hexadecimal string of even length"
        case .openSSLFailure(let operation): return "OpenSSL failed in \(operation)"
        }
    }
}

import CipherCrypto
import CipherDB
import Foundation

/// Where an OpenBao or HashiCorp Vault server is and the token to use with it, for Transit slots.
///
/// Read from the variables users already have: the address from `BAO_ADDR`, else `VAULT_ADDR`;
/// the token from a token file, else `BAO_TOKEN`, else `VAULT_TOKEN` (read through
/// `SecretSource`, never an argument); a private CA from `BAO_CACERT`, else `VAULT_CACERT`.
/// The address is `https://`, whose TLS is always verified; plain `http://` only to this
/// machine's loopback (``loopbackHosts``), since every request carries the token and enrolment
/// and rotation send the master key. No proxy is ever used, whatever `http_proxy` and the like
/// say. The token is never part of a description or an error.
///
/// ```swift
/// let transit = try TransitConnection.fromEnvironment()
/// let store = try Keystore.open(at: path, credential: .transit(transit))
/// ```
public struct TransitConnection: Sendable, CustomStringConvertible {
    /// The server's base address, e.g. `https://bao.example:8200`.
    public let address: String
    /// A PEM file of the CA that signed the server's certificate (else the system's store).
    public let caFile: String?
    /// Seconds a request may take before the service counts as unreachable.
    public var timeout: Int = 10
    let token: SecretBytes

    /// The variables that name the address, in order of preference.
    public static let addressVariables = ["BAO_ADDR", "VAULT_ADDR"]
    /// The variables that hold the token, in order of preference.
    public static let tokenVariables = ["BAO_TOKEN", "VAULT_TOKEN"]
    /// The variables that name a CA file, in order of preference.
    public static let caVariables = ["BAO_CACERT", "VAULT_CACERT"]

    /// The hosts a plain `http://` address may name: this machine's loopback, where nothing
    /// crosses a network (libcurl resolves `localhost` to loopback itself, without DNS).
    public static let loopbackHosts: Set<String> = ["127.0.0.1", "[::1]", "localhost"]

    /// A connection to `address` (`https://`, or `http://` to a loopback host) with `token`.
    ///
    /// - Throws: ``KeystoreError/invalidParameter(_:)`` for an address that is not an http(s) URL,
    ///   ``KeystoreError/plaintextTransitAddress(_:)`` for `http://` to a host other than
    ///   ``loopbackHosts``: refused here, so no request is ever made.
    public init(address: String, token: SecretBytes, caFile: String? = nil) throws(KeystoreError) {
        var trimmed = address
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard trimmed.hasPrefix("http://") || trimmed.hasPrefix("https://"), trimmed.count > 8,
            !trimmed.contains(where: { $0.isWhitespace || $0 == "?" || $0 == "#" || $0 == "@" })
        else {
            throw .invalidParameter(
                "the Transit address must be an http:// or https:// URL without credentials, not '\(Self.redacted(address))'")
        }
        if trimmed.hasPrefix("http://") {
            guard let host = Self.host(ofHTTPAddress: trimmed), Self.loopbackHosts.contains(host.lowercased()) else {
                throw .plaintextTransitAddress(trimmed)
            }
        }
        guard token.count > 0, token.withUnsafeBytes({ $0.allSatisfy { $0 > 0x20 && $0 < 0x7F } }) else {
            throw .invalidParameter("the Transit token is empty or holds characters a token never has")
        }
        self.address = trimmed
        self.token = token
        self.caFile = caFile
    }

    /// Whether the environment names an address and holds a token: what unlocking without flags
    /// needs to try Transit slots before prompting.
    public static func isConfigured() -> Bool {
        isConfigured(lookup: EnvironmentVariable.value, isSet: EnvironmentVariable.isSet)
    }

    /// ``isConfigured()`` for the variables in `environment` (a test's, say).
    public static func isConfigured(environment: [String: String]) -> Bool {
        isConfigured(lookup: { environment[$0] }, isSet: { environment[$0].map { !$0.isEmpty } ?? false })
    }

    private static func isConfigured(lookup: (String) -> String?, isSet: (String) -> Bool) -> Bool {
        first(of: addressVariables, in: lookup) != nil && tokenVariables.contains(where: isSet)
    }

    /// The connection the environment describes, with the token from `tokenFile` when given.
    ///
    /// - Throws: ``KeystoreError/invalidParameter(_:)`` when no address is set,
    ///   ``KeystoreError/secretSource(_:)`` when the token cannot be read.
    public static func fromEnvironment(tokenFile: String? = nil) throws(KeystoreError) -> TransitConnection {
        try fromEnvironment(tokenFile: tokenFile, lookup: EnvironmentVariable.value, isSet: EnvironmentVariable.isSet)
    }

    /// ``fromEnvironment(tokenFile:)`` with the address, CA and token names from `environment` (a
    /// test's, say); the token itself is read from the process environment by name, into a wiped buffer.
    public static func fromEnvironment(tokenFile: String? = nil, environment: [String: String]) throws(KeystoreError) -> TransitConnection {
        try fromEnvironment(
            tokenFile: tokenFile, lookup: { environment[$0] }, isSet: { environment[$0].map { !$0.isEmpty } ?? false })
    }

    private static func fromEnvironment(
        tokenFile: String?, lookup: (String) -> String?, isSet: (String) -> Bool
    ) throws(KeystoreError) -> TransitConnection {
        guard let (_, address) = first(of: addressVariables, in: lookup) else {
            throw .invalidParameter("no Transit server address: set BAO_ADDR or VAULT_ADDR")
        }
        let source: SecretSource
        if let tokenFile {
            source = .file(tokenFile)
        } else if let name = tokenVariables.first(where: isSet) {
            // By name, into a wiped buffer: never as a String.
            source = .environment(name)
        } else {
            throw .invalidParameter("no Transit token: set BAO_TOKEN or VAULT_TOKEN, or give a token file")
        }
        let token: SecretBytes
        do { token = try source.read() } catch { throw .secretSource(error) }
        return try TransitConnection(address: address, token: token, caFile: first(of: caVariables, in: lookup)?.1)
    }

    /// `address` fit to quote in an error: what could be a credential (user information before
    /// an `@`, a query, a fragment) replaced by `…`.
    static func redacted(_ address: String) -> String {
        var text = Substring(address)
        if let cut = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<cut] + "…" }
        let schemeEnd = text.range(of: "://")?.upperBound ?? text.startIndex
        if let at = text[schemeEnd...].lastIndex(of: "@") { text = text[..<schemeEnd] + "…" + text[text.index(after: at)...] }
        return String(text)
    }

    /// The host of `http://HOST[:PORT][/PATH]` (a bracketed IPv6 address keeps its brackets), or
    /// `nil` when the authority is not exactly a host and an optional numeric port.
    private static func host(ofHTTPAddress address: String) -> String? {
        let authority = address.dropFirst("http://".count).prefix { $0 != "/" }
        let host: Substring
        let rest: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            rest = authority[authority.index(after: close)...]
        } else {
            host = authority.prefix { $0 != ":" }
            rest = authority.dropFirst(host.count)
        }
        if !rest.isEmpty {
            guard rest.first == ":", rest.count > 1, rest.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        }
        return host.isEmpty ? nil : String(host)
    }

    /// The first of `names` set to a non-empty value (never a token: see ``fromEnvironment(tokenFile:)``).
    private static func first(of names: [String], in lookup: (String) -> String?) -> (String, String)? {
        for name in names { if let value = lookup(name), !value.isEmpty { return (name, value) } }
        return nil
    }

    /// The address, never the token.
    public var description: String { "Transit at \(address) (token redacted)" }
}

/// Why a request to a Transit engine failed, in the terms a caller acts on. The message comes
/// from the service or from libcurl and names the server, never the token or key material.
public struct TransitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// The service could not be reached, timed out, or is sealed or overloaded (5xx).
        case unavailable
        /// TLS failed: the certificate did not verify against the CA, or the handshake failed.
        case tls
        /// The token is invalid, expired or revoked, or its policy does not allow the request.
        case permissionDenied
        /// The Transit key (or the mount) does not exist: deleted, or never created.
        case keyNotFound
        /// The ciphertext's key version is below the key's `min_decryption_version`.
        case ciphertextTooOld
        /// The service refused the request for another reason (its message says which).
        case rejected
        /// The answer was not what a Transit engine sends: not JSON, or JSON without what the
        /// call returns (something else answers at the address, or a proxy in between).
        case invalidResponse
    }

    /// What went wrong.
    public let kind: Kind
    /// What to tell the user, its control characters escaped.
    public let message: String

    /// Creates an error; control characters in `message` (which quotes text from outside the
    /// process) are escaped (`\x1B`).
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = EscapedText.escapingControlCharacters(message)
    }

    /// The message.
    public var description: String { message }
}

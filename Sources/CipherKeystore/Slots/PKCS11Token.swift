import CPKCS11Shim
import CipherCrypto
import CipherDB
import Foundation

/// A PKCS#11 module (an HSM's or smart card's library, SoftHSM2 in tests) and the user PIN of a
/// token in it, for PKCS#11 slots.
///
/// The module is loaded at run time (`dlopen`); the token is found by its label. The PIN is read
/// through `SecretSource` by the caller and never appears in a description or an error.
///
/// A slot remembers the module it was added with. Without a module path here, each slot's
/// remembered module is loaded, but only if it passes ``checkRememberedModule(_:)``: the path
/// comes from the keystore file, which anyone who can write that file chooses.
public struct PKCS11Token: Sendable, CustomStringConvertible {
    /// The module's path, e.g. `/usr/lib/softhsm/libsofthsm2.so`: the caller's choice, loaded as
    /// given. `nil`: the module each slot remembers, after ``checkRememberedModule(_:)``.
    public let modulePath: String?
    /// The token's label; `nil` when unlocking: each slot names its token.
    public let tokenLabel: String?
    let pin: SecretBytes

    /// The variable that names the module when no path is given.
    public static let moduleVariable = "CIPHERDB_PKCS11_MODULE"

    /// A module and PIN.
    ///
    /// - Parameters:
    ///   - modulePath: the module to load; `nil` to load the module each slot remembers (adding a
    ///     slot needs a path).
    ///   - tokenLabel: the token's label; `nil` when unlocking.
    ///   - pin: the token's user PIN.
    /// - Throws: ``KeystoreError/invalidParameter(_:)`` for an empty module path or a label
    ///   longer than PKCS#11's 32 bytes.
    public init(modulePath: String?, tokenLabel: String? = nil, pin: SecretBytes) throws(KeystoreError) {
        guard modulePath != "" else { throw .invalidParameter("no PKCS#11 module: give its path or set \(Self.moduleVariable)") }
        if let tokenLabel { try PKCS11Slot.validate(tokenLabel: tokenLabel) }
        self.modulePath = modulePath
        self.tokenLabel = tokenLabel
        self.pin = pin
    }

    /// The module and token, never the PIN.
    public var description: String {
        "PKCS#11 token \(tokenLabel.map { "'\($0)'" } ?? "(any)") in \(modulePath ?? "the module its slot remembers") (PIN redacted)"
    }

    /// Checks a module path as an unlock checks the one a slot remembers, before loading it:
    /// absolute, and, symlinks resolved, the file and every folder above it owned by root or the
    /// effective user and not writable by group or others. Returns the resolved path, the one
    /// that would be loaded.
    ///
    /// - Throws: ``KeystoreError/pkcs11(_:)``: ``PKCS11Error/Kind/untrustedModule`` naming
    ///   the file or folder at fault and why, or ``PKCS11Error/Kind/moduleNotLoaded``
    ///   when the path cannot be resolved (missing).
    public static func checkRememberedModule(_ path: String) throws(KeystoreError) -> String {
        do {
            return try PKCS11ModuleCheck.system.trustedPath(path)
        } catch {
            throw error.keystoreError(context: "the keystore names")
        }
    }
}

extension PKCS11ModuleCheck.Refusal {
    /// The refusal as a PKCS#11 failure; `context` says who names the module ("slot 2 remembers").
    func keystoreError(context: String) -> KeystoreError {
        if case .unreadable = problem {
            return .pkcs11(PKCS11Error(.moduleNotLoaded, "cannot load the PKCS#11 module \(context): \(self)"))
        }
        return .pkcs11(PKCS11Error(.untrustedModule, "\(self): not loading a PKCS#11 module \(context)"))
    }
}

/// Why a PKCS#11 operation failed. The message names the module, token and key, never the PIN.
public struct PKCS11Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// The module could not be loaded or is not a PKCS#11 module.
        case moduleNotLoaded
        /// No module was given and the slot remembers none (a slot added before slots remembered it).
        case noModule
        /// The module a slot remembers fails the check that runs before loading it (see
        /// ``PKCS11Token/checkRememberedModule(_:)``): someone other than root and this user
        /// could have put code there. It was not loaded.
        case untrustedModule
        /// No token with the label is present.
        case tokenNotFound
        /// The PIN is wrong.
        case pinIncorrect
        /// The token locked the PIN after too many wrong ones.
        case pinLocked
        /// No key with the label is on the token (deleted?).
        case keyNotFound
        /// The token's key does not open the slot (a different key under the same label).
        case keyMismatch
        /// Another PKCS#11 failure (the message has the CKR code).
        case failed
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

/// A logged-in session on one token of a loaded module, closed (logout, finalize, unload) on release.
final class PKCS11Session {
    private let handle: OpaquePointer
    let token: PKCS11Token
    let tokenLabel: String

    /// Loads the module (`modulePath`, else the token's), finds `tokenLabel` and logs in with the PIN.
    init(_ token: PKCS11Token, tokenLabel: String, modulePath: String? = nil) throws(KeystoreError) {
        guard let module = modulePath ?? token.modulePath else {
            throw .pkcs11(PKCS11Error(.noModule, "no PKCS#11 module for token '\(tokenLabel)': give its path"))
        }
        var session: OpaquePointer?
        var error = [CChar](repeating: 0, count: 512)
        let rv = token.pin.withUnsafeBytes { pin in
            cdb_p11_open(module, tokenLabel, pin.bindMemory(to: UInt8.self).baseAddress, pin.count, &session, &error, error.count)
        }
        let detail = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard rv == CDB_P11_OK, let session else {
            throw Self.failure(rv, "PKCS#11 token '\(tokenLabel)' in \(module)" + (detail.isEmpty ? "" : ": \(detail)"))
        }
        self.handle = session
        self.token = token
        self.tokenLabel = tokenLabel
    }

    deinit { cdb_p11_close(handle) }

    /// How many PIN logins this process has attempted (`C_Login` calls), for tests: a wrong PIN
    /// must cost one try of the token's retry counter per unlock, however many slots it has.
    static var loginAttempts: UInt { cdb_p11_login_attempts() }

    /// Finds the key labelled `label`, generating it (non-extractable AES-256) when `create`.
    /// Returns whether it was generated.
    @discardableResult
    func key(_ label: String, create: Bool) throws(KeystoreError) -> Bool {
        var created: Int32 = 0
        let rv = cdb_p11_key(handle, label, create ? 1 : 0, &created)
        guard rv == CDB_P11_OK else { throw Self.failure(rv, "key '\(label)' on PKCS#11 token '\(tokenLabel)'") }
        return created != 0
    }

    /// Whether the key labelled `label` can leave the token: (extractable, sensitive, never extractable).
    func flags(ofKey label: String) throws(KeystoreError) -> (extractable: Bool, sensitive: Bool, neverExtractable: Bool) {
        var extractable: Int32 = 1
        var sensitive: Int32 = 0
        var neverExtractable: Int32 = 0
        let rv = cdb_p11_key_flags(handle, label, &extractable, &sensitive, &neverExtractable)
        guard rv == CDB_P11_OK else { throw Self.failure(rv, "key '\(label)' on PKCS#11 token '\(tokenLabel)'") }
        return (extractable != 0, sensitive != 0, neverExtractable != 0)
    }

    /// Destroys the key labelled `label`.
    func destroyKey(_ label: String) throws(KeystoreError) {
        let rv = cdb_p11_destroy_key(handle, label)
        guard rv == CDB_P11_OK else { throw Self.failure(rv, "key '\(label)' on PKCS#11 token '\(tokenLabel)'") }
    }

    /// AES-256-GCM in the token: returns ciphertext ‖ tag.
    func seal(_ plaintext: SecretBytes, keyLabel: String, iv: [UInt8], associatedData: [UInt8]) throws(KeystoreError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: plaintext.count + 16)
        var written = output.count
        let rv = plaintext.withUnsafeBytes { input in
            cdb_p11_gcm(
                handle, keyLabel, 1, iv, iv.count, associatedData, associatedData.count,
                input.bindMemory(to: UInt8.self).baseAddress, input.count, &output, &written)
        }
        guard rv == CDB_P11_OK, written == output.count else {
            throw Self.failure(rv, "AES-GCM with key '\(keyLabel)' on PKCS#11 token '\(tokenLabel)'")
        }
        return output
    }

    /// Opens ciphertext ‖ tag into a secret buffer.
    func open(_ sealed: [UInt8], keyLabel: String, iv: [UInt8], associatedData: [UInt8]) throws(KeystoreError) -> SecretBytes {
        guard sealed.count > 16 else { throw .malformed("a PKCS#11 slot's ciphertext is too short") }
        var rv: UInt = CDB_P11_OK
        // Tokens may ask for room for the whole input (SoftHSM2 does): decrypt into a scratch
        // buffer that is itself secret, then keep what was written.
        var written = sealed.count
        let scratch = SecretBytes(count: sealed.count) { output in
            rv = cdb_p11_gcm(
                handle, keyLabel, 0, iv, iv.count, associatedData, associatedData.count, sealed, sealed.count,
                output.bindMemory(to: UInt8.self).baseAddress, &written)
        }
        let plaintext = scratch.withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[..<min(written, $0.count)])) }
        guard rv == CDB_P11_OK, written == sealed.count - 16 else {
            // A GCM tag that fails is "encrypted data invalid" (SoftHSM2 says CKR_GENERAL_ERROR):
            // the key under the label is another key than the one that sealed the slot.
            if rv == 0x40 || rv == 0x41 || rv == 0xC0 || rv == 0x05 {
                throw .pkcs11(PKCS11Error(.keyMismatch, "key '\(keyLabel)' on PKCS#11 token '\(tokenLabel)' does not open this slot"))
            }
            throw Self.failure(rv, "AES-GCM with key '\(keyLabel)' on PKCS#11 token '\(tokenLabel)'")
        }
        return plaintext
    }

    private static func failure(_ rv: UInt, _ context: String) -> KeystoreError {
        switch rv {
        case CDB_P11_MODULE_NOT_LOADED: return .pkcs11(PKCS11Error(.moduleNotLoaded, "cannot load the PKCS#11 module: \(context)"))
        case CDB_P11_TOKEN_NOT_FOUND: return .pkcs11(PKCS11Error(.tokenNotFound, "not found: \(context)"))
        case CDB_P11_KEY_NOT_FOUND: return .pkcs11(PKCS11Error(.keyNotFound, "not found: \(context)"))
        case CDB_P11_KEY_AMBIGUOUS: return .pkcs11(PKCS11Error(.failed, "more than one \(context)"))
        case 0xA0, 0xA2: return .pkcs11(PKCS11Error(.pinIncorrect, "wrong PIN for \(context)"))
        case 0xA4: return .pkcs11(PKCS11Error(.pinLocked, "the PIN is locked: \(context)"))
        default: return .pkcs11(PKCS11Error(.failed, "\(context): PKCS#11 error 0x\(String(rv, radix: 16))"))
        }
    }
}

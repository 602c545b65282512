import CipherCrypto
import Foundation

/// A rough estimate of how hard a new passphrase is to guess, for a warning, never a guarantee.
///
/// Bits are the length times log2 of the pool its character classes span (lower case, upper
/// case, digits, ASCII symbols and space, anything else), with a character repeated or continuing
/// a run (`aaaa`, `1234`, `abcd`) counted as almost free. It overrates dictionary words and
/// underrates random words (a few long words from a list of thousands read as many characters),
/// which is why the threshold is modest.
struct PassphraseStrength: Equatable {
    /// The estimated strength in bits.
    let bits: Int
    /// Characters counted.
    let length: Int
    /// The size of the character pool.
    let pool: Int

    /// Below this a new passphrase is refused without `--allow-weak-passphrase`: about 10^15
    /// guesses, hours to days for an offline attacker with GPUs at SQLCipher 3's 64,000 iterations.
    static let minimumBits = 50

    /// The estimate for `secret` (read in place, never copied into a String).
    init(_ secret: SecretBytes) {
        var characters: [Unicode.Scalar] = []
        secret.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var decoder = UTF8()
            var iterator = bytes.makeIterator()
            while case .scalarValue(let scalar) = decoder.decode(&iterator) { characters.append(scalar) }
        }
        self.init(characters)
    }

    init(_ characters: [Unicode.Scalar]) {
        var pool = 0
        if characters.contains(where: { ("a"..."z").contains($0) }) { pool += 26 }
        if characters.contains(where: { ("A"..."Z").contains($0) }) { pool += 26 }
        if characters.contains(where: { ("0"..."9").contains($0) }) { pool += 10 }
        if characters.contains(where: { $0.isASCII && !$0.properties.isAlphabetic && !("0"..."9").contains($0) }) { pool += 33 }
        if characters.contains(where: { !$0.isASCII }) { pool += 100 }
        var bits = 0.0
        let perCharacter = log2(Double(max(pool, 2)))
        for (index, character) in characters.enumerated() {
            if index > 0 {
                let step = Int(character.value) - Int(characters[index - 1].value)
                // A repeat or a run (abc, 321) adds about one bit, not a full character.
                if abs(step) <= 1 {
                    bits += 1
                    continue
                }
            }
            bits += perCharacter
        }
        self.bits = Int(bits)
        self.length = characters.count
        self.pool = pool
    }

    /// Whether it is below ``minimumBits``.
    var isWeak: Bool { bits < Self.minimumBits }

    /// "about 28 bits (6 characters from a pool of 36)".
    var summary: String { "about \(bits) bits (\(length) character\(length == 1 ? "" : "s") from a pool of \(pool))" }

    /// Refuses a weak new passphrase unless `allowed`; with `allowed`, warns and goes on.
    static func check(_ key: ResolvedKey, allowed: Bool, warn: (String) -> Void) throws(CLIError) {
        guard key.keyID == nil, case .passphrase(let secret) = key.key else { return }
        try refuseIfWeak(PassphraseStrength(secret), of: .newPassphrase, allowed: allowed, warn: warn)
    }

    /// Refuses a weak transfer passphrase unless `allowed` (then warns): the bundle file travels,
    /// and whoever gets it can guess offline for a raw database key.
    static func checkTransfer(_ secret: SecretBytes, allowed: Bool, warn: (String) -> Void) throws(CLIError) {
        try refuseIfWeak(PassphraseStrength(secret), of: .transferPassphrase, allowed: allowed, warn: warn)
    }

    /// What a passphrase protects, for the refusal's words.
    enum Subject {
        /// A database's new passphrase.
        case newPassphrase
        /// The passphrase a key export is wrapped under.
        case transferPassphrase
    }

    private static func refuseIfWeak(
        _ strength: PassphraseStrength, of subject: Subject, allowed: Bool, warn: (String) -> Void
    ) throws(CLIError) {
        guard strength.isWeak else { return }
        let refusal = weakError(strength, of: subject)
        if allowed {
            warn("warning: \(refusal.message) (kept: --allow-weak-passphrase)")
            return
        }
        throw refusal
    }

    /// The refusal of a weak passphrase.
    static func weakError(_ strength: PassphraseStrength, of subject: Subject = .newPassphrase) -> CLIError {
        let message: String
        var hint =
            "use at least \(minimumBits) bits: 5 random words, or 10+ random characters mixing cases, digits and symbols; "
            + "--allow-weak-passphrase keeps this one anyway"
        switch subject {
        case .newPassphrase:
            message =
                "the new passphrase is weak: \(strength.summary)"
                + "; whoever gets a copy of the file can try guesses offline, as fast as their hardware allows"
            hint += ", or use --raw-key-file / --key-id"
        case .transferPassphrase:
            message = "the transfer passphrase is weak: \(strength.summary); whoever gets the file can try guesses offline"
        }
        return CLIError(.usage, message, hint: hint)
    }
}

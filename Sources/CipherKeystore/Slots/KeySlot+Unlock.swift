import CipherCrypto

extension KeySlotKDF {
    /// The key-derivation work one unlock may spend over all passphrase slots together, in
    /// ``cost`` units: 2^25, one slot at the per-slot scrypt limit (N·r·p ≤ 2^25), about 10 s on
    /// the reference machine, or 32 slots at the default.
    ///
    /// Per-slot limits alone let a crafted file with 8 slots at the limit spend 84 s on one wrong
    /// passphrase; with this budget the worst case is the cost of one such slot. Writers refuse a
    /// passphrase slot that would take the keystore's total beyond it, so an honest keystore
    /// never reaches it.
    public static let unlockBudget: UInt64 = 1 << 25

    /// The work of one derivation in budget units: N·r·p for scrypt (its time is linear in each),
    /// the iteration count for PBKDF2-HMAC-SHA256.
    ///
    /// Measured with OpenSSL 3 here: about 0.5 µs per scrypt unit and 0.3 µs per PBKDF2
    /// iteration, so counting an iteration as one unit over-charges PBKDF2 slightly, never under.
    public var cost: UInt64 {
        switch self {
        case .scrypt(let parameters): return parameters.n * UInt64(parameters.r) * UInt64(parameters.p)
        case .pbkdf2SHA256(let iterations): return UInt64(max(0, iterations))
        }
    }
}

extension KeySlot {
    /// The KDF work unwrapping this slot costs (0 for slots without a KDF).
    var kdfCost: UInt64 {
        (try? checkedKDF())?.map(\.cost) ?? 0
    }

    /// Checks, before any KDF runs, that the passphrase slots of `slots` and a new slot costing
    /// `added` fit in one unlock's budget together (what a writer checks before it adds or
    /// changes a passphrase slot).
    static func checkBudget(
        of slots: [KeySlot], adding added: UInt64 = 0, budget: UInt64 = KeySlotKDF.unlockBudget
    ) throws(KeystoreError) {
        let total = slots.reduce(added) { $0 + $1.kdfCost }
        guard total <= budget else {
            throw .refused(
                "the passphrase slots would cost \(total) units of key derivation together, above the unlock budget of \(budget) "
                    + "(use a cheaper KDF or remove a passphrase slot)")
        }
    }

    /// Finds the slot `credential` opens and returns its id and the master key.
    ///
    /// Only slots of the credential's kind are tried, cheapest KDF first, and their KDFs share
    /// one `budget`: a slot whose KDF would take the total beyond it is not run, so a file with
    /// many expensive slots costs at most one budget per wrong passphrase.
    ///
    /// - Parameter excluding: slot ids not to try (already matched by another credential).
    /// - Throws: ``KeystoreError/noMatchingSlot`` when no slot takes the credential,
    ///   ``KeystoreError/wrongPassphrase`` when none of them opens,
    ///   ``KeystoreError/unlockBudgetExceeded(tried:skipped:)`` when slots were left untried; for
    ///   Transit and PKCS#11 slots, the first slot's failure when none opens, except that a wrong
    ///   or locked PIN is thrown at once (one PIN login per unlock).
    static func open(
        _ slots: [KeySlot], with credential: KeystoreCredential, keystoreID: [UInt8],
        budget: UInt64 = KeySlotKDF.unlockBudget, excluding: Set<UInt8> = []
    ) throws(KeystoreError) -> (slotID: UInt8, masterKey: SecretBytes) {
        try credential.validate()
        let candidates = slots.enumerated()
            .filter { $0.element.accepts(credential) && !excluding.contains($0.element.slotID) }
            .sorted { ($0.element.kdfCost, $0.offset) < ($1.element.kdfCost, $1.offset) }
            .map(\.element)
        guard !candidates.isEmpty else { throw .noMatchingSlot }
        var spent: UInt64 = 0
        var firstFailure: KeystoreError?
        for (tried, slot) in candidates.enumerated() {
            let cost = slot.kdfCost
            guard cost <= budget - spent else {
                throw .unlockBudgetExceeded(tried: tried, skipped: candidates.count - tried)
            }
            spent += cost
            do {
                if let master = try slot.unwrap(credential: credential, keystoreID: keystoreID) {
                    return (slot.slotID, master)
                }
            } catch {
                // A service or token that fails for one slot may serve the next (another Transit
                // server, another token); the first failure is the answer if none opens. A wrong
                // or locked PIN stops at once: each login with it would use up one more try of the
                // token's retry counter (3 slots on one token, one typo: the PIN locked).
                switch error {
                case .pkcs11(let failure) where failure.kind == .pinIncorrect || failure.kind == .pinLocked: throw error
                case .transit, .pkcs11, .tampered:
                    // "No module" for a slot that remembers none says least: another slot's failure says more.
                    if case .pkcs11(let first)? = firstFailure, first.kind == .noModule { firstFailure = error }
                    firstFailure = firstFailure ?? error
                default: throw error
                }
            }
        }
        if let firstFailure { throw firstFailure }
        throw .wrongPassphrase
    }
}

import CipherCrypto
import Foundation

// MARK: - Storage credentials of snapshot repositories

extension Keystore {
    /// Seals the storage credentials of snapshot repository `repository` (restic's location, matched
    /// exactly), replacing any it had.
    ///
    /// ```swift
    /// try keystore.setStorageCredentials(
    ///     repository: "s3:https://s3.example.com/backups/app", accessKeyID: "AKIAEXAMPLE", secretAccessKey: secret)
    /// ```
    ///
    /// - Parameters:
    ///   - repository: the repository, as restic names it.
    ///   - accessKeyID: 1 to 256 bytes of UTF-8, no control characters.
    ///   - secretAccessKey: 1 to 1024 bytes, no NUL byte.
    /// - Throws: `invalidParameter` (never quoting the secret); file and lock errors.
    public func setStorageCredentials(repository: String, accessKeyID: String, secretAccessKey: SecretBytes) throws(KeystoreError) {
        let record = CredentialRecord(repository: repository, accessKeyID: accessKeyID, secretAccessKey: secretAccessKey)
        if let problem = record.problem { throw .invalidParameter(problem) }
        try transaction { (draft) throws(KeystoreError) in
            draft.body.credentials.removeAll { $0.repository == repository }
            draft.body.credentials.append(record)
        }
    }

    /// The storage credentials of `repository` (an exact match of restic's location), or `nil`.
    /// Nothing is written.
    ///
    /// ```swift
    /// let stored = try keystore.storageCredentials(repository: "s3:https://s3.example.com/backups/app")
    /// ```
    public func storageCredentials(repository: String) throws(KeystoreError) -> RepositoryCredentials? {
        try readBody { (body) throws(KeystoreError) -> RepositoryCredentials? in
            body.credentials.first { $0.repository == repository }.map {
                RepositoryCredentials(accessKeyID: $0.accessKeyID, secretAccessKey: $0.secretAccessKey)
            }
        }
    }

    /// Removes the storage credentials of `repository`; returns whether there were any.
    ///
    /// ```swift
    /// try keystore.removeStorageCredentials(repository: "s3:https://s3.example.com/backups/app")
    /// ```
    @discardableResult
    public func removeStorageCredentials(repository: String) throws(KeystoreError) -> Bool {
        try transaction { (draft) throws(KeystoreError) -> Bool in
            let before = draft.body.credentials.count
            draft.body.credentials.removeAll { $0.repository == repository }
            return draft.body.credentials.count != before
        }
    }

    /// The repositories that have storage credentials, with their access key ids (never the
    /// secrets), sorted by repository. Nothing is written.
    ///
    /// ```swift
    /// for known in try keystore.knownStorageCredentials() { print(known.repository, known.accessKeyID) }
    /// ```
    public func knownStorageCredentials() throws(KeystoreError) -> [KnownCredentials] {
        try readBody { (body) throws(KeystoreError) -> [KnownCredentials] in
            body.credentials.sorted(by: KeystoreBody.credentialOrder).map(\.info)
        }
    }
}

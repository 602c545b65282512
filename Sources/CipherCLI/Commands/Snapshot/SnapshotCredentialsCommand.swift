import ArgumentParser

/// `cipherdb snapshot credentials set|list|remove`: S3 credentials sealed in the keystore, per repository.
struct SnapshotCredentialsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credentials",
        abstract: "Keep a repository's S3 credentials in the keystore instead of restic's environment.",
        discussion: """
            The keystore seals an access key id and secret access key per repository (restic's location, \
            matched exactly). Every snapshot command given --repo-key-id ID unlocks the keystore already: it \
            then hands restic the stored pair as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, in place of \
            the ones in the environment (AWS_SESSION_TOKEN is withheld too); without stored credentials \
            restic's environment gives them, as before. --verbose says which. The secret is never printed, \
            listed or put on restic's command line.

            Examples:
              cipherdb snapshot credentials set --repo s3:https://s3.example.com/backups/app --access-key-id AKIAEXAMPLE --secret-access-key-file s3-secret.txt
              cipherdb snapshot credentials list --json
              cipherdb snapshot credentials remove --repo s3:https://s3.example.com/backups/app
            """,
        subcommands: [SnapshotCredentialsSetCommand.self, SnapshotCredentialsListCommand.self, SnapshotCredentialsRemoveCommand.self]
    )
}

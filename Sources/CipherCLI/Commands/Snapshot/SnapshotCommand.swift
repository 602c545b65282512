import ArgumentParser

/// `cipherdb snapshot …`: encrypted snapshots in a restic repository (S3 or a folder).
struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Keep encrypted point-in-time snapshots of databases off the machine: any S3 storage or a folder, through restic.",
        discussion: """
            A snapshot is the database file's own ciphertext at one commit, taken while apps keep writing and \
            streamed to `restic backup --stdin` (no second copy on disk; a plaintext database is refused \
            unless --allow-plaintext). Pages no commit changed keep their bytes, so restic ships only the \
            changed ones; a rekey ships the whole file. restic encrypts everything again under the \
            repository password. Each snapshot carries a manifest: the key that opens it (a keystore id and \
            version, or "passphrase"), its settings, a SHA-256 of its bytes and each table's rows. Restores \
            are checked against that hash; `snapshot drill` restores into a file with no name, opens the copy \
            with the key its manifest names and checks every page and count.

            The repository is --repo URL (restic's syntax: s3:https://HOST/BUCKET/PATH, s3:http://127.0.0.1:PORT/BUCKET/PATH, \
            a folder), else $CIPHERDB_SNAPSHOT_REPO. Its password comes from --repo-password-env VAR, \
            --repo-password-file PATH or --repo-password-fd N (else a prompt) and reaches restic on an inherited \
            pipe, never its command line or environment. S3 credentials come from restic's usual environment: \
            AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; or, with --repo-key-id, from the keystore when \
            `snapshot credentials set` stored some for the repository. restic must be installed (Debian: apt-get \
            install restic).

            Examples:
              export CIPHERDB_SNAPSHOT_REPO=s3:https://s3.example.com/backups/app
              cipherdb snapshot init --repo-password-file repo-pass.txt
              cipherdb snapshot create app.db --key-id app --repo-password-file repo-pass.txt
              cipherdb snapshot list --repo-password-file repo-pass.txt
              cipherdb snapshot drill --latest --repo-password-file repo-pass.txt
              cipherdb snapshot restore 1a2b3c4d --to app-restored.db --repo-password-file repo-pass.txt
              cipherdb snapshot forget --keep-daily 7 --keep-weekly 4 --prune --repo-password-file repo-pass.txt
            """,
        subcommands: [
            SnapshotInitCommand.self, SnapshotCreateCommand.self, SnapshotListCommand.self, SnapshotRestoreCommand.self,
            SnapshotForgetCommand.self, SnapshotDrillCommand.self, SnapshotCredentialsCommand.self,
        ]
    )
}

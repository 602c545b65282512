// A child process for the keystore tests: it reads or changes a keystore and is SIGKILLed at
// random moments by the parent. The passphrase comes from CIPHERDB_TEST_PASSPHRASE (never argv).
//
//   keystore-crash-driver rotate-loop <keystore> <database> <id>   rotate the key forever
//   keystore-crash-driver churn <keystore>                          rewrite the keystore forever
//   keystore-crash-driver rotate-limited <keystore> <db> <id> <bytes>  rotate under RLIMIT_FSIZE
//   keystore-crash-driver rotate-as-user <keystore> <db> <id> <uid>   rotate after dropping to uid
//   keystore-crash-driver count <keystore> <database> <id>          print the rows of table t
//   keystore-crash-driver add <keystore> <id>                       add a key and print its id
//   keystore-crash-driver list <keystore>                           print entry ids and primaries
//   keystore-crash-driver write-key-file-limited <keystore> <path> <bytes>  write a key file under RLIMIT_FSIZE
import CipherDB
import CipherKeystore
import Foundation

/// Writes a line unbuffered, so the parent sees it before a SIGKILL.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail("usage: keystore-crash-driver <mode> <keystore> …") }
let passphrase: KeystoreCredential
do {
    passphrase = .passphrase(try SecretSource.environment("CIPHERDB_TEST_PASSPHRASE").read())
} catch {
    fail("\(error)")
}

do {
    let keystore = try Keystore.open(at: arguments[2], credential: passphrase)
    switch arguments[1] {
    case "rotate-loop" where arguments.count == 5:
        while true {
            let result = try keystore.rotate(id: arguments[4], databasePath: arguments[3])
            say("rotated \(result.newVersion)")
        }
    case "churn":
        var index = 0
        while true {
            index += 1
            try keystore.addKey(id: "churn-\(getpid())-\(index)")
            try keystore.changePassphrase(from: passphrase, to: passphrase)
            say("churned \(index)")
        }
    case "rotate-limited" where arguments.count == 6:
        // Limit the size of any file this process writes, so the rekey journal cannot be written.
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit(rlim_cur: rlim_t(arguments[5]) ?? 65536, rlim_max: rlim_t.max)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit)
        do {
            try keystore.rotate(id: arguments[4], databasePath: arguments[3])
            say("rotated unexpectedly")
        } catch {
            say("rotationFailed: \(error)")
        }
    case "rotate-as-user" where arguments.count == 6:
        // Drop to another user (when root) so a database file without write permission really
        // cannot be written, then try to rotate it.
        if let uid = UInt32(arguments[5]), getuid() == 0, uid != 0 {
            guard setgid(uid) == 0, setuid(uid) == 0 else { fail("cannot switch to uid \(uid)") }
        }
        do {
            try keystore.rotate(id: arguments[4], databasePath: arguments[3])
            say("rotated unexpectedly")
        } catch {
            say("rotationFailed: \(error)")
        }
    case "count" where arguments.count == 5:
        let db = try keystore.openDatabase(path: arguments[3], id: arguments[4], flags: .readWrite)
        defer { db.close() }
        say(String(try db.intForQuery("SELECT count(*) FROM t") ?? -1))
    case "add" where arguments.count == 4:
        try keystore.addKey(id: arguments[3])
        say(arguments[3])
    case "write-key-file-limited" where arguments.count == 5:
        // Limit the size of any file this process writes, so the key file cannot be written whole.
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit(rlim_cur: rlim_t(arguments[4]) ?? 16, rlim_max: rlim_t.max)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit)
        do {
            try SecretSource.writeKeyFile(Keystore.generateKeyFileSecret(), to: arguments[3])
            say("written unexpectedly")
        } catch {
            say("writeFailed: \(error)")
        }
    case "list":
        for entry in try keystore.list() { say("\(entry.id) \(entry.primaryVersion)") }
    default:
        fail("unknown mode or wrong arguments")
    }
} catch {
    fail("error: \(error)")
}

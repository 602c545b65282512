#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The 32 bytes of the key file whose slot the seed keystores carry (MakeSeeds adds the slot), so
/// `Keystore.open(at:credential: .keyFile(...))` on a seed unlocks it and reads its body, without a KDF.
public let seedKeyFileSecret: [UInt8] = (0..<32).map { UInt8(0xA0 &+ $0) }

/// One file, mode 0600, in a private directory made once per process (under /dev/shm when it exists,
/// else $TMPDIR or /tmp) and reused for every input: the keystore and secret-file entry points take a
/// path. The directory is removed at exit; a crash leaves it (prefix `cipherdb-fuzz-`).
public final class ScratchFile: @unchecked Sendable {
    /// The file's path.
    public let path: String
    private let directory: String
    private let writer: Int32

    /// Creates the directory and the file `name` in it; aborts if it cannot (nothing to fuzz then).
    public init(name: String) {
        var base = "/tmp"
        if access("/dev/shm", W_OK) == 0 {
            base = "/dev/shm"
        } else if let tmp = getenv("TMPDIR") {
            base = String(cString: tmp)
        }
        var template = Array("\(base)/cipherdb-fuzz-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            fatalError("mkdtemp in \(base) failed: \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        path = directory + "/" + name
        writer = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard writer >= 0 else { fatalError("cannot create \(path): \(String(cString: strerror(errno)))") }
        ScratchFile.register(self)
    }

    /// Replaces the file's contents with `bytes`.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        guard ftruncate(writer, 0) == 0 else { fatalError("ftruncate \(path): \(String(cString: strerror(errno)))") }
        var done = 0
        while done < bytes.count {
            let got = pwrite(writer, bytes.baseAddress! + done, bytes.count - done, off_t(done))
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { fatalError("pwrite \(path): \(String(cString: strerror(errno)))") }
            done += got
        }
    }

    /// Replaces the file's contents with `bytes`.
    public func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// A new read-only descriptor on the file (the caller keeps it for the process's life).
    public func openForReading() -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { fatalError("cannot open \(path): \(String(cString: strerror(errno)))") }
        return fd
    }

    private func remove() {
        unlink(path)
        rmdir(directory)
    }

    // libFuzzer ends a run with exit(), so an atexit handler removes the scratch directories.
    nonisolated(unsafe) private static var live: [ScratchFile] = []

    private static func register(_ file: ScratchFile) {
        if live.isEmpty { atexit { for file in ScratchFile.live { file.remove() } } }
        live.append(file)
    }
}

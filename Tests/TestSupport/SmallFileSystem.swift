import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted for a test (root only): a real full disk.
public struct SmallFileSystem {
    /// The mount point.
    public let path: String

    /// Mounts a tmpfs of `megabytes` in a new folder of `directory`; `nil` when not root.
    public init?(megabytes: Int, in directory: URL) throws {
        guard getuid() == 0 else { return nil }
        let folder = directory.appendingPathComponent("tmpfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/mount")
        process.arguments = ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", folder]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        path = folder
    }

    /// Takes all but `bytes` of the free space with a filler file.
    public func fill(leaving bytes: Int) throws {
        let attributes = try FileManager.default.attributesOfFileSystem(forPath: path)
        let free = (attributes[.systemFreeSize] as? NSNumber)?.intValue ?? 0
        try Data(count: max(0, free - bytes)).write(to: URL(fileURLWithPath: path + "/filler"))
    }

    /// Unmounts it (what it held is gone).
    public func unmount() {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/umount")
        process.arguments = [path]
        try? process.run()
        process.waitUntilExit()
    }
}

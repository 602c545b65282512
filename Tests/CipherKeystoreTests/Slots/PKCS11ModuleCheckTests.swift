import Foundation
import XCTest

@testable import CipherKeystore

/// The check a module path from the keystore file passes before it is loaded: first with made-up
/// `realpath` and `stat` answers (every owner and mode, whoever runs the tests), then on real files.
final class PKCS11ModuleCheckTests: XCTestCase {
    private typealias Status = PKCS11ModuleCheck.FileStatus

    private static let file = Status(type: .regularFile, owner: 0, permissions: 0o644)
    private static let folder = Status(type: .directory, owner: 0, permissions: 0o755)

    /// A check over `tree` (path → status) for user 1000, where `links` are resolved first.
    private func check(_ tree: [String: Status], links: [String: String] = [:], user: UInt32 = 1000) -> PKCS11ModuleCheck {
        PKCS11ModuleCheck(
            currentUser: user,
            resolve: { path in
                let resolved = links[path] ?? path
                return tree[resolved] == nil ? .failure(.init(code: ENOENT)) : .success(resolved)
            },
            status: { path in tree[path].map { .success($0) } ?? .failure(.init(code: ENOENT)) })
    }

    private var standardTree: [String: Status] {
        ["/": Self.folder, "/usr": Self.folder, "/usr/lib": Self.folder, "/usr/lib/p11.so": Self.file]
    }

    private func refusal(_ check: PKCS11ModuleCheck, _ path: String) -> PKCS11ModuleCheck.Refusal? {
        do {
            _ = try check.trustedPath(path)
            return nil
        } catch {
            return error
        }
    }

    func testAModuleOwnedByRootOrTheUserAndWritableByNoOneElsePasses() throws {
        XCTAssertEqual(try check(standardTree).trustedPath("/usr/lib/p11.so"), "/usr/lib/p11.so")
        var tree = standardTree
        tree["/home"] = Self.folder
        tree["/home/u"] = Status(type: .directory, owner: 1000, permissions: 0o700)
        tree["/home/u/p11.so"] = Status(type: .regularFile, owner: 1000, permissions: 0o755)
        XCTAssertEqual(try check(tree).trustedPath("/home/u/p11.so"), "/home/u/p11.so")
        // Setuid, setgid and sticky bits are not write permissions.
        tree["/home/u"] = Status(type: .directory, owner: 1000, permissions: 0o3755)
        XCTAssertEqual(try check(tree).trustedPath("/home/u/p11.so"), "/home/u/p11.so")
    }

    func testASymlinkIsResolvedAndTheTargetsFoldersAreChecked() throws {
        var tree = standardTree
        tree["/opt"] = Self.folder
        tree["/opt/vendor"] = Status(type: .directory, owner: 0, permissions: 0o777)
        tree["/opt/vendor/p11.so"] = Self.file
        let links = ["/usr/lib/link.so": "/opt/vendor/p11.so", "/usr/lib/good.so": "/usr/lib/p11.so"]
        XCTAssertEqual(try check(tree, links: links).trustedPath("/usr/lib/good.so"), "/usr/lib/p11.so", "what is loaded is the target")
        let refused = try XCTUnwrap(refusal(check(tree, links: links), "/usr/lib/link.so"))
        XCTAssertEqual(refused.offending, "/opt/vendor")
        XCTAssertEqual(refused.problem, .writableByOthers)
        XCTAssertEqual(
            refused.description, "/opt/vendor, a folder above /opt/vendor/p11.so (where /usr/lib/link.so leads), is writable by others")
    }

    func testEveryWayOutIsRefusedAndNamed() throws {
        let cases: [(path: String, change: (inout [String: Status]) -> Void, offending: String, problem: PKCS11ModuleCheck.Problem)] = [
            ("lib/p11.so", { _ in }, "lib/p11.so", .notAbsolute),
            ("/usr/lib/missing.so", { _ in }, "/usr/lib/missing.so", .unreadable(ENOENT)),
            ("/usr/lib/p11.so", { $0["/usr/lib/p11.so"]?.permissions = 0o646 }, "/usr/lib/p11.so", .writableByOthers),
            ("/usr/lib/p11.so", { $0["/usr/lib/p11.so"]?.permissions = 0o664 }, "/usr/lib/p11.so", .writableByGroup),
            ("/usr/lib/p11.so", { $0["/usr/lib"]?.permissions = 0o1777 }, "/usr/lib", .writableByOthers),
            ("/usr/lib/p11.so", { $0["/usr"]?.permissions = 0o775 }, "/usr", .writableByGroup),
            ("/usr/lib/p11.so", { $0["/"]?.permissions = 0o757 }, "/", .writableByOthers),
            ("/usr/lib/p11.so", { $0["/usr/lib/p11.so"]?.owner = 1001 }, "/usr/lib/p11.so", .ownedByAnotherUser(1001)),
            ("/usr/lib/p11.so", { $0["/usr"]?.owner = 2 }, "/usr", .ownedByAnotherUser(2)),
            ("/usr/lib/p11.so", { $0["/usr/lib/p11.so"]?.type = .other }, "/usr/lib/p11.so", .notARegularFile),
            ("/usr/lib/p11.so", { $0["/usr/lib/p11.so"]?.type = .directory }, "/usr/lib/p11.so", .notARegularFile),
        ]
        for (path, change, offending, problem) in cases {
            var tree = standardTree
            change(&tree)
            let refused = try XCTUnwrap(refusal(check(tree), path), "\(path): \(problem)")
            XCTAssertEqual(refused.offending, offending, "\(problem)")
            XCTAssertEqual(refused.problem, problem, offending)
            XCTAssertTrue(refused.description.hasPrefix(offending), refused.description)
        }
        var tree = standardTree
        tree["/usr/lib/p11.so"]?.permissions = 0o666
        XCTAssertEqual(refusal(check(tree), "/usr/lib/p11.so")?.description, "/usr/lib/p11.so is writable by others")
        tree = standardTree
        tree["/usr"]?.owner = 1001
        XCTAssertEqual(
            refusal(check(tree), "/usr/lib/p11.so")?.description,
            "/usr, a folder above /usr/lib/p11.so, is owned by uid 1001, neither root nor you (uid 1000)")
        XCTAssertEqual(
            refusal(check(tree, user: 0), "/usr/lib/p11.so")?.description,
            "/usr, a folder above /usr/lib/p11.so, is owned by uid 1001, not by root")
    }

    func testTheUsersOwnFilesPassOnlyForThatUser() {
        var tree = standardTree
        tree["/usr/lib/p11.so"]?.owner = 1000
        XCTAssertNil(refusal(check(tree, user: 1000), "/usr/lib/p11.so"))
        XCTAssertEqual(refusal(check(tree, user: 1001), "/usr/lib/p11.so")?.problem, .ownedByAnotherUser(1000))
        XCTAssertEqual(refusal(check(tree, user: 0), "/usr/lib/p11.so")?.problem, .ownedByAnotherUser(1000))
    }

    // MARK: Real files

    func testTheSystemCheckOnRealFiles() throws {
        let system = PKCS11ModuleCheck.system
        // A system library: root's, in root's folders (through a symlink on Debian).
        let library = try XCTUnwrap(
            ["/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"]
                .first { FileManager.default.fileExists(atPath: $0) })
        let resolved = try system.trustedPath(library)
        XCTAssertEqual(resolved, URL(fileURLWithPath: library).resolvingSymlinksInPath().path)

        // A copy in a folder anyone may write to (mode set explicitly: umask aside), then its group.
        let directory = TemporaryDirectory()
        let folder = directory.file("lib")
        XCTAssertEqual(mkdir(folder, 0o700), 0)
        XCTAssertEqual(chmod(folder, 0o777), 0)
        let copy = folder + "/p11.so"
        try FileManager.default.copyItem(atPath: resolved, toPath: copy)
        XCTAssertEqual(chmod(copy, 0o644), 0)
        XCTAssertEqual(refusal(system, copy)?.offending, folder)
        XCTAssertEqual(refusal(system, copy)?.problem, .writableByOthers)
        XCTAssertEqual(chmod(folder, 0o770), 0)
        XCTAssertEqual(refusal(system, copy)?.problem, .writableByGroup)
        XCTAssertEqual(chmod(folder, 0o755), 0)
        XCTAssertEqual(chmod(copy, 0o666), 0)
        XCTAssertEqual(refusal(system, copy)?.offending, copy)
        XCTAssertEqual(refusal(system, copy)?.problem, .writableByOthers)
        XCTAssertEqual(chmod(copy, 0o644), 0)
        XCTAssertEqual(refusal(system, "relative/p11.so")?.problem, .notAbsolute)
        XCTAssertEqual(refusal(system, folder + "/missing.so")?.problem, .unreadable(ENOENT))
        XCTAssertEqual(refusal(system, folder)?.problem, .notARegularFile)
        // Owned by another user: chown needs root; as another user, the mode checks above stand alone.
        guard geteuid() == 0 else { throw XCTSkip("chown to another user needs root: the owner rule is tested with made-up stat answers") }
        XCTAssertEqual(chown(copy, 4242, 4242), 0)
        XCTAssertEqual(refusal(system, copy)?.problem, .ownedByAnotherUser(4242))
        XCTAssertEqual(refusal(system, copy)?.offending, copy)
    }
}

import Foundation

/// The repository's root folder (where `Package.swift` is), found from this file's own place, so
/// tests can reach `tools/` and fixtures wherever their own files sit.
public let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // Tests/TestSupport
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()

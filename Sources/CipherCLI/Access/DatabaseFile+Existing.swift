import CipherDB
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DatabaseFile {
    /// The existing file at `path`, as the library reads it (``DatabaseFile``).
    ///
    /// - Throws: 66 when the file is missing, 65 when it is not a regular file, 74 when it cannot be read.
    static func existing(_ path: String) throws(CLIError) -> DatabaseFile {
        let file: DatabaseFile
        do { file = try DatabaseFile(path: path) } catch {
            // A folder or device is the wrong kind of input; anything else could not be read.
            var status = stat()
            let isNotAFile = PathBytes.stat(path, &status) == 0 && status.st_mode & S_IFMT != S_IFREG
            throw CLIError(isNotAFile ? .dataError : .ioError, error.message)
        }
        guard file.kind != .missing else { throw CLIError.missingInput(path, what: "database") }
        return file
    }
}

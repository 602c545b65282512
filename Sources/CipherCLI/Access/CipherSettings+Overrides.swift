import CipherDB

extension CipherSettings {
    /// These settings with every value that `explicit` gives taken from it: an explicit flag (or
    /// a key's own settings over a file's) overrides the setting underneath.
    ///
    /// The one place a new flag-backed field is added. `compatibility` and `memorySecurity` are not
    /// carried: no flag sets them one by one (`--compat` becomes the preset underneath instead).
    func overridden(by explicit: CipherSettings) -> CipherSettings {
        var settings = self
        if let pageSize = explicit.pageSize { settings.pageSize = pageSize }
        if let iterations = explicit.kdfIterations { settings.kdfIterations = iterations }
        if let usesHMAC = explicit.usesHMAC { settings.usesHMAC = usesHMAC }
        if let algorithm = explicit.kdfAlgorithm { settings.kdfAlgorithm = algorithm }
        if let algorithm = explicit.hmacAlgorithm { settings.hmacAlgorithm = algorithm }
        if let size = explicit.plaintextHeaderSize { settings.plaintextHeaderSize = size }
        if let salt = explicit.salt { settings.salt = salt }
        return settings
    }
}

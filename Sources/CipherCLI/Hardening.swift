#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Process hardening applied before any secret is read.
enum Hardening {
    /// Disables core dumps: a dump of this process could hold passphrases and keys.
    ///
    /// `RLIMIT_CORE = 0` stops the kernel from writing a core file; `PR_SET_DUMPABLE = 0` also
    /// keeps other processes of the same user from attaching with ptrace or reading
    /// `/proc/<pid>/mem`. Both are best effort: failure is not fatal.
    static func apply() {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        #if os(Linux)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
        _ = prctl(setDumpable, 0)
        #else
        _ = setrlimit(RLIMIT_CORE, &limit)
        #endif
    }

    /// Whether core dumps are off (for tests and `--verbose`).
    static var coreDumpsDisabled: Bool {
        var limit = rlimit()
        #if os(Linux)
        guard getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0 else { return false }
        return limit.rlim_cur == 0 && prctl(getDumpable, 0) == 0
        #else
        guard getrlimit(RLIMIT_CORE, &limit) == 0 else { return false }
        return limit.rlim_cur == 0
        #endif
    }

    #if os(Linux)
    /// `PR_SET_DUMPABLE` and `PR_GET_DUMPABLE` from `<linux/prctl.h>`.
    private static let setDumpable: Int32 = 4
    private static let getDumpable: Int32 = 3

    private typealias PrctlFunction = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32

    /// `prctl(2)`. Swift does not import C variadic functions, so the symbol is looked up and called
    /// with its five integer arguments, as the kernel interface takes them.
    private static func prctl(_ option: Int32, _ argument: UInt) -> Int32 {
        guard let symbol = dlsym(nil, "prctl") else { return -1 }  // nil is RTLD_DEFAULT on Linux
        let function = unsafeBitCast(symbol, to: PrctlFunction.self)
        return function(option, argument, 0, 0, 0)
    }
    #endif
}

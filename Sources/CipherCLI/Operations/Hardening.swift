#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Process hardening applied before any secret is read.
enum Hardening {
    /// Disables core dumps (a dump of this process could hold passphrases and keys) and the Swift
    /// runtime's register-dumping crash handler.
    ///
    /// `RLIMIT_CORE = 0` stops the kernel from writing a core file; `PR_SET_DUMPABLE = 0` also
    /// keeps other processes of the same user from attaching with ptrace or reading
    /// `/proc/<pid>/mem`. Both are best effort: failure is not fatal.
    static func apply() {
        installFatalSignalHandlers()
        // Past a file size limit (ulimit -f) a write then fails with EFBIG, reported as an I/O
        // error naming the file, instead of SIGXFSZ killing the process half way.
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        #if os(Linux)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
        _ = prctl(setDumpable, 0)
        #else
        _ = setrlimit(RLIMIT_CORE, &limit)
        #endif
    }

    /// The signals that end the process on a fault.
    static let fatalSignals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS]

    /// Replaces the Swift runtime's crash handler for fatal signals by one that prints one line
    /// and ends the process with the same signal.
    ///
    /// The runtime's backtracer prints the memory behind every register, where key bytes can be,
    /// and then leaves some commands (`shell`, waiting in `read`) spinning instead of exiting.
    static func installFatalSignalHandlers() {
        installOnce(for: fatalSignals) { received in
            let message: StaticString = "cipherdb: stopped by a fatal signal\n"
            _ = write(2, message.utf8Start, message.utf8CodeUnitCount)
            // SA_RESETHAND put the default action back: this ends the process with the signal.
            raise(received)
        }
    }

    /// Installs `handler` for `signals`, run once: the signal's default action is put back as
    /// the handler starts (`SA_RESETHAND`), so a handler that raises the signal again ends the
    /// process with it.
    static func installOnce(for signals: [Int32], _ handler: @escaping @convention(c) (Int32) -> Void) {
        for signal in signals {
            var action = sigaction()
            #if os(Linux)
            action.__sigaction_handler.sa_handler = handler
            #else
            action.__sigaction_u.__sa_handler = handler
            #endif
            action.sa_flags = Int32(bitPattern: UInt32(SA_RESETHAND)) | Int32(SA_NODEFER)
            sigemptyset(&action.sa_mask)
            _ = sigaction(signal, &action, nil)
        }
    }

    #if os(Linux)
    /// `PR_SET_DUMPABLE` from `<linux/prctl.h>`.
    private static let setDumpable: Int32 = 4

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

#ifndef CIPHERDB_FUZZER_ENTRY_H
#define CIPHERDB_FUZZER_ENTRY_H

/// Runs libFuzzer's driver (LLVMFuzzerRunDriver) on the process's arguments with the
/// LLVMFuzzerTestOneInput the executable defines, then exits with its status. See README.md:
/// SwiftPM points `main` at the executable module's own entry point, which calls this.
_Noreturn void cipherdb_fuzzer_run(int argc, char **argv);

#endif

#include "FuzzerEntry.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

// Both come from elsewhere at link time: libFuzzer (linked by -sanitize=fuzzer) and the fuzz target.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

void cipherdb_fuzzer_run(int argc, char **argv) {
    exit(LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput));
}

#ifndef VOICEPIPE_FUZZ_DRIVER_H
#define VOICEPIPE_FUZZ_DRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt's FuzzerDriver.cpp), linked in by -sanitize=fuzzer: runs the
/// fuzzing loop over `callback` with libFuzzer's command-line flags.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif

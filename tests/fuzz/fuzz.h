/*
 * fuzz.h: what the fuzz harnesses share.  The library reads files, so a
 * harness writes its input to a file of its own, in a directory made once
 * per process and removed at exit.
 */
#ifndef DX_FUZZ_H
#define DX_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes size bytes to the file NAME in the process's directory, replacing
 * it, and returns its path (valid until the next call with that name).
 * Aborts when the file cannot be written: that is the harness's failure,
 * not the library's. */
const char *fuzz_file(const char *name, const void *data, size_t size);

/* The path of NAME in that directory, written or not. */
const char *fuzz_path(const char *name);

#endif

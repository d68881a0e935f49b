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

/* Recomputes the CRC32s of an index's header, sections and chunks, and
 * its file size, over bytes a fuzzer mutated (ddx_repair.c), as far as its
 * header and table can be read: so that a mutation reaches the checks
 * behind the checksums instead of being refused as damaged at once. */
void fuzz_repair_index(unsigned char *p, size_t size);

/* Reads n bytes at p, so that ASan sees a pointer past what it may read. */
void fuzz_touch(const char *p, size_t n);

/* Reads record pos of c and its id through, aborting when a position at
 * or past n (the count) is served.  Returns 0 with the id (valid until
 * the next call on c) when it could be read, else -1. */
struct dx_corpus;
int fuzz_record_at(struct dx_corpus *c, uint64_t pos, uint64_t n, const char **id,
                   size_t *len);

#endif

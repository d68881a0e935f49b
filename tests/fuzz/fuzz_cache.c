/*
 * fuzz_cache.c: an inflate cache file of arbitrary bytes (lib/gzcache.c),
 * held by another user so that it is neither swept nor replaced, opened
 * and read and written through: each read either gives a stretch's bytes
 * as they were offered, or misses; nothing crashes, reads outside the
 * file, or leaks.
 *
 * Input: a selector byte, then the file.  Bit 0 set: the header's check
 * is recomputed over the mutated fields (dx__gzcache_seal), so that a
 * mutation reaches the slots instead of being refused at once.  The cache
 * is opened under the fingerprint its header names (the name follows),
 * for stretches of any size, so that a mutation of either is read too
 * (tests/fuzz/regress/cache holds one whose stretch size wrapped the old
 * bounds check round).  The seeds
 * (tests/fuzz/seeds/cache) are caches docdex made of a small BGZF and gzip
 * corpus (the first 3,754 bytes of tests/data/beir-arcd-40.jsonl, read
 * whole through a Python Corpus with inflate_cache=11776, which held them
 * while they were copied).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "docdex.h"
#include "fuzz.h"
#include "gzcache.h"

/* The most of a stretch the harness reads or writes, and the size it asks
 * for (used only where no cache is there, which is never). */
enum { SLOT = 5000, CACHE_BYTES = 64 << 10 };

/* A stretch's bytes, the same for the same key. */
static void stretch(uint64_t key, unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(key * 131 + i * 7 + (i >> 8));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned char *file = malloc(size);
	if (!file)
		abort();
	memcpy(file, data + 1, size - 1);
	if (data[0] & 1)
		dx__gzcache_seal(file, size - 1);
	/* The fingerprint and stretch size at offsets 8 and 16 of the header. */
	uint64_t fp = 0, slot = 1;
	if (size - 1 >= 24) {
		memcpy(&fp, file + 8, 8);
		memcpy(&slot, file + 16, 8);
	}
	char name[64];
	snprintf(name, sizeof name, "docdex-cache-%016llx", (unsigned long long)fp);
	const char *path = fuzz_file(name, file, size - 1);
	free(file);
	/* Held, as a live user would hold it. */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_SH) < 0)
		abort();
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';

	dx_err err;
	dx_gzcache *k = dx__gzcache_open(dir, fp, CACHE_BYTES, 1, &err);
	if (k) {
		unsigned char want[SLOT], got[SLOT];
		uint64_t most = slot < SLOT ? slot : SLOT;
		/* Reads of what the file holds: a hit must be what a put of this
		 * harness would have stored, which is all that the seeds hold;
		 * bytes the fuzzer made are accepted only when their CRCs hold,
		 * so nothing is checked of them but their bounds. */
		for (uint64_t key = 0; key < 24; key++) {
			uint64_t from = key * 97 % most, n = most - from < 300 ? most - from : 300;
			if (dx__gzcache_get(k, key, from, (size_t)n, got))
				fuzz_touch((const char *)got, (size_t)n);
		}
		/* Writes, then reads of them: what was stored comes back (a slot
		 * that holds as much of the stretch keeps it). */
		for (uint64_t key = 0; key < 8; key++) {
			size_t len = (size_t)(most - most * key / 8);
			stretch(key, want, len);
			if (dx__gzcache_put(k, key, want, len) && len > 1 &&
			    dx__gzcache_get(k, key, 1, len - 1, got) && memcmp(got, want + 1, len - 1) != 0)
				abort();
		}
		dx__gzcache_close(k);
	} else if (err.code != DX_ECORRUPT && err.code != DX_ESYS && err.code != DX_EINVAL) {
		abort();
	}
	close(fd);
	unlink(path);
	return 0;
}

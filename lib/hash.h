/* hash.h: the 64-bit hash of ids and sampled bytes (internal). */
#ifndef DX_HASH_H
#define DX_HASH_H

#include <stddef.h>
#include <stdint.h>

/*
 * A fast hash of a byte string, the same on every machine (bytes are read
 * little-endian).  Its values are stored in index files: changing it means
 * a new index format version.
 */
uint64_t dx__hash64(const void *p, size_t n, uint64_t seed);

/* A strong final mix of a 64-bit value (avalanche). */
static inline uint64_t dx__mix64(uint64_t x)
{
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ULL;
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ULL;
	x ^= x >> 32;
	return x;
}

#endif

/*
 * hash.c: the hash of ids.  Ids are short (MS MARCO's are 1 to 25 bytes),
 * so the loop takes 8 bytes a step with one multiply and leaves the
 * avalanche to a final mix.
 */
#include "hash.h"
#include "le.h"

static inline uint64_t load_le_tail(const unsigned char *p, size_t n)
{
	uint64_t v = 0;
	while (n--)
		v = (v << 8) | p[n];
	return v;
}

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

uint64_t dx__hash64(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *p = data;
	const uint64_t k1 = 0x9e3779b97f4a7c15ULL, k2 = 0xc2b2ae3d27d4eb4fULL;
	uint64_t h = seed ^ ((uint64_t)n * k1);

	for (; n >= 8; p += 8, n -= 8)
		h = rotl(h ^ (dx__le64(p) * k2), 29) * k1;
	if (n)
		h = rotl(h ^ (load_le_tail(p, n) * k2), 29) * k1;
	return dx__mix64(h);
}

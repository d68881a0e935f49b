/*
 * rng.c: deterministic random numbers (xoshiro256** seeded by splitmix64,
 * both published by Blackman and Vigna) and a memory-free permutation of
 * [0, n) built from a Feistel network with cycle walking.
 */
#include "docdex.h"
#include "hash.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void dx_rng_seed(dx_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t dx_rng_next(dx_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

/* Lemire's multiply-and-reject: uniform without a division per draw. */
uint64_t dx_rng_below(dx_rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)dx_rng_next(r) * n;
	uint64_t low = (uint64_t)m;
	if (low < n) {
		uint64_t floor = -n % n;
		while (low < floor) {
			m = (unsigned __int128)dx_rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

void dx_perm_init(dx_perm *p, uint64_t n, uint64_t seed)
{
	unsigned bits = 2;
	while (bits < 64 && (n - 1) >> bits)
		bits += 2; /* a balanced Feistel network needs an even width */
	p->n = n;
	p->mask = (1ULL << (bits / 2)) - 1;
	for (int i = 0; i < 4; i++)
		p->keys[i] = splitmix64(&seed);
}

/* One pass of a 4-round Feistel network over 2 * popcount(mask) bits. */
static uint64_t feistel(const dx_perm *p, uint64_t x)
{
	unsigned half = (unsigned)__builtin_popcountll(p->mask);
	uint64_t l = x >> half, r = x & p->mask;
	for (int i = 0; i < 4; i++) {
		uint64_t f = dx__mix64(r ^ p->keys[i]) & p->mask;
		uint64_t t = l ^ f;
		l = r;
		r = t;
	}
	return (l << half) | r;
}

uint64_t dx_perm_at(const dx_perm *p, uint64_t i)
{
	if (p->n <= 1)
		return 0;
	/* The network permutes [0, 2^bits) with 2^bits < 4n; walking the cycle
	 * until it lands below n permutes [0, n), in under 4 steps on average. */
	uint64_t x = feistel(p, i);
	while (x >= p->n)
		x = feistel(p, x);
	return x;
}

/* The generator and the permutation are deterministic and exact. */
#include "docdex.h"
#include "unit.h"

int main(void)
{
	/* Golden values: the same seed gives the same numbers everywhere. */
	dx_rng r;
	dx_rng_seed(&r, 42);
	uint64_t first = dx_rng_next(&r), second = dx_rng_next(&r);
	dx_rng_seed(&r, 42);
	CHECK_EQ(dx_rng_next(&r), first);
	CHECK_EQ(dx_rng_next(&r), second);
	/* From an independent implementation of splitmix64 and xoshiro256**. */
	CHECK_EQ(first, 0x15780b2e0c2ec716ULL);
	CHECK_EQ(second, 6990951692964543102ULL);

	for (int i = 0; i < 10000; i++)
		CHECK(dx_rng_below(&r, 7) < 7);
	CHECK_EQ(dx_rng_below(&r, 1), 0);

	/* dx_perm_at is a bijection of [0, n) for awkward sizes. */
	uint64_t sizes[] = { 1, 2, 3, 4, 5, 17, 1000, 4096, 4097, 65537 };
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		uint64_t n = sizes[s];
		unsigned char *seen = calloc(n, 1);
		dx_perm p;
		dx_perm_init(&p, n, 7 + s);
		int ok = 1;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t x = dx_perm_at(&p, i);
			if (x >= n || seen[x])
				ok = 0;
			else
				seen[x] = 1;
		}
		CHECK(ok);
		free(seen);
	}
	/* Different seeds give different orders; the same seed the same. */
	dx_perm a, b, c;
	dx_perm_init(&a, 1000, 1);
	dx_perm_init(&b, 1000, 2);
	dx_perm_init(&c, 1000, 1);
	int same_ab = 1, same_ac = 1;
	for (uint64_t i = 0; i < 1000; i++) {
		same_ab &= dx_perm_at(&a, i) == dx_perm_at(&b, i);
		same_ac &= dx_perm_at(&a, i) == dx_perm_at(&c, i);
	}
	CHECK(!same_ab);
	CHECK(same_ac);
	UNIT_DONE();
}

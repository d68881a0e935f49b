/* The id hash is part of the index format: its values must not change. */
#include "hash.h"
#include "unit.h"

int main(void)
{
	/* Golden values: a change here means a new index format version. */
	CHECK_EQ(dx__hash64("", 0, 0), 0x0000000000000000ULL);
	CHECK_EQ(dx__hash64("D1555982", 8, 0x646f636465780001ULL), 0x3c9bc13277dc6feaULL);
	CHECK_EQ(dx__hash64("msmarco_doc_00_0", 16, 0x646f636465780001ULL), 0x7b6d1bc2bd97e143ULL);

	/* Every prefix of a string hashes apart, and the seed matters. */
	const char *s = "0123456789abcdefghijklmnopqrstuvwxyz0123456789";
	uint64_t seen[48];
	for (size_t n = 0; n < 47; n++) {
		seen[n] = dx__hash64(s, n, 1);
		for (size_t m = 0; m < n; m++)
			CHECK(seen[m] != seen[n]);
	}
	CHECK(dx__hash64("abc", 3, 1) != dx__hash64("abc", 3, 2));
	/* One flipped bit changes about half the output bits. */
	char a[16] = "abcdefghijklmno", b[16];
	memcpy(b, a, 16);
	b[9] ^= 4;
	int bits = __builtin_popcountll(dx__hash64(a, 15, 7) ^ dx__hash64(b, 15, 7));
	CHECK(bits > 16 && bits < 48);
	UNIT_DONE();
}

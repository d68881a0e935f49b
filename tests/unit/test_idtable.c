/* Canonical integer ids, varints and the id pool walk. */
#include "buf.h"
#include "idtable.h"
#include "index_format.h"
#include "unit.h"

static int number(const char *s, uint64_t *v)
{
	return dx__id_number(s, strlen(s), v);
}

int main(void)
{
	uint64_t v = 0;
	CHECK(number("0", &v) && v == 0);
	CHECK(number("8841822", &v) && v == 8841822);
	CHECK(number("9999999999999999999", &v) && v == 9999999999999999999ULL);
	CHECK(!number("", &v));
	CHECK(!number("007", &v));        /* not the same id as "7" */
	CHECK(!number("-1", &v));
	CHECK(!number("+1", &v));
	CHECK(!number("12a", &v));
	CHECK(!number(" 12", &v));
	CHECK(!number("10000000000000000000", &v)); /* 20 digits */

	char buf[24];
	CHECK_MEM(buf, dx__id_format(0, buf), "0");
	CHECK_MEM(buf, dx__id_format(18446744073709551615ULL, buf), "18446744073709551615");

	CHECK_EQ(dx__record_bits(0), 1);
	CHECK_EQ(dx__record_bits(1), 1);
	CHECK_EQ(dx__record_bits(2), 2);
	CHECK_EQ(dx__record_bits(8841823), 24);
	CHECK(dx__slots_for(3) > 3);

	/* Varints round-trip at their boundaries; a cut one is refused. */
	uint64_t tests[] = { 0, 127, 128, 16383, 16384, 1ULL << 35, UINT64_MAX };
	for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
		dx_buf b = { 0 };
		CHECK(dx__buf_add_varint(&b, tests[i]) == 0);
		uint64_t got = 1;
		const unsigned char *p = (const unsigned char *)b.p;
		CHECK_EQ(dx__varint_get(p, p + b.len, &got), b.len);
		CHECK_EQ(got, tests[i]);
		if (b.len > 1)
			CHECK_EQ(dx__varint_get(p, p + b.len - 1, &got), 0);
		dx__buf_free(&b);
	}

	/* A pool of 40 ids with checkpoints every 16: each id is found. */
	dx_buf pool = { 0 }, ckpt = { 0 };
	char id[32];
	for (int r = 0; r < 40; r++) {
		if (r % DDX_CKPT_EVERY == 0) {
			uint64_t at = pool.len;
			dx__buf_add(&ckpt, &at, 8);
		}
		int n = snprintf(id, sizeof id, "id-%d%s", r, r % 3 ? "" : "-long-suffix");
		dx__buf_add_varint(&pool, (uint64_t)n);
		dx__buf_add(&pool, id, (size_t)n);
	}
	const unsigned char *pp = (const unsigned char *)pool.p;
	const uint64_t *cp = (const uint64_t *)ckpt.p;
	for (int r = 0; r < 40; r++) {
		const char *got;
		size_t len;
		int n = snprintf(id, sizeof id, "id-%d%s", r, r % 3 ? "" : "-long-suffix");
		CHECK(dx__pool_id(pp, pool.len, cp, ckpt.len / 8, (uint64_t)r, NULL, NULL, &got, &len) == 0);
		CHECK(len == (size_t)n && memcmp(got, id, len) == 0);
	}
	const char *got;
	size_t len;
	/* Out of range, and a pool cut short, are refused rather than read past. */
	CHECK(dx__pool_id(pp, pool.len, cp, ckpt.len / 8, 48, NULL, NULL, &got, &len) < 0);
	CHECK(dx__pool_id(pp, pool.len - 3, cp, ckpt.len / 8, 39, NULL, NULL, &got, &len) < 0);
	uint64_t bad[3] = { 0, pool.len + 100, 0 };
	CHECK(dx__pool_id(pp, pool.len, bad, 3, 17, NULL, NULL, &got, &len) < 0);
	dx__buf_free(&pool);
	dx__buf_free(&ckpt);
	UNIT_DONE();
}

/* JSON record walking and string decoding. */
#include "json.h"
#include "unit.h"

static int members(const char *rec, const char **keys, int max)
{
	const char *p = rec, *end = rec + strlen(rec);
	dx_json_member m;
	int n = 0, r;
	if (dx__json_open_object(&p, end) < 0)
		return -1;
	while ((r = dx__json_next_member(&p, end, &m)) == 1)
		if (n < max)
			keys[n++] = m.key;
	return r < 0 ? -1 : n;
}

static void decodes(const char *json, const char *want, size_t want_len)
{
	dx_buf b = { 0 };
	int r = dx__json_decode(json, json + strlen(json), &b);
	CHECK(r == 0);
	CHECK(b.len == want_len && memcmp(b.p, want, want_len) == 0);
	dx__buf_free(&b);
}

static void refuses(const char *json)
{
	dx_buf b = { 0 };
	CHECK(dx__json_decode(json, json + strlen(json), &b) < 0);
	dx__buf_free(&b);
}

int main(void)
{
	const char *keys[8];
	/* Values of every kind are skipped whole, quotes escaped inside strings. */
	CHECK_EQ(members("{\"a\": \"x\\\"y\", \"b\": [1, {\"c\": \"]}\"}], \"d\": -1.5e3, \"e\": null}", keys, 8), 4);
	CHECK(strncmp(keys[3], "e\"", 2) == 0);
	CHECK_EQ(members("  {}", keys, 8), 0);
	CHECK_EQ(members("{\"a\": \"\\\\\"}", keys, 8), 1);   /* a string ending in a backslash */
	CHECK_EQ(members("{\"a\": 1", keys, 8), -1);          /* unterminated object */
	CHECK_EQ(members("{\"a\" 1}", keys, 8), -1);          /* missing colon */
	CHECK_EQ(members("{\"a\": \"open}", keys, 8), -1);    /* unterminated string */
	CHECK_EQ(members("[1, 2]", keys, 8), -1);             /* not an object */
	CHECK_EQ(members("{\"a\": [1, 2}", keys, 8), -1);     /* unbalanced array */

	decodes("\"plain\"", "plain", 5);
	decodes("\"a\\nb\\t\\\"c\\\\\\/\"", "a\nb\t\"c\\/", 8);
	decodes("\"caf\\u00e9\"", "caf\xc3\xa9", 5);
	decodes("\"\\u20ac\"", "\xe2\x82\xac", 3);
	decodes("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4);     /* a surrogate pair */
	decodes("\"\\ud83d!\"", "\xed\xa0\xbd!", 4);              /* a lone surrogate kept */
	decodes("\"\\u0000\"", "\0", 1);
	decodes("\"\xc3\x28 bad utf8\"", "\xc3\x28 bad utf8", 11); /* passed through */
	refuses("\"\\x41\"");
	refuses("\"\\u12\"");
	refuses("\"trailing\\\"");

	const char *plain = "\"abc\"", *escaped = "\"a\\nc\"", *number = "12";
	CHECK(dx__json_plain_string(plain, plain + strlen(plain)));
	CHECK(!dx__json_plain_string(escaped, escaped + strlen(escaped)));
	CHECK(!dx__json_plain_string(number, number + strlen(number)));

	/* A key with an escape matches its decoded name. */
	const char *rec = "{\"\\u005fid\": \"x\"}", *p = rec, *end = rec + strlen(rec);
	dx_json_member m;
	CHECK(dx__json_open_object(&p, end) == 0);
	CHECK(dx__json_next_member(&p, end, &m) == 1);
	CHECK(m.key_escaped);
	CHECK(dx__json_key_is(&m, "_id", 3));
	CHECK(!dx__json_key_is(&m, "id", 2));
	UNIT_DONE();
}

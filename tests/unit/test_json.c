/* JSON record walking, string decoding, and checking and walking a whole text. */
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

/* Whether the whole of json is one JSON value (blanks around it allowed). */
static int valid(const char *json, int max_depth)
{
	const char *end = json + strlen(json);
	const char *p = dx__json_check(dx__json_skip_ws(json, end), end, max_depth);
	return p && dx__json_skip_ws(p, end) == end;
}

static void checks(void)
{
	CHECK(valid(" {\"a\": [1, -0.5e+3, true, false, null, \"x\\u00e9\\n\"], \"b\": {}} ", 64));
	CHECK(valid("[]", 0));
	CHECK(valid("0", 0));
	CHECK(!valid("", 64));
	CHECK(!valid("[1,]", 64));
	CHECK(!valid("{\"a\" 1}", 64));
	CHECK(!valid("{\"a\": 1,}", 64));
	CHECK(!valid("[01]", 64));                /* no leading zeros */
	CHECK(!valid("[+1]", 64));
	CHECK(!valid("[1.]", 64));
	CHECK(!valid("[.5]", 64));
	CHECK(!valid("[1e]", 64));
	CHECK(!valid("[0x10]", 64));
	CHECK(!valid("[nan]", 64));
	CHECK(!valid("[tru]", 64));
	CHECK(!valid("[\"a\tb\"]", 64));         /* a raw control byte in a string */
	CHECK(!valid("[\"\\x\"]", 64));          /* an escape JSON lacks */
	CHECK(!valid("[\"\\u12g4\"]", 64));
	CHECK(!valid("[\"open]", 64));
	CHECK(!valid("[1] [2]", 64));
	CHECK(valid("[[[]]]", 2));                /* nested as deep as allowed */
	CHECK(!valid("[[[[]]]]", 2));
}

static void walks(void)
{
	const char *doc = "{\"n\": 12.5, \"big\": 1e999, \"\\u0073\": \"caf\\u00e9\", \"nul\": \"a\\u0000b\", "
	                  "\"list\": [1, [2, 3], {\"k\": \"]\"}, \"s\"], \"n\": 0}";
	const char *end = doc + strlen(doc), *v, *ve;
	char buf[16];
	double x = 0;
	CHECK(dx__json_check(doc, end, 64) == end);
	CHECK(dx__json_number(dx__json_member(doc, end, "n"), &x) == 0 && x == 12.5); /* the first */
	CHECK(dx__json_number(dx__json_member(doc, end, "big"), &x) < 0);             /* no infinity */
	CHECK(dx__json_number(dx__json_member(doc, end, "s"), &x) < 0);               /* not a number */
	CHECK(dx__json_number(dx__json_member(doc, end, "none"), &x) < 0);
	CHECK(dx__json_string_copy(dx__json_member(doc, end, "s"), end, buf, sizeof buf) == 0);
	CHECK(strcmp(buf, "caf\xc3\xa9") == 0);
	CHECK(dx__json_string_copy(dx__json_member(doc, end, "s"), end, buf, 5) < 0); /* does not fit */
	CHECK(dx__json_string_copy(dx__json_member(doc, end, "nul"), end, buf, sizeof buf) < 0);
	CHECK(dx__json_string_copy(dx__json_member(doc, end, "n"), end, buf, sizeof buf) < 0);
	CHECK(dx__json_member(dx__json_member(doc, end, "n"), end, "x") == NULL);   /* not an object */

	const char *p = dx__json_member(doc, end, "list");
	const char *want[] = { "1", "[2, 3]", "{\"k\": \"]\"}", "\"s\"" };
	size_t n = 0;
	CHECK(dx__json_open_array(&p, end) == 0);
	while (dx__json_next_element(&p, end, &v, &ve) == 1) {
		if (n < 4)
			CHECK_MEM(v, (size_t)(ve - v), want[n]);
		n++;
	}
	CHECK_EQ(n, 4);
	p = " [ ] ";
	CHECK(dx__json_open_array(&p, p + 5) == 0);
	CHECK(dx__json_next_element(&p, p + 3, &v, &ve) == 0);
	p = "{}";
	CHECK(dx__json_open_array(&p, p + 2) < 0);
}

int main(void)
{
	checks();
	walks();
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

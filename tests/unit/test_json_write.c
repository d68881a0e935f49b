/* The JSON writer: layout, the escaping rule, numbers, and its sink. */
#include <math.h>

#include "buf.h"
#include "json.h"
#include "unit.h"

static int to_buf(void *ctx, const void *p, size_t len)
{
	return dx__buf_add(ctx, p, len);
}

/* A sink that takes limit bytes, then fails. */
typedef struct limited {
	size_t taken, limit;
	int calls;
} limited;

static int to_limited(void *ctx, const void *p, size_t len)
{
	limited *l = ctx;
	(void)p;
	l->calls++;
	if (l->taken + len > l->limit)
		return -1;
	l->taken += len;
	return 0;
}

static void text_is(dx_json_writer *w, dx_buf *b, const char *want)
{
	CHECK(dx__jw_finish(w) == 0);
	CHECK_MEM(b->p, b->len, want);
	b->len = 0;
}

int main(void)
{
	dx_json_writer w;
	dx_buf b = { 0 };

	/* Inline containers: ", " between members, ": " after keys. */
	dx__jw_init(&w, to_buf, &b, 0);
	dx__jw_begin_object(&w, DX_JW_INLINE);
	dx__jw_key(&w, "a");
	dx__jw_uint(&w, 18446744073709551615u);
	dx__jw_key(&w, "b");
	dx__jw_begin_array(&w, DX_JW_INLINE);
	dx__jw_int(&w, -3);
	dx__jw_null(&w);
	dx__jw_bool(&w, 1);
	dx__jw_bool(&w, 0);
	dx__jw_end_array(&w);
	dx__jw_key(&w, "c");
	dx__jw_begin_array(&w, DX_JW_INLINE);
	dx__jw_end_array(&w);
	dx__jw_key(&w, "d");
	dx__jw_cstring(&w, NULL);
	dx__jw_end_object(&w);
	text_is(&w, &b, "{\"a\": 18446744073709551615, \"b\": [-3, null, true, false], \"c\": [], \"d\": null}");

	/* Block containers: a member a line, the closing bracket on its own
	 * unless empty; inline ones inside stay on their line. */
	dx__jw_init(&w, to_buf, &b, 0);
	dx__jw_begin_object(&w, DX_JW_BLOCK);
	dx__jw_key(&w, "x");
	dx__jw_begin_array(&w, DX_JW_BLOCK);
	dx__jw_begin_object(&w, DX_JW_INLINE);
	dx__jw_key(&w, "k");
	dx__jw_raw(&w, "{\"raw\": 1}", 10);
	dx__jw_end_object(&w);
	dx__jw_uint(&w, 2);
	dx__jw_end_array(&w);
	dx__jw_key(&w, "e");
	dx__jw_begin_object(&w, DX_JW_BLOCK);
	dx__jw_end_object(&w);
	dx__jw_end_object(&w);
	text_is(&w, &b, "{\n  \"x\": [\n    {\"k\": {\"raw\": 1}},\n    2\n  ],\n  \"e\": {}\n}");

	/* A text another will hold, one level deep. */
	dx__jw_init(&w, to_buf, &b, 1);
	dx__jw_begin_array(&w, DX_JW_BLOCK);
	dx__jw_uint(&w, 1);
	dx__jw_end_array(&w);
	text_is(&w, &b, "[\n    1\n  ]");

	/* One escaping rule: quote and backslash, control bytes as \u00XX,
	 * everything else (UTF-8, invalid bytes, DEL) as it is; n bytes, NULs
	 * included. */
	dx__jw_init(&w, to_buf, &b, 0);
	dx__jw_string(&w, "q\"b\\n\n t\t\x01\x1f\x7f\xc3\xa9\xff\0z", 17);
	text_is(&w, &b, "\"q\\\"b\\\\n\\u000a t\\u0009\\u0001\\u001f\x7f\xc3\xa9\xff\\u0000z\"");
	dx__jw_init(&w, to_buf, &b, 0);
	dx__jw_key(&w, "k\"");
	dx__jw_cstring(&w, "");
	text_is(&w, &b, "\"k\\\"\": \"\"");

	/* Figures as reports write them; null for what JSON cannot hold. */
	dx__jw_init(&w, to_buf, &b, 0);
	dx__jw_begin_array(&w, DX_JW_INLINE);
	dx__jw_figure(&w, 3);
	dx__jw_figure(&w, -0.0);
	dx__jw_figure(&w, 1e15);
	dx__jw_figure(&w, 1.0 / 3);
	dx__jw_figure(&w, NAN);
	dx__jw_figure(&w, INFINITY);
	dx__jw_double(&w, 0.2, 6);
	dx__jw_double(&w, 1.23456789, 6);
	dx__jw_double(&w, -INFINITY, 6);
	dx__jw_end_array(&w);
	text_is(&w, &b, "[3, -0, 1e+15, 0.3333333333, null, null, 0.2, 1.23457, null]");

	/* A long string crosses the buffer; a piece larger than it goes
	 * straight to the sink. */
	size_t big = 3 * DX_JW_BUF;
	char *s = malloc(big);
	CHECK(s != NULL);
	memset(s, 'a', big);
	dx__jw_init(&w, to_buf, &b, 0);
	dx__jw_raw(&w, "[", 1);
	dx__jw_string(&w, s, big);
	dx__jw_raw(&w, "]", 1);
	CHECK(dx__jw_finish(&w) == 0);
	CHECK_EQ(b.len, big + 4);
	CHECK(b.p[0] == '[' && b.p[1] == '"' && b.p[big + 2] == '"' && b.p[big + 3] == ']');
	free(s);

	/* A failing sink is called no more, and the writer says so. */
	limited l = { 0, 10, 0 };
	dx__jw_init(&w, to_limited, &l, 0);
	for (int i = 0; i < 5000; i++)
		dx__jw_string(&w, "0123456789", 10);
	CHECK(dx__jw_finish(&w) < 0);
	CHECK_EQ(l.calls, 1);

	dx__buf_free(&b);
	UNIT_DONE();
}

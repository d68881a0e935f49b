/* json_write.c: the streaming JSON writer (see json.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

void dx__jw_init(dx_json_writer *w, dx_json_sink sink, void *ctx, int base)
{
	memset(w, 0, offsetof(dx_json_writer, buf));
	w->sink = sink;
	w->ctx = ctx;
	w->base = base;
}

static void flush(dx_json_writer *w)
{
	if (w->len && !w->failed && w->sink(w->ctx, w->buf, w->len) < 0)
		w->failed = 1;
	w->len = 0;
}

int dx__jw_finish(dx_json_writer *w)
{
	flush(w);
	return w->failed ? -1 : 0;
}

static void put(dx_json_writer *w, const char *p, size_t n)
{
	if (w->failed)
		return;
	if (n > sizeof w->buf - w->len) {
		flush(w);
		/* A piece larger than the buffer goes to the sink as it is. */
		if (n > sizeof w->buf) {
			if (!w->failed && w->sink(w->ctx, p, n) < 0)
				w->failed = 1;
			return;
		}
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void puts_(dx_json_writer *w, const char *s)
{
	put(w, s, strlen(s));
}

/* Deeper containers than the writer tracks are laid out inline. */
static int is_block(const dx_json_writer *w, int level)
{
	return level < DX_JW_MAX_DEPTH && w->block[level];
}

static void newline(dx_json_writer *w, int level)
{
	static const char spaces[] = "                                ";
	put(w, "\n", 1);
	for (int n = 2 * (w->base + level); n > 0; n -= (int)sizeof spaces - 1)
		put(w, spaces, n < (int)sizeof spaces - 1 ? (size_t)n : sizeof spaces - 1);
}

/* What comes before a value or a key: nothing after a key or at the top;
 * in a container, the comma after the member before, and the member's own
 * line in a block or a space inline. */
static void before(dx_json_writer *w)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (!w->depth)
		return;
	int level = w->depth - 1, used = level < DX_JW_MAX_DEPTH && w->used[level];
	if (used)
		put(w, ",", 1);
	if (is_block(w, level))
		newline(w, w->depth);
	else if (used)
		put(w, " ", 1);
	if (level < DX_JW_MAX_DEPTH)
		w->used[level] = 1;
}

static void begin(dx_json_writer *w, char open, int layout)
{
	before(w);
	put(w, &open, 1);
	if (w->depth < DX_JW_MAX_DEPTH) {
		w->block[w->depth] = layout == DX_JW_BLOCK;
		w->used[w->depth] = 0;
	}
	w->depth++;
}

static void end(dx_json_writer *w, char close)
{
	if (!w->depth)
		return;
	int level = --w->depth;
	if (is_block(w, level) && w->used[level])
		newline(w, w->depth);
	put(w, &close, 1);
}

void dx__jw_begin_object(dx_json_writer *w, int layout)
{
	begin(w, '{', layout);
}

void dx__jw_end_object(dx_json_writer *w)
{
	end(w, '}');
}

void dx__jw_begin_array(dx_json_writer *w, int layout)
{
	begin(w, '[', layout);
}

void dx__jw_end_array(dx_json_writer *w)
{
	end(w, ']');
}

/* The one escaping rule: runs of plain bytes copied whole, the quote and
 * the backslash after a backslash, control bytes as \u00XX. */
static void string(dx_json_writer *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const char *end = s + n;
	put(w, "\"", 1);
	while (s < end) {
		const char *q = s;
		while (q < end && (unsigned char)*q >= 0x20 && *q != '"' && *q != '\\')
			q++;
		put(w, s, (size_t)(q - s));
		if (q == end)
			break;
		unsigned char c = (unsigned char)*q;
		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			put(w, esc, 2);
		} else {
			char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			put(w, esc, 6);
		}
		s = q + 1;
	}
	put(w, "\"", 1);
}

void dx__jw_key(dx_json_writer *w, const char *name)
{
	before(w);
	string(w, name, strlen(name));
	put(w, ": ", 2);
	w->after_key = 1;
}

void dx__jw_string(dx_json_writer *w, const char *s, size_t n)
{
	before(w);
	string(w, s, n);
}

void dx__jw_cstring(dx_json_writer *w, const char *s)
{
	if (s)
		dx__jw_string(w, s, strlen(s));
	else
		dx__jw_null(w);
}

void dx__jw_null(dx_json_writer *w)
{
	before(w);
	puts_(w, "null");
}

void dx__jw_bool(dx_json_writer *w, int v)
{
	before(w);
	puts_(w, v ? "true" : "false");
}

void dx__jw_uint(dx_json_writer *w, uint64_t v)
{
	char buf[24];
	before(w);
	snprintf(buf, sizeof buf, "%" PRIu64, v);
	puts_(w, buf);
}

void dx__jw_int(dx_json_writer *w, int64_t v)
{
	char buf[24];
	before(w);
	snprintf(buf, sizeof buf, "%" PRId64, v);
	puts_(w, buf);
}

void dx__json_format_figure(char *buf, size_t n, double x)
{
	if (x == floor(x) && fabs(x) < 1e15)
		snprintf(buf, n, "%.0f", x);
	else
		snprintf(buf, n, "%.10g", x);
}

void dx__jw_figure(dx_json_writer *w, double x)
{
	char buf[64];
	if (!isfinite(x)) {
		dx__jw_null(w);
		return;
	}
	before(w);
	dx__json_format_figure(buf, sizeof buf, x);
	puts_(w, buf);
}

void dx__jw_double(dx_json_writer *w, double x, int precision)
{
	char buf[64];
	if (!isfinite(x)) {
		dx__jw_null(w);
		return;
	}
	before(w);
	snprintf(buf, sizeof buf, "%.*g", precision, x);
	puts_(w, buf);
}

void dx__jw_raw(dx_json_writer *w, const char *text, size_t n)
{
	before(w);
	put(w, text, n);
}

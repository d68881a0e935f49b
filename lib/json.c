/* json.c: reading JSON in place: walking records and checked texts (see json.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/* p at the opening quote; returns the byte after the closing one. */
static const char *skip_string(const char *p, const char *end)
{
	p++;
	for (;;) {
		const char *q = memchr(p, '"', (size_t)(end - p));
		if (!q)
			return NULL;
		/* The quote is escaped when an odd number of backslashes precede it. */
		const char *b = q;
		while (b > p && b[-1] == '\\')
			b--;
		if (((q - b) & 1) == 0)
			return q + 1;
		p = q + 1;
	}
}

/* Objects and arrays are skipped with a depth counter, strings whole. */
static const char *skip_nested(const char *p, const char *end)
{
	size_t depth = 0;
	while (p < end) {
		char c = *p;
		if (c == '"') {
			p = skip_string(p, end);
			if (!p)
				return NULL;
			continue;
		}
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return NULL;
			if (--depth == 0)
				return p + 1;
		}
		p++;
	}
	return NULL;
}

const char *dx__json_skip_value(const char *p, const char *end)
{
	p = skip_ws(p, end);
	if (p >= end)
		return NULL;
	if (*p == '"')
		return skip_string(p, end);
	if (*p == '{' || *p == '[')
		return skip_nested(p, end);
	/* A number or a literal: runs to the next delimiter. */
	const char *s = p;
	while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' &&
	       *p != '\r' && *p != '\n')
		p++;
	return p > s ? p : NULL;
}

int dx__json_open_object(const char **p, const char *end)
{
	const char *q = skip_ws(*p, end);
	if (q >= end || *q != '{')
		return -1;
	*p = q + 1;
	return 0;
}

int dx__json_next_member(const char **pp, const char *end, dx_json_member *m)
{
	const char *p = skip_ws(*pp, end);
	if (p < end && *p == ',')
		p = skip_ws(p + 1, end);
	if (p >= end)
		return -1;
	if (*p == '}') {
		*pp = p + 1;
		return 0;
	}
	if (*p != '"')
		return -1;
	const char *k = p + 1, *ke = skip_string(p, end);
	if (!ke)
		return -1;
	m->key = k;
	m->key_len = (size_t)(ke - 1 - k);
	m->key_escaped = memchr(k, '\\', m->key_len) != NULL;
	p = skip_ws(ke, end);
	if (p >= end || *p != ':')
		return -1;
	p = skip_ws(p + 1, end);
	const char *ve = dx__json_skip_value(p, end);
	if (!ve)
		return -1;
	m->val = p;
	m->val_end = ve;
	p = skip_ws(ve, end);
	if (p >= end || (*p != ',' && *p != '}'))
		return -1;
	*pp = p;
	return 1;
}

int dx__json_plain_string(const char *val, const char *val_end)
{
	return val_end - val >= 2 && *val == '"' &&
	       !memchr(val + 1, '\\', (size_t)(val_end - val - 2));
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int read_hex4(const char *p, const char *end, unsigned *out)
{
	if (end - p < 4)
		return -1;
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval((unsigned char)p[i]);
		if (h < 0)
			return -1;
		v = v << 4 | (unsigned)h;
	}
	*out = v;
	return 0;
}

static int add_utf8(dx_buf *out, unsigned cp)
{
	char t[4];
	size_t n;
	if (cp < 0x80) {
		t[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		t[0] = (char)(0xc0 | cp >> 6);
		t[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		t[0] = (char)(0xe0 | cp >> 12);
		t[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		t[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		t[0] = (char)(0xf0 | cp >> 18);
		t[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		t[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		t[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return dx__buf_add(out, t, n);
}

int dx__json_decode(const char *val, const char *val_end, dx_buf *out)
{
	if (val_end - val < 2 || *val != '"' || val_end[-1] != '"') {
		errno = EINVAL;
		return -1;
	}
	const char *p = val + 1, *end = val_end - 1;
	while (p < end) {
		const char *bs = memchr(p, '\\', (size_t)(end - p));
		size_t run = bs ? (size_t)(bs - p) : (size_t)(end - p);
		if (dx__buf_add(out, p, run) < 0)
			return -1;
		if (!bs)
			break;
		p = bs + 1;
		if (p >= end) {
			errno = EINVAL;
			return -1;
		}
		char c = *p++, lit;
		switch (c) {
		case '"': lit = '"'; break;
		case '\\': lit = '\\'; break;
		case '/': lit = '/'; break;
		case 'b': lit = '\b'; break;
		case 'f': lit = '\f'; break;
		case 'n': lit = '\n'; break;
		case 'r': lit = '\r'; break;
		case 't': lit = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (read_hex4(p, end, &cp) < 0) {
				errno = EINVAL;
				return -1;
			}
			p += 4;
			/* A high surrogate followed by a low one is one code point; a lone
			 * surrogate is kept as its own 3-byte sequence rather than lost. */
			if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
			    read_hex4(p + 2, end, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			if (add_utf8(out, cp) < 0)
				return -1;
			continue;
		}
		default:
			errno = EINVAL;
			return -1;
		}
		if (dx__buf_addc(out, lit) < 0)
			return -1;
	}
	return 0;
}

int dx__json_key_is(const dx_json_member *m, const char *name, size_t len)
{
	if (!m->key_escaped)
		return m->key_len == len && memcmp(m->key, name, len) == 0;
	char tmp[256];
	dx_buf b = { tmp, 0, sizeof tmp };
	/* Decoding never lengthens a key; a key longer than tmp is not a name we look for. */
	if (m->key_len + 2 > sizeof tmp)
		return 0;
	if (dx__json_decode(m->key - 1, m->key + m->key_len + 1, &b) < 0)
		return 0;
	return b.len == len && memcmp(b.p, name, len) == 0;
}

int dx__json_value(const dx_json_member *m, dx_buf *scratch, const char **out, size_t *outlen)
{
	if (*m->val != '"') {
		*out = m->val;
		*outlen = (size_t)(m->val_end - m->val);
		return 0;
	}
	if (dx__json_plain_string(m->val, m->val_end)) {
		*out = m->val + 1;
		*outlen = (size_t)(m->val_end - m->val - 2);
		return 0;
	}
	size_t at = scratch->len;
	if (dx__json_decode(m->val, m->val_end, scratch) < 0)
		return -1;
	*out = scratch->p + at;
	*outlen = scratch->len - at;
	return 0;
}

const char *dx__json_skip_ws(const char *p, const char *end)
{
	return skip_ws(p, end);
}

/* ---- checking a text against the grammar ------------------------------------ */

/* p at the opening quote: the byte after the closing one, or NULL. */
static const char *check_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c != '\\')
			continue;
		if (++p >= end)
			return NULL;
		switch (*p) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			break;
		case 'u':
			if (end - p < 5)
				return NULL;
			for (int i = 1; i <= 4; i++)
				if (hexval((unsigned char)p[i]) < 0)
					return NULL;
			p += 4;
			break;
		default:
			return NULL;
		}
	}
	return NULL;
}

static const char *digits_end(const char *p, const char *end)
{
	const char *s = p;
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > s ? p : NULL;
}

/* JSON's number grammar, stricter than strtod's (no hex, inf, nan, "+1"). */
static const char *check_number(const char *p, const char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (!(p = digits_end(p, end)))
		return NULL;
	if (p < end && *p == '.' && !(p = digits_end(p + 1, end)))
		return NULL;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!(p = digits_end(p, end)))
			return NULL;
	}
	return p;
}

static const char *check_word(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);
	return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

static const char *check_value(const char *p, const char *end, int depth, int max_depth)
{
	if (p >= end || depth > max_depth)
		return NULL;
	switch (*p) {
	case '"':
		return check_string(p, end);
	case '{':
	case '[': {
		char close = *p == '{' ? '}' : ']';
		p = skip_ws(p + 1, end);
		if (p < end && *p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				if (p >= end || *p != '"' || !(p = check_string(p, end)))
					return NULL;
				p = skip_ws(p, end);
				if (p >= end || *p != ':')
					return NULL;
				p = skip_ws(p + 1, end);
			}
			if (!(p = check_value(p, end, depth + 1, max_depth)))
				return NULL;
			p = skip_ws(p, end);
			if (p < end && *p == close)
				return p + 1;
			if (p >= end || *p != ',')
				return NULL;
			p = skip_ws(p + 1, end);
		}
	}
	case 't':
		return check_word(p, end, "true");
	case 'f':
		return check_word(p, end, "false");
	case 'n':
		return check_word(p, end, "null");
	}
	return check_number(p, end);
}

const char *dx__json_check(const char *p, const char *end, int max_depth)
{
	return check_value(p, end, 0, max_depth);
}

/* ---- walking a checked text ---------------------------------------------------- */

int dx__json_open_array(const char **p, const char *end)
{
	const char *q = skip_ws(*p, end);
	if (q >= end || *q != '[')
		return -1;
	*p = q + 1;
	return 0;
}

int dx__json_next_element(const char **pp, const char *end, const char **val, const char **val_end)
{
	const char *p = skip_ws(*pp, end);
	if (p < end && *p == ',')
		p = skip_ws(p + 1, end);
	if (p >= end)
		return -1;
	if (*p == ']') {
		*pp = p + 1;
		return 0;
	}
	const char *ve = dx__json_skip_value(p, end);
	if (!ve)
		return -1;
	*val = p;
	*val_end = ve;
	p = skip_ws(ve, end);
	if (p >= end || (*p != ',' && *p != ']'))
		return -1;
	*pp = p;
	return 1;
}

const char *dx__json_member(const char *obj, const char *end, const char *name)
{
	dx_json_member m;
	size_t len = strlen(name);
	if (!obj || dx__json_open_object(&obj, end) < 0)
		return NULL;
	while (dx__json_next_member(&obj, end, &m) == 1)
		if (dx__json_key_is(&m, name, len))
			return m.val;
	return NULL;
}

int dx__json_string_copy(const char *val, const char *end, char *buf, size_t n)
{
	if (!val || val >= end || *val != '"')
		return -1;
	const char *e = skip_string(val, end);
	if (!e)
		return -1;
	/* Most strings hold no escape: their bytes are copied as they are (a
	 * raw NUL never passes dx__json_check). */
	if (dx__json_plain_string(val, e)) {
		size_t len = (size_t)(e - val - 2);
		if (len >= n)
			return -1;
		memcpy(buf, val + 1, len);
		buf[len] = '\0';
		return 0;
	}
	dx_buf d = { 0 };
	int ok = dx__json_decode(val, e, &d) == 0 && d.len < n &&
	         (d.len == 0 || !memchr(d.p, '\0', d.len));
	if (ok) {
		if (d.len)
			memcpy(buf, d.p, d.len);
		buf[d.len] = '\0';
	}
	dx__buf_free(&d);
	return ok ? 0 : -1;
}

int dx__json_number(const char *val, double *out)
{
	if (!val || !(*val == '-' || (*val >= '0' && *val <= '9')))
		return -1;
	double x = strtod(val, NULL);
	if (!isfinite(x))
		return -1;
	*out = x;
	return 0;
}

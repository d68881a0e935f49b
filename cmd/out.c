/* out.c: see out.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out.h"

enum { OUT_SIZE = 1 << 18, REF_MIN = 1024 };

int out_open(out *o, int fd)
{
	*o = (out){ .fd = fd, .cap = OUT_SIZE };
	o->buf = malloc(o->cap);
	return o->buf ? 0 : -1;
}

/* Ends the run of copied bytes as one iovec, before a reference. */
static void seal_copied(out *o)
{
	if (o->len > o->copied_from) {
		o->iov[o->niov++] = (struct iovec){ o->buf + o->copied_from, o->len - o->copied_from };
		o->copied_from = o->len;
	}
}

int out_flush(out *o)
{
	seal_copied(o);
	struct iovec *v = o->iov;
	int n = o->niov;
	while (n && !o->closed && !o->error) {
		ssize_t r = writev(o->fd, v, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE)
				o->closed = 1;
			else
				o->error = errno;
			break;
		}
		/* Skip what was written, resuming inside a partly written iovec. */
		while (n && (size_t)r >= v->iov_len) {
			r -= (ssize_t)v->iov_len;
			v++;
			n--;
		}
		if (n) {
			v->iov_base = (char *)v->iov_base + r;
			v->iov_len -= (size_t)r;
		}
	}
	o->len = o->copied_from = 0;
	o->niov = 0;
	return o->closed || o->error ? -1 : 0;
}

int out_write(out *o, const void *p, size_t n)
{
	if (o->closed || o->error)
		return -1;
	while (n) {
		if (o->len == o->cap || o->niov >= OUT_IOV - 1)
			if (out_flush(o) < 0)
				return -1;
		size_t k = o->cap - o->len < n ? o->cap - o->len : n;
		memcpy(o->buf + o->len, p, k);
		o->len += k;
		p = (const char *)p + k;
		n -= k;
	}
	return 0;
}

int out_write_ref(out *o, const void *p, size_t n)
{
	if (n < REF_MIN)
		return out_write(o, p, n);
	if (o->closed || o->error)
		return -1;
	if (o->niov >= OUT_IOV - 2 && out_flush(o) < 0)
		return -1;
	seal_copied(o);
	o->iov[o->niov++] = (struct iovec){ (void *)p, n };
	return 0;
}

int out_close(out *o)
{
	out_flush(o);
	free(o->buf);
	o->buf = NULL;
	return o->error ? -1 : 0;
}

/* The first tab, LF or CR in [p, end), or end: three memchr, each over
 * what the one before left, run faster than a loop over the bytes. */
static const char *tsv_special(const char *p, const char *end)
{
	static const char special[] = "\t\n\r";
	for (const char *c = special; *c; c++) {
		const char *q = memchr(p, *c, (size_t)(end - p));
		if (q)
			end = q;
	}
	return end;
}

int out_tsv_field(out *o, const char *p, size_t n)
{
	const char *end = p + n;
	while (p < end) {
		const char *q = tsv_special(p, end);
		if (out_write(o, p, (size_t)(q - p)) < 0)
			return -1;
		if (q < end && out_char(o, ' ') < 0)
			return -1;
		p = q + 1;
	}
	return 0;
}

int out_json_string(out *o, const char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const char *end = p + n;
	if (out_char(o, '"') < 0)
		return -1;
	while (p < end) {
		const char *q = p;
		while (q < end && (unsigned char)*q >= 0x20 && *q != '"' && *q != '\\')
			q++;
		if (out_write(o, p, (size_t)(q - p)) < 0)
			return -1;
		if (q == end)
			break;
		char esc[6] = { '\\', 0 };
		size_t el = 2;
		switch (*q) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[(unsigned char)*q >> 4];
			esc[5] = hex[*q & 15];
			el = 6;
		}
		if (out_write(o, esc, el) < 0)
			return -1;
		p = q + 1;
	}
	return out_char(o, '"');
}

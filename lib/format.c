/* format.c: format names, detection and the line splitter. */
#include <string.h>

#include "format.h"

static const char *const names[] = { "auto", "tsv", "jsonl", "trec" };

const char *dx_format_name(int format)
{
	return format >= 0 && format <= DX_FMT_TREC ? names[format] : "unknown";
}

int dx_format_parse(const char *name)
{
	for (int i = 0; i <= DX_FMT_TREC; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

const dx_format_ops *dx__format_ops(int format)
{
	switch (format) {
	case DX_FMT_TSV: return &dx__fmt_tsv;
	case DX_FMT_JSONL: return &dx__fmt_jsonl;
	case DX_FMT_TREC: return &dx__fmt_trec;
	}
	return NULL;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int dx__format_detect(const char *p, size_t n)
{
	const char *end = p + n;
	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	while (p < end && is_blank(*p))
		p++;
	if (p >= end)
		return DX_FMT_AUTO;
	if (*p == '{')
		return DX_FMT_JSONL;
	if (end - p >= 5 && memcmp(p, "<DOC", 4) == 0 && (p[4] == '>' || is_blank(p[4])))
		return DX_FMT_TREC;
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	if (memchr(p, '\t', (size_t)((nl ? nl : end) - p)))
		return DX_FMT_TSV;
	return DX_FMT_AUTO;
}

int dx__next_line(const char *p, const char *end, int at_eof, size_t *hint,
                  const char **rec, size_t *len, const char **next)
{
	for (;;) {
		const char *from = p + *hint;
		const char *nl = from < end ? memchr(from, '\n', (size_t)(end - from)) : NULL;
		const char *le, *after;
		if (nl) {
			le = nl;
			after = nl + 1;
		} else if (at_eof && p < end) {
			le = end; /* a last line without a newline */
			after = end;
		} else {
			*hint = (size_t)(end - p);
			*next = p;
			return 0;
		}
		*hint = 0;
		if (le > p && le[-1] == '\r')
			le--;
		/* Blank lines (nothing but spaces, tabs or CR) separate nothing. */
		const char *q = p;
		if (q < le && (*q == ' ' || *q == '\t'))
			while (q < le && (*q == ' ' || *q == '\t'))
				q++;
		if (q == le) {
			p = after;
			continue;
		}
		*rec = p;
		*len = (size_t)(le - p);
		*next = after;
		return 1;
	}
}

int dx__line_ends(const char *rec, size_t len, const char *tail, size_t tail_len)
{
	if (len && rec[len - 1] == '\n')
		return 0;
	if (tail_len == 0 || tail[0] == '\n')
		return 1;
	/* CRLF, or a last line that ends in a lone CR. */
	return tail[0] == '\r' && (tail_len == 1 || tail[1] == '\n');
}

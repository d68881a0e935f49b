/*
 * fmt_trec.c: SGML-style TREC documents, each from <DOC> to </DOC>, the id
 * in <DOCNO> (or, in the NTCIR variant, an id="..." attribute of <DOC>).
 * The record tags are matched in upper case, as TREC writes them; the
 * elements inside a document in any case (<title>, <TEXT>).
 */
#include <string.h>
#include <strings.h>

#include "docdex.h"
#include "format.h"

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

static void trim(const char **s, size_t *n)
{
	while (*n && is_space(**s))
		(*s)++, (*n)--;
	while (*n && is_space((*s)[*n - 1]))
		(*n)--;
}

/* The first "<DOC>" or "<DOC attr..>" in [p, end); NULL if none.  *partial
 * is set when a "<DOC" at the very end cannot be told from "<DOCNO" yet. */
static const char *find_open(const char *p, const char *end, int *partial)
{
	*partial = 0;
	while (end - p >= 4) {
		const char *q = memmem(p, (size_t)(end - p), "<DOC", 4);
		if (!q)
			return NULL;
		if (q + 4 == end) {
			*partial = 1;
			return NULL;
		}
		if (q[4] == '>' || is_space(q[4]))
			return q;
		p = q + 4;
	}
	return NULL;
}

static int trec_next(const char *p, const char *end, int at_eof, size_t *hint,
                     const char **rec, size_t *len, const char **next)
{
	int partial;
	const char *open = find_open(p, end, &partial);
	if (!open) {
		/* Keep the last bytes, which may hold the start of a "<DOC". */
		size_t keep = partial ? 4 : (size_t)(end - p < 3 ? end - p : 3);
		*next = at_eof ? end : end - keep;
		*hint = 0;
		return 0;
	}
	/* Resume the search for </DOC> where the previous call stopped, less
	 * the length of the tag in case it straddled the end. */
	const char *from = open + 4;
	if (open == p && *hint > 6 && p + *hint - 6 > from)
		from = p + *hint - 6;
	const char *close = memmem(from, (size_t)(end - from), "</DOC>", 6);
	if (!close) {
		*next = open;
		*hint = (size_t)(end - open);
		if (at_eof) {
			*rec = open;
			*len = (size_t)(end - open);
			return -1;
		}
		return 0;
	}
	*hint = 0;
	*rec = open;
	*len = (size_t)(close + 6 - open);
	*next = close + 6;
	return 1;
}

/* The first element <name ...>content</name> in [p, end), name in any
 * case: 1 with the content's bounds, 0 if there is none. */
static int element(const char *p, const char *end, const char *name, size_t nlen,
                   const char **s, size_t *n)
{
	while (p < end) {
		const char *lt = memchr(p, '<', (size_t)(end - p));
		if (!lt || (size_t)(end - lt) < nlen + 2)
			return 0;
		p = lt + 1;
		if (strncasecmp(p, name, nlen) != 0 || (p[nlen] != '>' && !is_space(p[nlen])))
			continue;
		const char *gt = memchr(p + nlen, '>', (size_t)(end - p - nlen));
		if (!gt)
			return 0;
		const char *c = gt + 1;
		/* The closing tag: "</" name ">". */
		for (const char *q = c; q < end; q++) {
			q = memchr(q, '<', (size_t)(end - q));
			if (!q || (size_t)(end - q) < nlen + 3)
				break;
			if (q[1] == '/' && strncasecmp(q + 2, name, nlen) == 0 && q[2 + nlen] == '>') {
				*s = c;
				*n = (size_t)(q - c);
				return 1;
			}
		}
		return 0;
	}
	return 0;
}

/* The NTCIR variant: <DOC id="...">. */
static int id_attribute(const char *rec, size_t len, const char **s, size_t *n)
{
	const char *gt = memchr(rec, '>', len);
	if (!gt)
		return 0;
	for (const char *p = rec + 4; p + 4 < gt; p++) {
		if (strncasecmp(p, "id=", 3) != 0 || !is_space(p[-1]))
			continue;
		char q = p[3];
		if (q != '"' && q != '\'')
			return 0;
		const char *e = memchr(p + 4, q, (size_t)(gt - p - 4));
		if (!e)
			return 0;
		*s = p + 4;
		*n = (size_t)(e - p - 4);
		return 1;
	}
	return 0;
}

static int trec_id(const dx_params *pm, const char *rec, size_t len, dx_buf *scratch,
                   const char **id, size_t *idlen, const char **why)
{
	(void)pm;
	(void)scratch;
	if (!element(rec, rec + len, "DOCNO", 5, id, idlen) && !id_attribute(rec, len, id, idlen)) {
		*why = "<DOC> without <DOCNO>";
		return DX_ENOID;
	}
	trim(id, idlen);
	if (*idlen == 0) {
		*why = "<DOC> with an empty <DOCNO>";
		return DX_ENOID;
	}
	return 0;
}

enum { TREC_TEXT = 1, TREC_DOCNO = 2 };

static int trec_field_parse(const dx_params *pm, const char *name, size_t len, dx_field *f,
                            const char **why)
{
	(void)pm;
	/* The text when no field is named: exactly what "text" selects. */
	if (len == 0)
		return trec_field_parse(pm, "text", 4, f, why);
	memset(f, 0, sizeof *f);
	if (len >= sizeof f->name || memchr(name, '<', len) || memchr(name, '>', len)) {
		*why = "element names are 1 to 127 bytes without '<' or '>'";
		return DX_EINVAL;
	}
	memcpy(f->name, name, len);
	f->name_len = len;
	if (len == 4 && strncasecmp(name, "text", 4) == 0)
		f->column = TREC_TEXT;
	else if ((len == 5 && strncasecmp(name, "docno", 5) == 0) ||
	         (len == 2 && strncasecmp(name, "id", 2) == 0))
		f->column = TREC_DOCNO;
	return 0;
}

static int trec_field(const dx_params *pm, const dx_field *f, const char *rec, size_t len,
                      dx_buf *scratch, const char **out, size_t *outlen)
{
	const char *end = rec + len;
	if (f->column == TREC_DOCNO) {
		const char *why;
		if (trec_id(pm, rec, len, scratch, out, outlen, &why) < 0) {
			*outlen = 0;
			return DX_VALUE_ABSENT;
		}
		return DX_VALUE_TEXT;
	}
	if (element(rec, end, f->name, f->name_len, out, outlen)) {
		trim(out, outlen);
		return DX_VALUE_TEXT;
	}
	*out = rec;
	*outlen = 0;
	if (f->column == TREC_TEXT) {
		/* No <TEXT>: the text is what follows <DOCNO>..</DOCNO>, or the <DOC> tag. */
		const char *s, *body;
		size_t n;
		if (element(rec, end, "DOCNO", 5, &s, &n))
			body = memchr(s + n, '>', (size_t)(end - s - n));
		else
			body = memchr(rec, '>', len);
		if (body && end - body > 6) {
			*out = body + 1;
			*outlen = (size_t)(end - 6 - *out); /* less the closing </DOC> */
			trim(out, outlen);
		}
		/* Present, if empty: every document has a text. */
		return DX_VALUE_TEXT;
	}
	return DX_VALUE_ABSENT;
}

/* A document's fields: its id and its text, the two that every TREC
 * collection has (the other elements vary from one to the next). */
static int trec_all(const dx_params *pm, const char *rec, size_t len, dx_buf *scratch,
                    dx_value_sink add, void *ctx)
{
	static const char *const names[] = { "docno", "text" };
	for (int i = 0; i < 2; i++) {
		dx_field f;
		const char *why, *s;
		size_t n;
		int r = trec_field_parse(pm, names[i], strlen(names[i]), &f, &why);
		if (r == 0)
			r = trec_field(pm, &f, rec, len, scratch, &s, &n);
		if (r < 0 || (r = add(ctx, names[i], strlen(names[i]), s, n, r, i == 0)) < 0)
			return r;
	}
	return 0;
}

/* From <DOC to </DOC>, whatever follows. */
static int trec_ends(const char *rec, size_t len, const char *tail, size_t tail_len)
{
	(void)tail;
	(void)tail_len;
	return len >= 11 && memcmp(rec, "<DOC", 4) == 0 && memcmp(rec + len - 6, "</DOC>", 6) == 0;
}

const dx_format_ops dx__fmt_trec = {
	.name = "trec",
	.next = trec_next,
	.id = trec_id,
	.field_parse = trec_field_parse,
	.field = trec_field,
	.all = trec_all,
	.ends = trec_ends,
	.gap = 0,
};

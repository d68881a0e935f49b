/* fmt_tsv.c: tab-separated records, one a line (MS MARCO collection.tsv,
 * msmarco-docs.tsv).  The id is a column, the first by default. */
#include <string.h>

#include "docdex.h"
#include "format.h"

/* Column col (0-based) of a record: 1 with its bounds, 0 if the record has fewer. */
static int column(const char *rec, size_t len, unsigned col, const char **s, size_t *n)
{
	const char *p = rec, *end = rec + len;
	for (unsigned i = 0; i < col; i++) {
		const char *t = memchr(p, '\t', (size_t)(end - p));
		if (!t)
			return 0;
		p = t + 1;
	}
	const char *t = memchr(p, '\t', (size_t)(end - p));
	*s = p;
	*n = (size_t)((t ? t : end) - p);
	return 1;
}

static int tsv_id(const dx_params *pm, const char *rec, size_t len, dx_buf *scratch,
                  const char **id, size_t *idlen, const char **why)
{
	(void)scratch;
	if (!column(rec, len, pm->id_column - 1, id, idlen)) {
		*why = "record without an id column";
		return DX_ENOID;
	}
	if (*idlen == 0) {
		*why = "record with an empty id";
		return DX_ENOID;
	}
	return 0;
}

const char *dx__tsv_default_columns(const char *rec, size_t len)
{
	size_t tabs = 0;
	for (const char *p = rec, *end = rec + len; (p = memchr(p, '\t', (size_t)(end - p))); p++)
		tabs++;
	switch (tabs) {
	case 1: return "id,text";
	case 2: return "id,title,text";
	case 3: return "id,url,title,body";
	}
	return "";
}

enum { LAST_COLUMN = ~0u };

static int tsv_field_parse(const dx_params *pm, const char *name, size_t len, dx_field *f,
                           const char **why)
{
	memset(f, 0, sizeof *f);
	if (len == 0) {
		/* The text: a column named text or body, else the last one, which
		 * it is in every usual layout (id,text; id,title,text; id,url,title,body). */
		if (tsv_field_parse(pm, "text", 4, f, why) == 0 || tsv_field_parse(pm, "body", 4, f, why) == 0)
			return 0;
		f->column = LAST_COLUMN;
		return 0;
	}
	size_t digits = 0;
	unsigned long n = 0;
	while (digits < len && digits < 8 && name[digits] >= '0' && name[digits] <= '9')
		n = n * 10 + (unsigned long)(name[digits++] - '0');
	if (len > 0 && digits == len) {
		if (n == 0) {
			*why = "columns are numbered from 1";
			return DX_EINVAL;
		}
		f->column = (unsigned)n - 1;
		return 0;
	}
	const char *p = pm->columns;
	for (unsigned i = 0; *p; i++) {
		const char *c = strchr(p, ',');
		size_t nl = c ? (size_t)(c - p) : strlen(p);
		if (nl == len && memcmp(p, name, len) == 0) {
			f->column = i;
			return 0;
		}
		if (!c)
			break;
		p = c + 1;
	}
	*why = pm->columns[0] ? "no column of that name (see the index's columns)"
	                      : "the index names no columns; give a column number";
	return DX_EINVAL;
}

static int tsv_field(const dx_params *pm, const dx_field *f, const char *rec, size_t len,
                     dx_buf *scratch, const char **out, size_t *outlen)
{
	(void)pm;
	(void)scratch;
	if (f->column == LAST_COLUMN) {
		const char *t = memrchr(rec, '\t', len);
		*out = t ? t + 1 : rec;
		*outlen = (size_t)(rec + len - *out);
		return 0;
	}
	if (!column(rec, len, f->column, out, outlen)) {
		*out = rec;
		*outlen = 0;
	}
	return 0;
}

const dx_format_ops dx__fmt_tsv = {
	.name = "tsv",
	.next = dx__next_line,
	.id = tsv_id,
	.field_parse = tsv_field_parse,
	.field = tsv_field,
	.ends = dx__line_ends,
	.gap = 1,
};

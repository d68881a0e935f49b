/* fmt_tsv.c: tab-separated records, one a line (MS MARCO collection.tsv,
 * msmarco-docs.tsv).  The id is a column, the first by default. */
#include <stdio.h>
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

/* Sets the field's name, cut to fit (a column name can be 1023 bytes). */
static void set_name(dx_field *f, const char *name, size_t len)
{
	if (len >= sizeof f->name)
		len = sizeof f->name - 1;
	memcpy(f->name, name, len);
	f->name[len] = '\0';
	f->name_len = len;
}

/* The name the index gives column col (0-based): 1 with its bounds, 0 when
 * it names fewer columns.  *count is set to how many it names. */
static int column_name(const dx_params *pm, unsigned col, const char **s, size_t *n, unsigned *count)
{
	const char *p = pm->columns;
	int found = 0;
	*count = 0;
	while (*p) {
		const char *c = strchr(p, ',');
		size_t nl = c ? (size_t)(c - p) : strlen(p);
		if (*count == col) {
			*s = p;
			*n = nl;
			found = 1;
		}
		++*count;
		if (!c)
			break;
		p = c + 1;
	}
	return found;
}

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
		set_name(f, "text", 4);
		return 0;
	}
	size_t digits = 0;
	unsigned long n = 0;
	while (digits < len && digits < 8 && name[digits] >= '0' && name[digits] <= '9')
		n = n * 10 + (unsigned long)(name[digits++] - '0');
	const char *cn;
	size_t cl;
	unsigned count;
	if (len > 0 && digits == len) {
		if (n == 0) {
			*why = "columns are numbered from 1";
			return DX_EINVAL;
		}
		f->column = (unsigned)n - 1;
		/* The index's names count the columns (given to the build, or
		 * told by the first record): a column past them is one that
		 * no record has, not an empty one. */
		if (column_name(pm, f->column, &cn, &cl, &count))
			set_name(f, cn, cl);
		else if (count) {
			*why = "no column of that number";
			return DX_EINVAL;
		} else
			set_name(f, name, len);
		return 0;
	}
	for (unsigned i = 0; column_name(pm, i, &cn, &cl, &count); i++)
		if (cl == len && memcmp(cn, name, len) == 0) {
			f->column = i;
			set_name(f, name, len);
			return 0;
		}
	*why = pm->columns[0] ? "no column of that name"
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
		return DX_VALUE_TEXT;
	}
	if (!column(rec, len, f->column, out, outlen)) {
		*out = rec;
		*outlen = 0;
		return DX_VALUE_ABSENT;
	}
	return DX_VALUE_TEXT;
}

static int tsv_all(const dx_params *pm, const char *rec, size_t len, dx_buf *scratch,
                   dx_value_sink add, void *ctx)
{
	const char *p = rec, *end = rec + len;
	for (unsigned i = 0;; i++) {
		const char *t = memchr(p, '\t', (size_t)(end - p));
		const char *name;
		size_t nl;
		unsigned count;
		char num[16];
		if (!column_name(pm, i, &name, &nl, &count)) {
			/* Past the index's names, a column is named by its number. */
			nl = (size_t)snprintf(num, sizeof num, "%u", i + 1);
			size_t at = scratch->len;
			if (dx__buf_add(scratch, num, nl) < 0)
				return DX_ENOMEM;
			name = scratch->p + at;
		}
		int r = add(ctx, name, nl, p, (size_t)((t ? t : end) - p), DX_VALUE_TEXT, i + 1 == pm->id_column);
		if (r < 0)
			return r;
		if (!t)
			return 0;
		p = t + 1;
	}
}

const dx_format_ops dx__fmt_tsv = {
	.name = "tsv",
	.next = dx__next_line,
	.id = tsv_id,
	.field_parse = tsv_field_parse,
	.field = tsv_field,
	.all = tsv_all,
	.ends = dx__line_ends,
	.gap = 1,
};

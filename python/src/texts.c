/* texts.c: the one read path of the extension's documents, for Corpus
 * (read.c) and _Sampler (sampler.c): a batch of records read in one
 * dx_corpus_records call, each checked to hold the id its position has, its
 * fields taken and its text copied into one buffer; then made into
 * objects. */
#include <stdlib.h>
#include <string.h>

#include "pydocdex.h"

static int nomem(dx_err *err)
{
	*err = (dx_err){ .code = DX_ENOMEM };
	snprintf(err->what, sizeof err->what, "out of memory");
	return DX_ENOMEM;
}

static int room(dx_py_texts *t, size_t n)
{
	if (n <= t->cap)
		return 0;
	size_t cap = t->cap ? t->cap : 16;
	while (cap < n)
		cap *= 2;
	dx_record *rec = realloc(t->rec, cap * sizeof *rec);
	if (rec)
		t->rec = rec;
	dx_py_span *span = realloc(t->span, cap * sizeof *span);
	if (span)
		t->span = span;
	if (!rec || !span)
		return -1;
	t->cap = cap;
	return 0;
}

static int reserve(dx_py_texts *t, size_t more)
{
	if (t->bufcap - t->used >= more)
		return 0;
	size_t cap = t->bufcap ? t->bufcap : 4096;
	while (cap - t->used < more)
		cap *= 2;
	char *b = realloc(t->buf, cap);
	if (!b)
		return -1;
	t->buf = b;
	t->bufcap = cap;
	return 0;
}

int dx_py_texts_read(dx_py_texts *t, dx_corpus *c, const dx_fields *f, const uint64_t *pos,
                     size_t n, dx_err *err)
{
	int rc;
	t->used = 0;
	t->n = 0;
	if (n == 0)
		return 0;
	if (room(t, n) < 0)
		return nomem(err);
	/* As docdex get reads them: each record is checked to hold the id
	 * its position has, so an index that lies cannot serve another
	 * document. */
	if ((rc = dx_corpus_records(c, pos, n, t->rec, err)) < 0 ||
	    (rc = dx_corpus_check_ids(c, t->rec, n, err)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		dx_record r = t->rec[i];
		if (f) {
			const char *s;
			size_t len;
			if ((rc = dx_corpus_fields(c, f, &t->rec[i], &s, &len, err)) < 0)
				return rc;
			r = (dx_record){ .data = s, .len = len, .stable = 1 };
		}
		if (reserve(t, r.len) < 0)
			return nomem(err);
		/* The text may lie in the mapping: copied under the guard. */
		if ((rc = dx_corpus_copy(c, &r, t->buf + t->used, err)) < 0)
			return rc;
		t->span[i] = (dx_py_span){ .off = t->used, .len = r.len };
		t->used += r.len;
	}
	t->n = n;
	return 0;
}

PyObject *dx_py_text_object(const dx_py_texts *t, size_t i, int as_bytes)
{
	return text_object(t->buf + t->span[i].off, t->span[i].len, as_bytes);
}

void dx_py_texts_free(dx_py_texts *t)
{
	free(t->rec);
	free(t->span);
	free(t->buf);
	*t = (dx_py_texts){ 0 };
}

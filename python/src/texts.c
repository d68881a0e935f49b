/* texts.c: the one read path of the extension's documents, for Corpus
 * (read.c) and _Sampler (sampler.c): a batch of records read with
 * dx_corpus_records, each checked to hold the id its position has, its
 * fields taken and its text copied into one buffer (and for a str
 * decoded there, utf8.h); then made into objects. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pydocdex.h"
#include "utf8.h"

int dx_py_nomem(dx_err *err)
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
	dx_record *copy = realloc(t->copy, cap * sizeof *copy);
	if (copy)
		t->copy = copy;
	if (!rec || !span || !copy)
		return -1;
	t->cap = cap;
	return 0;
}

int dx_py_grow(char **buf, size_t *cap, size_t used, size_t more)
{
	if (*cap - used >= more)
		return 0;
	if (more > SIZE_MAX / 2 - used)
		return -1;
	size_t c = *cap ? *cap : 4096;
	while (c - used < more)
		c *= 2;
	char *b = realloc(*buf, c);
	if (!b)
		return -1;
	*buf = b;
	*cap = c;
	return 0;
}

int dx_py_corpus_plain(dx_corpus *c)
{
	dx_index *ix = dx_corpus_index(c);
	dx_index_info info;
	dx_index_get_info(ix, &info);
	for (uint32_t i = 0; i < info.sources; i++) {
		dx_source_info si;
		if (dx_index_get_source(ix, i, &si) < 0 || si.kind != DX_SOURCE_PLAIN)
			return 0;
	}
	return 1;
}

/*
 * Records of a plain corpus read this many at a time: each is touched
 * three times (read, id checked, copied), and a batch of 1,024 random
 * records spans more pages than the TLB holds, so each touch missed it
 * again; in runs of 16 the three touches hit (2.2 to 3.2 M records/s for
 * the library calls alone, 1 GiB corpus in the page cache).  A compressed
 * corpus is read in one call, which decompresses each stretch once.
 */
enum { PLAIN_RUN = 16 };

/* Makes the text of sp, copied into buf, into a str's units: where they
 * lie when it is ASCII, else decoded after the buffer's last text.  0,
 * or -1 when out of memory. */
static int decode_text(dx_py_texts *t, dx_py_span *sp)
{
	/* (An empty text may have no buffer: it is ASCII.) */
	if (!sp->len || dx_py_utf8_ascii((const unsigned char *)t->buf + sp->off, sp->len) == sp->len) {
		sp->maxchar = 127;
		return 0;
	}
	if (sp->len > SIZE_MAX / 4 || dx_py_grow(&t->buf, &t->bufcap, t->used, 4 * sp->len) < 0)
		return -1;
	size_t nchars;
	dx_py_utf8_decode((const unsigned char *)t->buf + sp->off, sp->len, t->buf + t->used, &nchars,
	                  &sp->maxchar);
	sp->off = t->used;
	sp->len = nchars;
	t->used += nchars * dx_py_utf8_width(sp->maxchar);
	return 0;
}

/* Whether [s, s + len) lies within rec's bytes. */
static int within(const dx_record *rec, const char *s, size_t len)
{
	uintptr_t a = (uintptr_t)rec->data, b = (uintptr_t)s;
	return b >= a && b - a <= rec->len && len <= rec->len - (b - a);
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
		return dx_py_nomem(err);
	size_t run = t->plain ? PLAIN_RUN : n;
	for (size_t at = 0; at < n; at += run) {
		size_t k = n - at < run ? n - at : run;
		dx_record *rec = t->rec + at;
		/* As docdex get reads them: each record is checked to hold the
		 * id its position has, so an index that lies cannot serve
		 * another document. */
		if ((rc = dx_corpus_records(c, pos + at, k, rec, err)) < 0)
			return rc;
		if ((rc = dx_corpus_check_ids(c, rec, k, err)) < 0)
			return rc;
		/* Texts in the mapping wait in copy[0..np) to be copied
		 * together under the guard, to buf + from on, one guarded call
		 * a run where one a text took a tenth of a batch's time. */
		size_t np = 0, from = t->used;
		for (size_t i = 0; i < k; i++) {
			dx_record r = rec[i];
			if (f) {
				const char *s;
				size_t len;
				if ((rc = dx_corpus_fields(c, f, &rec[i], &s, &len, err)) < 0)
					return rc;
				/* Fields lie in the record's bytes, or in the
				 * corpus's scratch buffer (JSON decoded, fields
				 * joined), which the next call reuses. */
				r = (dx_record){ .data = s, .len = len,
				                 .stable = rec[i].stable && within(&rec[i], s, len) };
			}
			if (t->keep_mapped && r.stable) {
				t->span[at + i] = (dx_py_span){ .len = r.len, .mapped = r.data };
				continue;
			}
			if (dx_py_grow(&t->buf, &t->bufcap, t->used, r.len) < 0)
				return dx_py_nomem(err);
			t->span[at + i] = (dx_py_span){ .off = t->used, .len = r.len };
			if (r.stable) {
				t->copy[np++] = r;
			} else {
				/* Decompressed, or in the scratch buffer: the
				 * waiting texts first, then this one at once. */
				if (np && (rc = dx_corpus_copy_many(c, t->copy, np, t->buf + from, err)) < 0)
					return rc;
				if (r.len)
					memcpy(t->buf + t->used, r.data, r.len);
				np = 0;
				from = t->used + r.len;
			}
			t->used += r.len;
		}
		if (np && (rc = dx_corpus_copy_many(c, t->copy, np, t->buf + from, err)) < 0)
			return rc;
		for (size_t i = 0; t->decode && i < k; i++)
			if (!t->span[at + i].mapped && decode_text(t, &t->span[at + i]) < 0)
				return dx_py_nomem(err);
	}
	t->n = n;
	return 0;
}

PyObject *dx_py_text_object(const dx_py_texts *t, size_t i, int kind, CorpusObject *owner)
{
	const dx_py_span *sp = &t->span[i];
	if (sp->mapped) /* read with keep_mapped, for a view */
		return dx_py_mapped(owner, sp->mapped, sp->len);
	const char *s = sp->len ? t->buf + sp->off : "";
	if (sp->maxchar) /* read with decode, for a str */
		return dx_py_str(s, sp->len, sp->maxchar);
	return text_object(s, sp->len, kind != DX_PY_STR);
}

void dx_py_texts_trim(dx_py_texts *t)
{
	/* A batch of large documents should not keep its buffer for good. */
	if (t->bufcap > ((size_t)4 << 20)) {
		free(t->buf);
		t->buf = NULL;
		t->bufcap = t->used = 0;
	}
	if (t->cap > 65536) {
		free(t->rec);
		free(t->span);
		free(t->copy);
		t->rec = NULL;
		t->span = NULL;
		t->copy = NULL;
		t->cap = 0;
	}
	t->n = 0;
}

void dx_py_texts_free(dx_py_texts *t)
{
	free(t->rec);
	free(t->span);
	free(t->copy);
	free(t->buf);
	*t = (dx_py_texts){ 0 };
}

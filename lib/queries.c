/*
 * queries.c: query texts for sample, in the layouts people have them:
 * "qid TAB text" (MS MARCO queries, anserini TSV topics), "qid text" on one
 * line (Terrier single-line topics), JSONL (BEIR queries.jsonl), and TREC
 * topics, SGML (<top><num>..<title>..) or XML (<topic number=..><title>..).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "json.h"
#include "sample.h"

int dx__queries_add(dx_sampler *s, const char *id, size_t idlen, const char *text, size_t textlen,
                    uint32_t *idx, dx_err *err)
{
	dx_queries *q = &s->q;
	uint32_t i;
	int r = dx__strtab_add(&q->ids, id, idlen, &i);
	if (r < 0)
		return dx__fail_nomem(err);
	*idx = i;
	if (r == 0)
		return 0;
	if (i + 1 >= q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 1024;
		uint64_t *off = realloc(q->text_off, (size_t)cap * sizeof *off);
		if (!off)
			return dx__fail_nomem(err);
		q->text_off = off;
		q->cap = cap;
	}
	if (dx__buf_add(&q->text, text, textlen) < 0)
		return dx__fail_nomem(err);
	q->text_off[i] = q->text.len - textlen;
	q->text_off[i + 1] = q->text.len;
	return 1;
}

/* A query of the file: a repeated id keeps its first text, counted. */
static int add(dx_sampler *s, const dx_textfile *t, const char *id, size_t idlen, const char *text,
               size_t textlen, dx_err *err)
{
	uint32_t i;
	int r = dx__queries_add(s, id, idlen, text, textlen, &i, err);
	if (r < 0)
		return r;
	if (r == 0)
		return dx__sample_problem(s, DX_SP_DUP_QUERY, t, err, "query id given twice");
	s->rep.queries++;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void trim(const char **p, size_t *n)
{
	while (*n && is_blank(**p))
		(*p)++, (*n)--;
	while (*n && is_blank((*p)[*n - 1]))
		(*n)--;
}

/* "qid TAB text [TAB ...]", or without a tab "qid text". */
static int line_query(dx_sampler *s, const dx_textfile *t, const char *line, size_t len, dx_err *err)
{
	const char *tab = memchr(line, '\t', len), *text, *end = line + len;
	size_t idlen;
	if (tab) {
		idlen = (size_t)(tab - line);
		text = tab + 1;
		const char *tab2 = memchr(text, '\t', (size_t)(end - text));
		if (tab2)
			end = tab2;
	} else {
		const char *sp = memchr(line, ' ', len);
		if (!sp)
			return dx__sample_problem(s, DX_SP_BAD_LINE, t, err, "query line without text");
		idlen = (size_t)(sp - line);
		text = sp;
		while (text < end && *text == ' ')
			text++;
	}
	if (idlen == 0)
		return dx__sample_problem(s, DX_SP_BAD_LINE, t, err, "query line without an id");
	return add(s, t, line, idlen, text, (size_t)(end - text), err);
}

static int json_query(dx_sampler *s, const dx_textfile *t, const char *line, size_t len,
                      dx_buf *scratch, dx_err *err)
{
	static const char *const id_keys[] = { "_id", "qid", "query_id", "id" };
	static const char *const text_keys[] = { "text", "query", "title", "contents" };
	const char *p = line, *end = line + len;
	dx_json_member m, id = { 0 }, text = { 0 };
	unsigned id_rank = 99, text_rank = 99;
	int r = dx__json_open_object(&p, end);
	while (r == 0 && (r = dx__json_next_member(&p, end, &m)) == 1) {
		for (unsigned k = 0; k < 4 && k < id_rank; k++)
			if (dx__json_key_is(&m, id_keys[k], strlen(id_keys[k])))
				id = m, id_rank = k;
		for (unsigned k = 0; k < 4 && k < text_rank; k++)
			if (dx__json_key_is(&m, text_keys[k], strlen(text_keys[k])))
				text = m, text_rank = k;
		r = 0;
	}
	if (r < 0)
		return dx__sample_problem(s, DX_SP_BAD_LINE, t, err, "malformed JSON");
	if (!id.val || !text.val)
		return dx__sample_problem(s, DX_SP_BAD_LINE, t, err, "query without %s",
		                          id.val ? "a text" : "an id");
	const char *ids, *texts;
	size_t idn, textn;
	scratch->len = 0;
	/* Both values may land in scratch: reserve first so neither moves. */
	if (dx__buf_reserve(scratch, len) < 0)
		return dx__fail_nomem(err);
	if (dx__json_value(&id, scratch, &ids, &idn) < 0 || dx__json_value(&text, scratch, &texts, &textn) < 0)
		return dx__sample_problem(s, DX_SP_BAD_LINE, t, err, "malformed JSON string");
	if (idn == 0)
		return dx__sample_problem(s, DX_SP_BAD_LINE, t, err, "query with an empty id");
	return add(s, t, ids, idn, texts, textn, err);
}

/* The start of the next tag named name (case aside) in [p, end), or NULL;
 * the name must be followed by '>', a blank or '/'. */
static const char *find_tag(const char *p, const char *end, const char *name)
{
	size_t n = strlen(name);
	while ((p = memchr(p, '<', (size_t)(end - p)))) {
		if ((size_t)(end - p) > n + 1 && strncasecmp(p + 1, name, n) == 0 &&
		    (p[n + 1] == '>' || p[n + 1] == '/' || is_blank(p[n + 1])))
			return p;
		p++;
	}
	return NULL;
}

/* The text of element name in [p, end): from the end of its opening tag to
 * the next tag.  Returns 1 with it trimmed, else 0. */
static int element(const char *p, const char *end, const char *name, const char **out, size_t *n)
{
	const char *tag = find_tag(p, end, name);
	const char *gt = tag ? memchr(tag, '>', (size_t)(end - tag)) : NULL;
	if (!gt)
		return 0;
	const char *lt = memchr(gt, '<', (size_t)(end - gt));
	*out = gt + 1;
	*n = (size_t)((lt ? lt : end) - *out);
	trim(out, n);
	return 1;
}

/* Drops a label like "Number:" or "Topic:" from the front of a field. */
static void drop_label(const char **p, size_t *n, const char *label)
{
	size_t k = strlen(label);
	if (*n >= k && strncasecmp(*p, label, k) == 0) {
		*p += k;
		*n -= k;
		trim(p, n);
	}
}

/* The number="..." attribute of a tag [tag, gt). */
static int number_attr(const char *tag, const char *gt, const char **out, size_t *n)
{
	for (const char *p = tag; p + 8 < gt; p++)
		if (strncasecmp(p, "number=", 7) == 0 && (p[7] == '"' || p[7] == '\'')) {
			const char *v = p + 8, *q = memchr(v, p[7], (size_t)(gt - v));
			if (!q)
				return 0;
			*out = v;
			*n = (size_t)(q - v);
			trim(out, n);
			return 1;
		}
	return 0;
}

/* Topics: blocks opened by <top> or <topic ...>. */
static int topic_queries(dx_sampler *s, dx_textfile *t, const char *buf, size_t len, dx_buf *text,
                         dx_err *err)
{
	const char *p = buf, *end = buf + len;
	uint64_t line = 1;
	const char *counted = buf;
	for (;;) {
		const char *top = find_tag(p, end, "top"), *topic = find_tag(p, end, "topic");
		const char *b = top && (!topic || top < topic) ? top : topic;
		if (!b)
			return 0;
		const char *gt = memchr(b, '>', (size_t)(end - b));
		if (!gt)
			gt = end;
		const char *e = find_tag(gt, end, b == top ? "/top" : "/topic");
		if (!e)
			e = end;
		for (; counted < b; counted++)
			line += *counted == '\n';
		t->line = line;
		const char *id, *txt;
		size_t idn, txtn;
		if (!number_attr(b, gt, &id, &idn) && !element(gt, e, "num", &id, &idn) &&
		    !element(gt, e, "number", &id, &idn))
			idn = 0;
		drop_label(&id, &idn, "Number:");
		/* TREC numbers its topics 051 in the topics and 51 in the qrels. */
		while (idn > 1 && *id == '0' && strspn(id, "0123456789") >= idn)
			id++, idn--;
		if (!element(gt, e, "title", &txt, &txtn) && !element(gt, e, "query", &txt, &txtn))
			txtn = 0;
		drop_label(&txt, &txtn, "Topic:");
		/* A title may run over several lines: one space between words. */
		text->len = 0;
		for (size_t i = 0; i < txtn; i++) {
			if (is_blank(txt[i]) && (text->len == 0 || text->p[text->len - 1] == ' '))
				continue;
			if (dx__buf_addc(text, is_blank(txt[i]) ? ' ' : txt[i]) < 0)
				return dx__fail_nomem(err);
		}
		int r;
		if (idn == 0)
			r = dx__sample_problem(s, DX_SP_BAD_LINE, t, err, "topic without a number");
		else if (text->len == 0)
			r = dx__sample_problem(s, DX_SP_BAD_LINE, t, err, "topic without a title");
		else
			r = add(s, t, id, idn, text->p, text->len, err);
		if (r < 0)
			return r;
		p = e < end ? e + 1 : end;
	}
}

int dx__queries_load(dx_sampler *s, dx_err *err)
{
	dx_textfile t;
	int r = dx__textfile_open(&t, s->o.queries, err);
	if (r < 0)
		return r;
	enum { UNKNOWN, LINES, JSON, TOPICS } kind = UNKNOWN;
	dx_buf scratch = { 0 }, all = { 0 };
	dx_shape shape = { .input = DX_INPUT_QUERIES };
	char *line;
	size_t len;
	while (r >= 0 && (r = dx__textfile_next(&t, &line, &len, err)) == 1) {
		if ((r = dx__sample_tick(s, &t, err)) < 0)
			break;
		const char *p = line;
		size_t n = len;
		trim(&p, &n);
		if (n && !shape.done && (r = dx__shape_line(s, &shape, &t, line, len, err)) < 0)
			break;
		if (kind == UNKNOWN && n)
			kind = *p == '{' ? JSON : *p == '<' ? TOPICS : LINES;
		if (kind == TOPICS) {
			/* Topics are small: gather them whole, then parse. */
			if (dx__buf_add(&all, line, len) < 0 || dx__buf_addc(&all, '\n') < 0)
				r = dx__fail_nomem(err);
		} else if (n && kind == JSON) {
			r = json_query(s, &t, p, n, &scratch, err);
		} else if (n) {
			r = line_query(s, &t, line, len, err);
		}
	}
	if (r == 0 && kind == TOPICS)
		r = topic_queries(s, &t, all.p, all.len, &scratch, err);
	if (r == 0 && s->rep.queries == 0)
		r = dx__shape_failure(s, DX_INPUT_QUERIES, err)
		        ? err->code
		        : dx__fail(err, DX_EFORMAT, 0, s->o.queries, "no queries in the file%s",
		                   /* JSON that is not JSONL queries: a JSON qrels
		                    * file, a corpus, one object over many lines */
		                   kind == JSON ? ": no line is a JSON object with a query id and a text" : "");
	dx__buf_free(&scratch);
	dx__buf_free(&all);
	dx__textfile_close(&t);
	return r < 0 ? r : 0;
}

void dx__queries_free(dx_queries *q)
{
	dx__strtab_free(&q->ids);
	dx__buf_free(&q->text);
	free(q->text_off);
	memset(q, 0, sizeof *q);
}

/*
 * config.c: experiment files, one YAML mapping of keys to scalars or lists
 * of scalars.  libyaml's event parser is enough for that shape, and unlike
 * its document loader it lets a nested value be refused at its own line
 * before anything is built for it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "dxbench.h"
#include "buf.h"
#include "err.h"
#include "strtab.h"

/* An experiment file is a few hundred bytes of options.  Read whole, it
 * is bounded, so that -c /dev/zero or a log given by mistake is refused
 * at once instead of read until memory runs out. */
enum { CONFIG_MAX = 1 << 20 };

struct dxb_config {
	dxb_config_item *items;
	size_t n, cap;
};

struct loader {
	const char *path;
	const dx_buf *text;
	dx_err *err;
	yaml_parser_t parser;
	yaml_event_t ev;
	int have_ev;
	dxb_config *c;
	dx_strtab keys;   /* finds a repeated key without a quadratic scan */
	dx_buf list;      /* a sequence's items, joined */
};

/* Fills err with subject "PATH:LINE", or "PATH:LINE: KEY" when key is not
 * NULL; line0 is libyaml's 0-based line. */
static int fail_at(struct loader *l, size_t line0, const char *key, const char *what)
{
	char subject[sizeof l->err->subject];
	if (key)
		snprintf(subject, sizeof subject, "%s:%zu: %s", l->path, line0 + 1, key);
	else
		snprintf(subject, sizeof subject, "%s:%zu", l->path, line0 + 1);
	return dx__fail(l->err, DX_EFORMAT, 0, subject, "%s", what);
}

static int syntax_error(struct loader *l)
{
	const yaml_parser_t *p = &l->parser;
	if (p->error == YAML_MEMORY_ERROR)
		return dx__fail_nomem(l->err);
	size_t line0 = p->problem_mark.line;
	/* A reader error (bad UTF-8, a control character) comes with a byte
	 * offset and no mark: count the lines up to it ourselves. */
	if (p->error == YAML_READER_ERROR) {
		line0 = 0;
		for (size_t i = 0; i < p->problem_offset && i < l->text->len; i++)
			line0 += l->text->p[i] == '\n';
	}
	char what[sizeof l->err->what];
	int n = snprintf(what, sizeof what, "malformed YAML: %s", p->problem ? p->problem : "unknown error");
	/* An unclosed bracket or quote is noticed lines after it was opened,
	 * and that line is the one to look at: name it too. */
	if (p->context && p->context_mark.line != line0 && n > 0 && (size_t)n < sizeof what)
		snprintf(what + n, sizeof what - (size_t)n, " (%s on line %zu)", p->context,
		         p->context_mark.line + 1);
	return fail_at(l, line0, NULL, what);
}

static int next(struct loader *l)
{
	if (l->have_ev) {
		yaml_event_delete(&l->ev);
		l->have_ev = 0;
	}
	if (!yaml_parser_parse(&l->parser, &l->ev))
		return syntax_error(l);
	l->have_ev = 1;
	return 0;
}

static size_t ev_line(const struct loader *l)
{
	return l->ev.start_mark.line;
}

/* A null written plainly (`key:`, `key: ~`, `key: null`) is an empty value;
 * quoted, the same text is kept as it is. */
static int is_null(const yaml_event_t *ev)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
		if (ev->data.scalar.length == strlen(nulls[i]) &&
		    memcmp(ev->data.scalar.value, nulls[i], ev->data.scalar.length) == 0)
			return 1;
	return 0;
}

/* The items are handed out as C strings, so a NUL written as "\0" would cut
 * one short without a word. */
static int has_nul(const yaml_event_t *ev)
{
	return memchr(ev->data.scalar.value, '\0', ev->data.scalar.length) != NULL;
}

static char *copy(const void *p, size_t n)
{
	char *s = malloc(n + 1);
	if (s) {
		if (n)
			memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

/* The value of key, the current event being its first. */
static int value(struct loader *l, dxb_config_item *it)
{
	const char *key = it->key;
	switch (l->ev.type) {
	case YAML_SCALAR_EVENT:
		if (has_nul(&l->ev))
			return fail_at(l, ev_line(l), key, "a value must not contain a NUL character");
		if (is_null(&l->ev))
			it->value = copy("", 0);
		else
			it->value = copy(l->ev.data.scalar.value, l->ev.data.scalar.length);
		return it->value ? 0 : dx__fail_nomem(l->err);
	case YAML_SEQUENCE_START_EVENT:
		break;
	case YAML_ALIAS_EVENT:
		return fail_at(l, ev_line(l), key, "aliases are not supported");
	default:
		return fail_at(l, ev_line(l), key, "a value must be a scalar or a list of scalars");
	}
	l->list.len = 0;
	for (size_t n = 0;; n++) {
		int r = next(l);
		if (r < 0)
			return r;
		if (l->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		if (l->ev.type == YAML_ALIAS_EVENT)
			return fail_at(l, ev_line(l), key, "aliases are not supported");
		if (l->ev.type != YAML_SCALAR_EVENT)
			return fail_at(l, ev_line(l), key, "a value must be a scalar or a list of scalars");
		if (has_nul(&l->ev))
			return fail_at(l, ev_line(l), key, "a value must not contain a NUL character");
		if ((n && dx__buf_addc(&l->list, ',') < 0) ||
		    (!is_null(&l->ev) &&
		     dx__buf_add(&l->list, l->ev.data.scalar.value, l->ev.data.scalar.length) < 0))
			return dx__fail_nomem(l->err);
	}
	it->is_list = 1;
	it->value = copy(l->list.p, l->list.len);
	return it->value ? 0 : dx__fail_nomem(l->err);
}

/* One key and its value, the current event being the key. */
static int member(struct loader *l)
{
	if (l->ev.type == YAML_ALIAS_EVENT)
		return fail_at(l, ev_line(l), NULL, "aliases are not supported");
	if (l->ev.type != YAML_SCALAR_EVENT)
		return fail_at(l, ev_line(l), NULL, "a key must be a scalar");
	if (has_nul(&l->ev))
		return fail_at(l, ev_line(l), NULL, "a key must not contain a NUL character");
	dxb_config *c = l->c;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		dxb_config_item *items = realloc(c->items, cap * sizeof *items);
		if (!items)
			return dx__fail_nomem(l->err);
		c->items = items;
		c->cap = cap;
	}
	/* Counted at once, so that dxb_config_free releases the key whatever
	 * happens to its value. */
	dxb_config_item *it = &c->items[c->n++];
	memset(it, 0, sizeof *it);
	it->key = copy(l->ev.data.scalar.value, l->ev.data.scalar.length);
	if (!it->key)
		return dx__fail_nomem(l->err);
	it->line = (unsigned)(ev_line(l) + 1);
	uint32_t idx;
	int r = dx__strtab_add(&l->keys, it->key, l->ev.data.scalar.length, &idx);
	if (r < 0)
		return dx__fail_nomem(l->err);
	if (r == 0)
		return fail_at(l, ev_line(l), it->key, "key given twice");
	if ((r = next(l)) < 0)
		return r;
	return value(l, it);
}

/* Reads the whole file, so that a read error is told from a YAML one and a
 * reader error's offset can be turned into a line: at most CONFIG_MAX
 * bytes, and one more to tell a file that is larger. */
static int slurp(const char *path, dx_buf *b, dx_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dx__fail_sys(err, path, "cannot open");
	int r = 0;
	for (;;) {
		if (b->len > CONFIG_MAX) {
			r = dx__fail(err, DX_EFORMAT, 0, path, "experiment file larger than %d MiB",
			             CONFIG_MAX >> 20);
			break;
		}
		if (dx__buf_reserve(b, 1 << 16) < 0) {
			r = dx__fail_nomem(err);
			break;
		}
		size_t room = b->cap - b->len, want = CONFIG_MAX + 1 - b->len;
		ssize_t n = read(fd, b->p + b->len, room < want ? room : want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = dx__fail_sys(err, path, "cannot read");
			break;
		}
		if (n == 0)
			break;
		b->len += (size_t)n;
	}
	close(fd);
	return r;
}

static int parse(struct loader *l)
{
	int r;
	if ((r = next(l)) < 0)
		return r;
	/* STREAM-START, then a document unless the stream is empty. */
	if ((r = next(l)) < 0)
		return r;
	if (l->ev.type == YAML_STREAM_END_EVENT)
		return 0;
	if ((r = next(l)) < 0)
		return r;
	if (l->ev.type == YAML_SCALAR_EVENT && l->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    l->ev.data.scalar.length == 0) {
		/* "---" with nothing after it: a document with no content. */
	} else if (l->ev.type == YAML_ALIAS_EVENT) {
		return fail_at(l, ev_line(l), NULL, "aliases are not supported");
	} else if (l->ev.type != YAML_MAPPING_START_EVENT) {
		return fail_at(l, ev_line(l), NULL, "an experiment must be a mapping of keys to values");
	} else {
		for (;;) {
			if ((r = next(l)) < 0)
				return r;
			if (l->ev.type == YAML_MAPPING_END_EVENT)
				break;
			if ((r = member(l)) < 0)
				return r;
		}
	}
	if ((r = next(l)) < 0)   /* DOCUMENT-END */
		return r;
	if ((r = next(l)) < 0)
		return r;
	if (l->ev.type != YAML_STREAM_END_EVENT)
		return fail_at(l, ev_line(l), NULL, "an experiment must be a single YAML document");
	return 0;
}

dxb_config *dxb_config_load(const char *path, dx_err *err)
{
	dx_buf text = { 0 };
	struct loader l = { .path = path, .text = &text, .err = err };
	int parser_ready = 0, r;
	if ((r = slurp(path, &text, err)) < 0)
		goto out;
	l.c = calloc(1, sizeof *l.c);
	if (!l.c) {
		r = dx__fail_nomem(err);
		goto out;
	}
	if (!yaml_parser_initialize(&l.parser)) {
		r = dx__fail_nomem(err);
		goto out;
	}
	parser_ready = 1;
	yaml_parser_set_input_string(&l.parser, (const unsigned char *)(text.p ? text.p : ""), text.len);
	r = parse(&l);
out:
	if (l.have_ev)
		yaml_event_delete(&l.ev);
	if (parser_ready)
		yaml_parser_delete(&l.parser);
	dx__strtab_free(&l.keys);
	dx__buf_free(&l.list);
	dx__buf_free(&text);
	if (r < 0) {
		dxb_config_free(l.c);
		return NULL;
	}
	return l.c;
}

size_t dxb_config_count(const dxb_config *c)
{
	return c ? c->n : 0;
}

const dxb_config_item *dxb_config_item_at(const dxb_config *c, size_t i)
{
	return c && i < c->n ? &c->items[i] : NULL;
}

void dxb_config_free(dxb_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free((char *)c->items[i].key);
		free((char *)c->items[i].value);
	}
	free(c->items);
	free(c);
}

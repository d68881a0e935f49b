/* sampler.c: docdex._docdex._Sampler, the C half of docdex.Sampler: a
 * dx_sampler over a corpus of its own, drawn a batch at a time.  The
 * Python half (docdex/__init__.py) reads the arguments, shards, counts
 * what was yielded and resumes. */
#include <stdlib.h>
#include <string.h>

#include "pydocdex.h"

typedef struct {
	PyObject_HEAD
	dx_corpus *c;           /* NULL: ids only */
	dx_fields *fields;      /* what a document's text is */
	dx_sampler *s;          /* NULL once closed */
	unsigned k;             /* negatives per triple */
	int triples;            /* drawn from a triples file: in order only */
	int plain;              /* c's sources are all plain files */
	/* The input paths as bytes: the library keeps pointers to them (it
	 * names the triples file in errors met while drawing, and in at). */
	PyObject *paths[5];
	pthread_mutex_t *lock; /* one call at a time on c and s */
} SamplerObject;

/* A batch being drawn: filled without the GIL, made into objects after. */
typedef struct batch {
	dx_triple *t;
	uint64_t *neg, *pos;
	size_t n, got;
	/* the strings of each triple: qid, query, then per document its id and
	 * (with a corpus) its text; ids in buf, texts in tx's buffer */
	char *buf;
	size_t len, cap;
	struct piece {
		size_t off, len;
		int text;       /* in tx.buf rather than buf, */
		uint32_t maxchar; /* decoded there (dx_py_span) */
	} *str;
	size_t nstr;
	dx_py_texts tx;
	int done;               /* the sampler has no more */
	dx_err err;
	int rc;
} batch;

static int add(batch *b, const char *s, size_t n)
{
	if (dx_py_grow(&b->buf, &b->cap, b->len, n) < 0)
		return -1;
	if (n)
		memcpy(b->buf + b->len, s, n);
	b->str[b->nstr++] = (struct piece){ .off = b->len, .len = n };
	b->len += n;
	return 0;
}

static int nomem(batch *b)
{
	return b->rc = dx_py_nomem(&b->err);
}

/* Strings per triple: qid, query, then an id and (with a corpus) a text
 * for each document. */
static size_t per_triple(const SamplerObject *self)
{
	return 2 + (size_t)(1 + self->k) * (self->c ? 2 : 1);
}

/* The strings of the b->got triples in b->t: their documents' texts read
 * in one batch (texts.c), as Corpus reads them.  Under the sampler's
 * lock, without the GIL. */
static int fill(SamplerObject *self, batch *b)
{
	int r;
	size_t m = 0;
	for (size_t i = 0; i < b->got; i++) {
		b->pos[m++] = b->t[i].pos;
		for (unsigned j = 0; j < b->t[i].nneg; j++)
			b->pos[m++] = b->t[i].neg[j];
	}
	if (self->c && (r = dx_py_texts_read(&b->tx, self->c, self->fields, b->pos, m, &b->err)) < 0)
		return b->rc = r;
	size_t per = 1 + self->k, doc = 0;
	for (size_t i = 0; i < b->got; i++) {
		const dx_triple *t = &b->t[i];
		if (add(b, t->qid, t->qid_len) < 0 || add(b, t->query, t->query_len) < 0)
			return nomem(b);
		for (size_t d = 0; d < per; d++) {
			const char *s;
			size_t n;
			/* A triple may hold fewer negatives than asked: empty. */
			if (d > t->nneg) {
				if (add(b, "", 0) < 0 || (self->c && add(b, "", 0) < 0))
					return nomem(b);
				continue;
			}
			if ((r = dx_sampler_doc_id(self->s, b->pos[doc], &s, &n, &b->err)) < 0)
				return b->rc = r;
			if (add(b, s, n) < 0)
				return nomem(b);
			if (self->c)
				b->str[b->nstr++] = (struct piece){ .off = b->tx.span[doc].off,
				                                    .len = b->tx.span[doc].len, .text = 1,
				                                    .maxchar = b->tx.span[doc].maxchar };
			doc++;
		}
	}
	return 0;
}

/* The next triples of the shard, as many as b holds. */
static int draw(SamplerObject *self, batch *b)
{
	int r = 1;
	while (b->got < b->n && (r = dx_sampler_next(self->s, &b->t[b->got], &b->err)) == 1)
		b->got++;
	if (r < 0)
		return b->rc = r;
	b->done = r == 0;
	return fill(self, b);
}

/* Triples number[0..b->n), in that order. */
static int draw_at(SamplerObject *self, batch *b, const uint64_t *number)
{
	for (; b->got < b->n; b->got++) {
		int r = dx_sampler_at(self->s, number[b->got], &b->t[b->got], &b->err);
		if (r < 0)
			return b->rc = r;
	}
	return fill(self, b);
}

static PyObject *str_at(const batch *b, size_t j)
{
	const struct piece *p = &b->str[j];
	const char *base = p->text ? b->tx.buf : b->buf;
	/* An empty string may come from a buffer never allocated. */
	const char *s = p->len ? base + p->off : "";
	return p->maxchar ? dx_py_str(s, p->len, p->maxchar) : text_object(s, p->len, 0);
}

/* The tuple (n, epoch, qid, query, pos_id, pos, neg_ids, negs) of triple i. */
static PyObject *triple_tuple(const SamplerObject *self, const batch *b, size_t i)
{
	size_t j = i * per_triple(self);
	const dx_triple *t = &b->t[i];
	int texts = self->c != NULL;
	PyObject *ids = PyList_New(t->nneg), *negs = texts ? PyList_New(t->nneg) : Py_None;
	if (!texts)
		Py_INCREF(Py_None);
	PyObject *qid = str_at(b, j), *query = str_at(b, j + 1);
	PyObject *pid = str_at(b, j + 2), *ptext = texts ? str_at(b, j + 3) : (Py_INCREF(Py_None), Py_None);
	PyObject *r = NULL;
	if (!ids || !negs || !qid || !query || !pid || !ptext)
		goto out;
	size_t step = texts ? 2 : 1;
	for (unsigned d = 0; d < t->nneg; d++) {
		size_t at = j + 2 + step * (d + 1);
		PyObject *id = str_at(b, at);
		if (!id)
			goto out;
		PyList_SET_ITEM(ids, d, id);
		if (texts) {
			PyObject *tx = str_at(b, at + 1);
			if (!tx)
				goto out;
			PyList_SET_ITEM(negs, d, tx);
		}
	}
	r = Py_BuildValue("(KKOOOOOO)", (unsigned long long)t->n, (unsigned long long)t->epoch, qid,
	                  query, pid, ptext, ids, negs);
out:
	Py_XDECREF(ids);
	Py_XDECREF(negs);
	Py_XDECREF(qid);
	Py_XDECREF(query);
	Py_XDECREF(pid);
	Py_XDECREF(ptext);
	return r;
}

static void batch_free(batch *b)
{
	free(b->t);
	free(b->neg);
	free(b->pos);
	free(b->buf);
	free(b->str);
	dx_py_texts_free(&b->tx);
}

/* Room in b for n triples: 0, or -1 with MemoryError. */
static int batch_alloc(const SamplerObject *self, batch *b, size_t n)
{
	*b = (batch){ .n = n, .tx.plain = self->plain, .tx.decode = 1 };
	size_t per = 1 + self->k, m = n ? n : 1;
	b->t = calloc(m, sizeof *b->t);
	b->neg = calloc(m * self->k, sizeof *b->neg);
	b->pos = malloc(m * per * sizeof *b->pos);
	b->str = malloc(m * per_triple(self) * sizeof *b->str);
	if (!b->t || !b->neg || !b->pos || !b->str) {
		batch_free(b);
		PyErr_NoMemory();
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		b->t[i].neg = b->neg + i * self->k;
	return 0;
}

/* The sampler's lock, with the sampler open: 0, or -1 with ValueError. */
static int sampler_enter(SamplerObject *self)
{
	dx_py_lock(self->lock);
	if (self->s)
		return 0;
	dx_py_unlock(self->lock);
	PyErr_SetString(PyExc_ValueError, "I/O operation on a closed docdex.Sampler");
	return -1;
}

/* The list of b's triples as tuples; frees b. */
static PyObject *batch_list(SamplerObject *self, batch *b)
{
	if (b->rc < 0) {
		dx_py_raise(&b->err);
		batch_free(b);
		return NULL;
	}
	PyObject *list = PyList_New((Py_ssize_t)b->got);
	for (size_t i = 0; list && i < b->got; i++) {
		PyObject *t = triple_tuple(self, b, i);
		if (!t) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, t);
	}
	batch_free(b);
	return list;
}

/* next_batch(n) -> list of up to n tuples; empty at the end. */
static PyObject *sampler_next_batch(SamplerObject *self, PyObject *arg)
{
	Py_ssize_t want = PyLong_AsSsize_t(arg);
	if (want < 0) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_ValueError, "a batch holds at least one triple");
		return NULL;
	}
	if (want == 0)
		want = 1;
	batch b;
	if (batch_alloc(self, &b, (size_t)want) < 0)
		return NULL;
	if (sampler_enter(self) < 0) {
		batch_free(&b);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	draw(self, &b);
	Py_END_ALLOW_THREADS
	dx_py_unlock(self->lock);
	return batch_list(self, &b);
}

/* at(ns) -> list of the tuples of triples ns (global numbers), in order. */
static PyObject *sampler_at(SamplerObject *self, PyObject *arg)
{
	PyObject *seq = PySequence_Fast(arg, "at takes a sequence of triple numbers");
	if (!seq)
		return NULL;
	size_t n = (size_t)PySequence_Fast_GET_SIZE(seq);
	uint64_t *number = malloc((n ? n : 1) * sizeof *number);
	PyObject *list = NULL;
	batch b;
	if (!number) {
		PyErr_NoMemory();
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		PyObject *v = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i));
		if (!v)
			goto out;
		int over = 0;
		long long x = PyLong_AsLongLongAndOverflow(v, &over);
		if (x == -1 && PyErr_Occurred()) {
			Py_DECREF(v);
			goto out;
		}
		if (over || x < 0)
			PyErr_Format(PyExc_IndexError, "triple number %R out of range", v);
		number[i] = (uint64_t)x;
		Py_DECREF(v);
		if (PyErr_Occurred())
			goto out;
	}
	if (batch_alloc(self, &b, n) < 0)
		goto out;
	if (sampler_enter(self) < 0) {
		batch_free(&b);
		goto out;
	}
	/* A triples file is read in order: the library says so, for any n. */
	uint64_t total = dx_sampler_report(self->s)->total;
	for (size_t i = 0; !self->triples && i < n; i++)
		if (number[i] >= total) {
			dx_py_unlock(self->lock);
			batch_free(&b);
			PyErr_Format(PyExc_IndexError, "triple number %llu out of range (%llu triples)",
			             (unsigned long long)number[i], (unsigned long long)total);
			goto out;
		}
	Py_BEGIN_ALLOW_THREADS
	draw_at(self, &b, number);
	Py_END_ALLOW_THREADS
	dx_py_unlock(self->lock);
	list = batch_list(self, &b);
out:
	free(number);
	Py_DECREF(seq);
	return list;
}

static PyObject *sampler_report(SamplerObject *self, PyObject *unused)
{
	(void)unused;
	if (sampler_enter(self) < 0)
		return NULL;
	dx_sample_report r = *dx_sampler_report(self->s);
	dx_py_unlock(self->lock);
	static const char *const kinds[DX_SP_KINDS] = {
		[DX_SP_NO_TEXT] = "no_text", [DX_SP_UNKNOWN_ID] = "unknown_id",
		[DX_SP_BAD_LINE] = "bad_line", [DX_SP_DUP_QUERY] = "dup_query",
		[DX_SP_RUN_MISSING] = "run_missing",
	};
	PyObject *problems = PyDict_New();
	for (int k = 0; problems && k < DX_SP_KINDS; k++) {
		PyObject *v = PyLong_FromUnsignedLongLong(r.problems[k]);
		if (!v || PyDict_SetItemString(problems, kinds[k], v) < 0) {
			Py_XDECREF(v);
			Py_CLEAR(problems);
			break;
		}
		Py_DECREF(v);
	}
	if (!problems)
		return NULL;
	return Py_BuildValue("{sKsKsKsKsKsKsKsKsN}", "queries", (unsigned long long)r.queries,
	                     "positives", (unsigned long long)r.positives, "pairs",
	                     (unsigned long long)r.pairs, "no_negative",
	                     (unsigned long long)r.no_negative, "run_entries",
	                     (unsigned long long)r.run_entries, "total", (unsigned long long)r.total,
	                     "shard", (unsigned long long)r.shard, "per_epoch",
	                     (unsigned long long)r.per_epoch, "problems", problems);
}

static void sampler_free_handles(SamplerObject *self)
{
	dx_sampler_close(self->s);
	self->s = NULL;
	dx_fields_free(self->fields);
	self->fields = NULL;
	dx_corpus_close(self->c);
	self->c = NULL;
	for (int i = 0; i < 5; i++)
		Py_CLEAR(self->paths[i]);
}

static PyObject *sampler_close(SamplerObject *self, PyObject *unused)
{
	(void)unused;
	dx_py_lock(self->lock);
	sampler_free_handles(self);
	dx_py_unlock(self->lock);
	Py_RETURN_NONE;
}

/* A path argument as bytes (fs encoding), or NULL for None, into *out. */
static int opt_path(PyObject *o, PyObject **out)
{
	*out = NULL;
	if (o == Py_None)
		return 0;
	PyObject *p = PyOS_FSPath(o);
	if (!p)
		return -1;
	int ok = PyUnicode_FSConverter(p, out);
	Py_DECREF(p);
	return ok ? 0 : -1;
}

static int sampler_init(SamplerObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "corpus", "queries", "qrels", "run", "triples", "field",
	                          "min_rel", "depth", "depth_from", "exclude_judged", "random",
	                          "run_ratio", "negatives", "seed", "count", "epochs", "rank",
	                          "world_size", "strict", "pairs", "start", "drop_last",
	                          "margin_kind", "margin", "weights", "access", NULL };
	PyObject *po[5] = { Py_None, Py_None, Py_None, Py_None, Py_None }, *pb[5] = { 0 };
	const char *field = NULL;
	dx_sample_opts o;
	dx_sample_opts_init(&o);
	unsigned long long seed = 0, count = 0, epochs = 0, rank = 0, world = 1, start = 0;
	unsigned depth = 0, depth_from = 0, negatives = 1;
	const char *how = "auto";
	int access;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOOOzdIIppdIKKKKKpiKpidis:_Sampler", kwlist,
	                                 &po[0], &po[1], &po[2], &po[3], &po[4], &field,
	                                 &o.min_rel, &depth, &depth_from, &o.exclude_judged,
	                                 &o.random, &o.run_ratio, &negatives, &seed, &count, &epochs,
	                                 &rank, &world, &o.strict, &o.pairs, &start, &o.drop_last,
	                                 &o.margin_kind, &o.margin, &o.weights, &how))
		return -1;
	if ((access = dx_py_access(how)) < 0)
		return -1;
	if (self->s || self->lock == NULL) {
		PyErr_SetString(PyExc_RuntimeError, "docdex._Sampler is already open");
		return -1;
	}
	if (negatives < 1 || negatives > 1024) {
		PyErr_SetString(PyExc_ValueError, "negatives is 1 to 1024");
		return -1;
	}
	for (int i = 0; i < 5; i++)
		if (opt_path(po[i], &pb[i]) < 0)
			goto fail;
	o.queries = pb[1] ? PyBytes_AS_STRING(pb[1]) : NULL;
	o.qrels = pb[2] ? PyBytes_AS_STRING(pb[2]) : NULL;
	o.run = pb[3] ? PyBytes_AS_STRING(pb[3]) : NULL;
	o.triples = pb[4] ? PyBytes_AS_STRING(pb[4]) : NULL;
	o.depth = depth;
	o.depth_from = depth_from;
	o.negatives = negatives;
	o.seed = seed;
	o.count = count;
	o.epochs = epochs;
	o.rank = rank;
	o.world_size = world;
	o.start = start;
	dx_err err = { 0 };
	dx_corpus *c = NULL;
	dx_fields *f = NULL;
	dx_sampler *s = NULL;
	const char *cpath = pb[0] ? PyBytes_AS_STRING(pb[0]) : NULL;
	/* Reads every input whole: no GIL. */
	Py_BEGIN_ALLOW_THREADS
	if (!cpath || ((c = dx_corpus_open(cpath, &err)) && dx_corpus_set_access(c, access, &err) == 0 &&
	               (f = dx_fields_parse(c, field, &err))))
		s = dx_sampler_open(c, &o, &err);
	Py_END_ALLOW_THREADS
	if (!s) {
		dx_fields_free(f);
		dx_corpus_close(c);
		dx_py_raise(&err);
		goto fail;
	}
	self->c = c;
	self->fields = f;
	self->s = s;
	self->k = negatives;
	self->triples = o.triples != NULL;
	self->plain = c ? dx_py_corpus_plain(c) : 0;
	for (int i = 0; i < 5; i++)
		self->paths[i] = pb[i];
	return 0;
fail:
	for (int i = 0; i < 5; i++)
		Py_XDECREF(pb[i]);
	return -1;
}

static PyObject *sampler_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	(void)args;
	(void)kw;
	SamplerObject *self = (SamplerObject *)type->tp_alloc(type, 0);
	if (!self)
		return NULL;
	if (!(self->lock = dx_py_lock_new())) {
		Py_DECREF(self);
		return PyErr_NoMemory();
	}
	return (PyObject *)self;
}

static void sampler_dealloc(SamplerObject *self)
{
	sampler_free_handles(self);
	if (self->lock)
		dx_py_lock_free(self->lock);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef sampler_methods[] = {
	{ "next_batch", (PyCFunction)sampler_next_batch, METH_O,
	  "next_batch(n) -> list of up to n tuples (n, epoch, qid, query, pos_id, pos,\n"
	  "neg_ids, negs), the texts None without a corpus; [] at the end." },
	{ "at", (PyCFunction)sampler_at, METH_O,
	  "at(ns) -> list of the tuples of triples ns (their numbers n in the\n"
	  "unsharded sequence), in the order given, as next_batch makes them." },
	{ "report", (PyCFunction)sampler_report, METH_NOARGS, "report() -> dict" },
	{ "close", (PyCFunction)sampler_close, METH_NOARGS, "close() -> None" },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject SamplerType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "docdex._docdex._Sampler",
	.tp_basicsize = sizeof(SamplerObject),
	.tp_dealloc = (destructor)sampler_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The C half of docdex.Sampler: use docdex.Sampler.",
	.tp_methods = sampler_methods,
	.tp_init = (initproc)sampler_init,
	.tp_new = sampler_new,
};

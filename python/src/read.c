/* read.c: the reading methods of docdex.Corpus.  A call takes the
 * corpus's lock; without the GIL (but for one document in memory) it finds
 * the ids and reads the texts into the corpus's buffer (texts.c); with the
 * GIL back, still under the lock, it makes them into objects. */
#include <stdlib.h>
#include <string.h>

#include "pydocdex.h"

/* One call: n documents by id (id != NULL) or by position (want). */
typedef struct req {
	size_t n;
	PyObject *const *obj;   /* the ids as given, for KeyError; or NULL: */
	const char *was_bytes;  /* whether each was bytes, for an equal one */
	const char **id;
	size_t *idlen;
	const Py_ssize_t *want; /* positions asked, negative from the end */
	uint64_t *pos;          /* room for n */
	int kind;               /* DX_PY_*: what a document is made into */
	int positions_only;     /* found, not read: out gets their positions */
	PyObject **out;         /* room for n new references */
} req;

/* Position i of a corpus of n records, negative from the end: 0, or -1
 * with IndexError. */
static int position(Py_ssize_t i, uint64_t n, uint64_t *pos)
{
	if (i < 0 && (uint64_t)-(i + 1) < n)
		*pos = n - (uint64_t)-(i + 1) - 1;
	else if (i >= 0 && (uint64_t)i < n)
		*pos = (uint64_t)i;
	else {
		PyErr_Format(PyExc_IndexError, "docdex.Corpus position %zd out of range (%llu records)",
		             i, (unsigned long long)n);
		return -1;
	}
	return 0;
}

/* The KeyError of an id copied by many_ids, whose object may be gone: an
 * equal one, bytes or str as it was given (id_ref's encoding undone). */
static void missing_id(const char *s, size_t n, int was_bytes)
{
	PyObject *id = text_object(s, n, was_bytes);
	if (id) {
		PyErr_SetObject(PyExc_KeyError, id);
		Py_DECREF(id);
	}
}

/* Fills q->out: 0, or -1 with an exception (KeyError for an id that no
 * record has, IndexError for a position out of range). */
static int read_docs(CorpusObject *self, req *q)
{
	if (corpus_enter(self) < 0)
		return -1;
	dx_corpus *c = self->c;
	if (!q->id) {
		uint64_t count = dx_corpus_count(c);
		for (size_t i = 0; i < q->n; i++)
			if (position(q->want[i], count, &q->pos[i]) < 0) {
				dx_py_unlock(self->lock);
				return -1;
			}
	}
	/* Only its code set: the library fills the rest when it fails, and
	 * zeroing all of its 1,288 bytes was 3% of a one-document read. */
	dx_err err;
	err.code = 0;
	int rc = 0;
	size_t missing = q->n, made = 0;
	/* One document of a plain corpus in memory is read with the GIL held:
	 * letting it go and taking it back was a tenth of such a read (c[pos]
	 * on a 1 GiB corpus in the page cache: 0.82 against 0.90 us a
	 * document).  Batches, compressed records and reads that may wait on
	 * the disk let it go. */
	PyThreadState *released = NULL;
	if (q->n > 1 || !self->tx.plain || !dx_corpus_in_memory(c))
		released = PyEval_SaveThread();
	if (q->id && (rc = dx_corpus_find_many(c, q->id, q->idlen, q->n, q->pos, &err)) == 0)
		for (size_t i = 0; i < q->n && missing == q->n; i++)
			if (q->pos[i] == DX_NOT_FOUND)
				missing = i;
	self->tx.keep_mapped = q->kind == DX_PY_VIEW;
	self->tx.decode = q->kind == DX_PY_STR;
	if (rc == 0 && missing == q->n && !q->positions_only)
		rc = dx_py_texts_read(&self->tx, c, self->fields, q->pos, q->n, &err);
	if (released)
		PyEval_RestoreThread(released);
	/* Strings, bytes or ints only (for a view, its base: see below), made
	 * under the lock: no garbage collection, so no finalizer that could
	 * call back into this corpus. */
	for (; rc == 0 && missing == q->n && made < q->n; made++)
		if (!(q->out[made] = q->positions_only ? PyLong_FromUnsignedLongLong(q->pos[made])
		                                       : dx_py_text_object(&self->tx, made, q->kind, self)))
			break;
	dx_py_texts_trim(&self->tx);
	if (rc < 0)
		corpus_failed(self, &err);
	dx_py_unlock(self->lock);
	/* Views are made out of their bases only now: a memoryview is an object
	 * the collector tracks, whose allocation may run it.  The bases in the
	 * mapping already keep it from a close in another thread meanwhile. */
	if (made == q->n) {
		if (q->kind != DX_PY_VIEW || q->positions_only || dx_py_views(q->out, q->n) == 0)
			return 0;
		rc = 0; /* out of memory, raised: the bases and views go below */
	}
	for (size_t i = 0; i < made; i++)
		Py_CLEAR(q->out[i]);
	if (rc < 0)
		dx_py_raise(&err);
	else if (missing < q->n && q->obj)
		PyErr_SetObject(PyExc_KeyError, q->obj[missing]);
	else if (missing < q->n)
		missing_id(q->id[missing], q->idlen[missing], q->was_bytes[missing]);
	return -1;
}

/* The kind of the corpus's documents by default. */
static int default_kind(const CorpusObject *self)
{
	return self->as_view ? DX_PY_VIEW : self->as_bytes ? DX_PY_BYTES : DX_PY_STR;
}

/* The kind a call's bytes= and view= ask for (None: not given): view=True
 * a memoryview; else bytes= as given; else the corpus's default (which
 * view=False leaves as bytes or str).  A DX_PY_* kind, or -1. */
static int want_kind(const CorpusObject *self, PyObject *b, PyObject *v)
{
	int view = v == Py_None ? -2 : PyObject_IsTrue(v);
	int bytes = b == Py_None ? -2 : PyObject_IsTrue(b);
	if (view == -1 || bytes == -1)
		return -1;
	if (view == 1)
		return DX_PY_VIEW;
	if (bytes >= 0)
		return bytes ? DX_PY_BYTES : DX_PY_STR;
	if (view == 0)
		return self->as_bytes ? DX_PY_BYTES : DX_PY_STR;
	return default_kind(self);
}

/*
 * The arguments of get, get_many and get_many_positions (METH_FASTCALL:
 * no tuple nor dict made for a call): the one argument, positional or by
 * name, and bytes= and view= by name as the kind they ask for.  0, or -1
 * with TypeError.
 */
static int parse(CorpusObject *self, const char *fn, const char *name, PyObject *const *args,
                 Py_ssize_t nargs, PyObject *kwnames, PyObject **arg, int *kind)
{
	PyObject *b = Py_None, *v = Py_None;
	*arg = nargs >= 1 ? args[0] : NULL;
	if (nargs > 1) {
		PyErr_Format(PyExc_TypeError, "%s() takes exactly one positional argument (%zd given)",
		             fn, nargs);
		return -1;
	}
	Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
	for (Py_ssize_t k = 0; k < nk; k++) {
		PyObject *key = PyTuple_GET_ITEM(kwnames, k);
		if (PyUnicode_CompareWithASCIIString(key, "bytes") == 0) {
			b = args[nargs + k];
		} else if (PyUnicode_CompareWithASCIIString(key, "view") == 0) {
			v = args[nargs + k];
		} else if (PyUnicode_CompareWithASCIIString(key, name) == 0 && !*arg) {
			*arg = args[nargs + k];
		} else {
			PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fn, key);
			return -1;
		}
	}
	if (!*arg) {
		PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos 1)", fn, name);
		return -1;
	}
	*kind = want_kind(self, b, v);
	return *kind < 0 ? -1 : 0;
}

/* The bytes of id o (str or bytes): borrowed from o where they are its
 * own (bytes, an ASCII str), else encoded into *hold.  0, or -1. */
static inline int id_ref(PyObject *o, const char **s, size_t *n, PyObject **hold)
{
	*hold = NULL;
	if (PyUnicode_Check(o) && PyUnicode_IS_COMPACT_ASCII(o)) {
		*s = PyUnicode_DATA(o);
		*n = (size_t)PyUnicode_GET_LENGTH(o);
		return 0;
	}
	if (PyBytes_Check(o)) {
		*s = PyBytes_AS_STRING(o);
		*n = (size_t)PyBytes_GET_SIZE(o);
		return 0;
	}
	if (!(*hold = id_bytes(o)))
		return -1;
	*s = PyBytes_AS_STRING(*hold);
	*n = (size_t)PyBytes_GET_SIZE(*hold);
	return 0;
}

/* get(id) and position(id). */
static PyObject *one_id(CorpusObject *self, PyObject *id, int kind, int positions_only)
{
	PyObject *hold, *t = NULL;
	const char *s;
	size_t n;
	uint64_t pos;
	if (id_ref(id, &s, &n, &hold) < 0)
		return NULL;
	req q = { .n = 1, .obj = &id, .id = &s, .idlen = &n, .pos = &pos, .kind = kind,
	          .positions_only = positions_only, .out = &t };
	read_docs(self, &q);
	Py_XDECREF(hold);
	return t;
}

PyObject *corpus_get(CorpusObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
	PyObject *id;
	int kind;
	if (parse(self, "get", "id", args, nargs, kwnames, &id, &kind) < 0)
		return NULL;
	return one_id(self, id, kind, 0);
}

PyObject *corpus_position(CorpusObject *self, PyObject *id)
{
	return one_id(self, id, 0, 1);
}

/* A list of n documents, filled by q (its out set here). */
static PyObject *read_list(CorpusObject *self, req *q)
{
	PyObject *list = PyList_New((Py_ssize_t)q->n);
	if (!list)
		return NULL;
	q->out = PySequence_Fast_ITEMS(list);
	if (read_docs(self, q) < 0)
		Py_CLEAR(list);
	return list;
}

/* How many ids ahead of the one it reads many_ids asks for an id object. */
enum { ID_AHEAD = 8 };

/* get_many(ids) and positions(ids) (named fn). */
static PyObject *many_ids(CorpusObject *self, const char *fn, PyObject *seq, int kind,
                          int positions_only)
{
	if (PyUnicode_Check(seq) || PyBytes_Check(seq)) {
		PyErr_Format(PyExc_TypeError, "%s takes a sequence of ids, not one id", fn);
		return NULL;
	}
	if (!Py_TYPE(seq)->tp_iter && !PySequence_Check(seq)) {
		PyErr_Format(PyExc_TypeError, "%s takes a sequence of ids, not %.100s", fn,
		             Py_TYPE(seq)->tp_name);
		return NULL;
	}
	PyObject *ids = PySequence_Fast(seq, "not a sequence of ids");
	if (!ids)
		return NULL;
	/*
	 * The ids' bytes are copied into one buffer while the GIL is held, so
	 * that no id object need stay alive while it is let go, whatever other
	 * threads do to seq.  The id objects of a batch drawn at random lie
	 * anywhere in the heap: each is asked for ID_AHEAD ids before it is
	 * read, so that their misses overlap.  get_many of lists of 1,024
	 * random ids of the 1 GiB generated passages read 2.32-2.37 M/s so,
	 * 2.17-2.24 M/s with a tuple holding them and none asked for ahead
	 * (medians of three runs each, in turn); copying alone gained nothing.
	 */
	size_t n = (size_t)PySequence_Fast_GET_SIZE(ids), m = n ? n : 1;
	PyObject **item = PySequence_Fast_ITEMS(ids);
	char *bytes = NULL, *was_bytes = malloc(m);
	size_t used = 0, cap = 0;
	req q = { .n = n, .was_bytes = was_bytes, .kind = kind, .positions_only = positions_only };
	q.id = malloc(m * sizeof *q.id);
	q.idlen = malloc(m * sizeof *q.idlen);
	q.pos = malloc(m * sizeof *q.pos);
	PyObject *list = NULL;
	if (!was_bytes || !q.id || !q.idlen || !q.pos) {
		PyErr_NoMemory();
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (i + ID_AHEAD < n)
			__builtin_prefetch(item[i + ID_AHEAD]);
		PyObject *hold;
		const char *s;
		if (id_ref(item[i], &s, &q.idlen[i], &hold) < 0)
			goto out;
		if (cap - used < q.idlen[i] && dx_py_grow(&bytes, &cap, used, q.idlen[i]) < 0) {
			Py_XDECREF(hold);
			PyErr_NoMemory();
			goto out;
		}
		if (q.idlen[i])
			memcpy(bytes + used, s, q.idlen[i]);
		used += q.idlen[i];
		was_bytes[i] = PyBytes_Check(item[i]) != 0;
		Py_XDECREF(hold);
	}
	/* Pointed at once the buffer has stopped moving ("" for none). */
	for (size_t i = 0, at = 0; i < n; at += q.idlen[i++])
		q.id[i] = bytes ? bytes + at : "";
	Py_CLEAR(ids);
	list = read_list(self, &q);
out:
	Py_XDECREF(ids);
	free(bytes);
	free(was_bytes);
	free(q.id);
	free(q.idlen);
	free(q.pos);
	return list;
}

PyObject *corpus_get_many(CorpusObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
	PyObject *seq;
	int kind;
	if (parse(self, "get_many", "ids", args, nargs, kwnames, &seq, &kind) < 0)
		return NULL;
	return many_ids(self, "get_many", seq, kind, 0);
}

PyObject *corpus_positions(CorpusObject *self, PyObject *ids)
{
	return many_ids(self, "positions", ids, 0, 1);
}

PyObject *corpus_get_many_positions(CorpusObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
	PyObject *seq;
	int kind;
	if (parse(self, "get_many_positions", "positions", args, nargs, kwnames, &seq, &kind) < 0)
		return NULL;
	PyObject *t = PySequence_Fast(seq, "get_many_positions takes a sequence of positions");
	if (!t)
		return NULL;
	size_t n = (size_t)PySequence_Fast_GET_SIZE(t), m = n ? n : 1;
	Py_ssize_t *want = malloc(m * sizeof *want);
	req q = { .n = n, .want = want, .pos = malloc(m * sizeof *q.pos), .kind = kind };
	PyObject *list = NULL;
	if (!want || !q.pos) {
		PyErr_NoMemory();
		goto out;
	}
	/* Read before the lock: __index__ of a position is Python code. */
	for (size_t i = 0; i < n; i++) {
		want[i] = PyNumber_AsSsize_t(PySequence_Fast_GET_ITEM(t, (Py_ssize_t)i), PyExc_IndexError);
		if (want[i] == -1 && PyErr_Occurred())
			goto out;
	}
	list = read_list(self, &q);
out:
	Py_DECREF(t);
	free(want);
	free(q.pos);
	return list;
}

/* The record at position i, negative from the end. */
static PyObject *item(CorpusObject *self, Py_ssize_t i)
{
	uint64_t pos;
	PyObject *t = NULL;
	req q = { .n = 1, .want = &i, .pos = &pos, .kind = default_kind(self), .out = &t };
	read_docs(self, &q);
	return t;
}

PyObject *corpus_item(CorpusObject *self, Py_ssize_t i)
{
	/* The sequence protocol has added len(c) to a negative i already: one
	 * still negative was before the first record. */
	if (i < 0) {
		PyErr_Format(PyExc_IndexError, "docdex.Corpus position out of range");
		return NULL;
	}
	return item(self, i);
}

/* Positions of a slice read this many at a time: a slice of the whole
 * corpus reads through a buffer of a run's texts, not of all of them. */
enum { SLICE_RUN = 1024 };

/* The records of a slice, as a list (a list's slice is one). */
static PyObject *slice_of(CorpusObject *self, PyObject *slice)
{
	Py_ssize_t start, stop, step, len;
	if (PySlice_Unpack(slice, &start, &stop, &step) < 0 || (len = corpus_len(self)) < 0)
		return NULL;
	size_t n = (size_t)PySlice_AdjustIndices(len, &start, &stop, step);
	PyObject *list = PyList_New((Py_ssize_t)n);
	if (!list)
		return NULL;
	Py_ssize_t want[SLICE_RUN];
	uint64_t pos[SLICE_RUN];
	for (size_t at = 0; at < n; at += SLICE_RUN) {
		size_t k = n - at < SLICE_RUN ? n - at : SLICE_RUN;
		for (size_t i = 0; i < k; i++)
			want[i] = start + (Py_ssize_t)(at + i) * step;
		req q = { .n = k, .want = want, .pos = pos, .kind = default_kind(self),
		          .out = PySequence_Fast_ITEMS(list) + at };
		if (read_docs(self, &q) < 0) {
			Py_DECREF(list);
			return NULL;
		}
	}
	return list;
}

PyObject *corpus_subscript(CorpusObject *self, PyObject *key)
{
	if (PySlice_Check(key))
		return slice_of(self, key);
	if (!PyIndex_Check(key)) {
		PyErr_Format(PyExc_TypeError, "docdex.Corpus positions must be integers or slices, not %.200s",
		             Py_TYPE(key)->tp_name);
		return NULL;
	}
	Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
	if (i == -1 && PyErr_Occurred())
		return NULL;
	return item(self, i);
}

int corpus_contains(CorpusObject *self, PyObject *id)
{
	/* What can be no record's id is not in the corpus, as `3 in d` is
	 * False for a dict of str keys. */
	if (!PyUnicode_Check(id) && !PyBytes_Check(id))
		return 0;
	PyObject *b = id_bytes(id);
	if (!b) {
		if (!PyErr_ExceptionMatches(PyExc_KeyError))
			return -1;
		PyErr_Clear();
		return 0;
	}
	if (corpus_enter(self) < 0) {
		Py_DECREF(b);
		return -1;
	}
	dx_err err = { 0 };
	uint64_t pos;
	int r;
	Py_BEGIN_ALLOW_THREADS
	r = dx_corpus_find(self->c, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b), &pos, &err);
	Py_END_ALLOW_THREADS
	if (r < 0)
		corpus_failed(self, &err);
	dx_py_unlock(self->lock);
	Py_DECREF(b);
	if (r < 0) {
		dx_py_raise(&err);
		return -1;
	}
	return r;
}

/* read.c: the reading methods of docdex.Corpus.  A call gathers what it
 * needs from Python objects, then, under the corpus's lock and without
 * the GIL, finds the ids and reads the texts (texts.c); the Python objects
 * are made after, with the GIL back. */
#include <stdlib.h>
#include <string.h>

#include "pydocdex.h"

typedef struct job {
	/* in: ids to find (id != NULL), or positions already in pos */
	const char **id;
	size_t *idlen;
	uint64_t *pos;
	size_t n;
	/* out */
	size_t missing;         /* the first id not found, or n */
	dx_py_texts tx;
	dx_err err;
	int rc;
} job;

/* Under the corpus's lock, without the GIL. */
static int run(CorpusObject *self, job *j)
{
	j->missing = j->n;
	for (size_t i = 0; j->id && i < j->n; i++) {
		int r = dx_corpus_find(self->c, j->id[i], j->idlen[i], &j->pos[i], &j->err);
		if (r < 0)
			return j->rc = r;
		if (r == 0) {
			j->missing = i;
			return 0;
		}
	}
	return j->rc = dx_py_texts_read(&j->tx, self->c, self->fields, j->pos, j->n, &j->err);
}

/* Runs j on self and returns the list of texts, or NULL with an exception
 * (KeyError naming ids[j->missing] when an id is not found). */
static PyObject *finish(CorpusObject *self, job *j, PyObject *ids, int as_bytes)
{
	PyObject *list = NULL;
	if (corpus_enter(self) < 0)
		goto out;
	Py_BEGIN_ALLOW_THREADS
	run(self, j);
	Py_END_ALLOW_THREADS
	if (j->rc < 0)
		corpus_failed(self, &j->err);
	PyThread_release_lock(self->lock);
	if (j->rc < 0) {
		dx_py_raise(&j->err);
		goto out;
	}
	if (j->missing < j->n) {
		PyErr_SetObject(PyExc_KeyError, PyTuple_GET_ITEM(ids, (Py_ssize_t)j->missing));
		goto out;
	}
	if (!(list = PyList_New((Py_ssize_t)j->n)))
		goto out;
	for (size_t i = 0; i < j->n; i++) {
		PyObject *t = dx_py_text_object(&j->tx, i, as_bytes);
		if (!t) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, t);
	}
out:
	dx_py_texts_free(&j->tx);
	return list;
}

static int want_bytes(CorpusObject *self, PyObject *b)
{
	return b == Py_None ? self->as_bytes : PyObject_IsTrue(b);
}

/* The list of texts for a tuple of ids (str or bytes). */
static PyObject *by_ids(CorpusObject *self, PyObject *ids, int as_bytes)
{
	size_t n = (size_t)PyTuple_GET_SIZE(ids);
	job j = { .n = n };
	PyObject *enc = PyTuple_New((Py_ssize_t)n), *list = NULL;
	j.id = malloc((n ? n : 1) * sizeof *j.id);
	j.idlen = malloc((n ? n : 1) * sizeof *j.idlen);
	j.pos = malloc((n ? n : 1) * sizeof *j.pos);
	if (!enc || !j.id || !j.idlen || !j.pos) {
		PyErr_NoMemory();
		goto out;
	}
	/* The encoded ids are held by enc, so their bytes stay put while the
	 * GIL is let go, whatever other threads do to the caller's list. */
	for (size_t i = 0; i < n; i++) {
		PyObject *b = id_bytes(PyTuple_GET_ITEM(ids, (Py_ssize_t)i));
		if (!b)
			goto out;
		PyTuple_SET_ITEM(enc, (Py_ssize_t)i, b);
		j.id[i] = PyBytes_AS_STRING(b);
		j.idlen[i] = (size_t)PyBytes_GET_SIZE(b);
	}
	list = finish(self, &j, ids, as_bytes);
out:
	Py_XDECREF(enc);
	free(j.id);
	free(j.idlen);
	free(j.pos);
	return list;
}

PyObject *corpus_get(CorpusObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "id", "bytes", NULL };
	PyObject *id, *b = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$O:get", kwlist, &id, &b))
		return NULL;
	int as_bytes = want_bytes(self, b);
	if (as_bytes < 0)
		return NULL;
	PyObject *ids = PyTuple_Pack(1, id);
	if (!ids)
		return NULL;
	PyObject *list = by_ids(self, ids, as_bytes), *t = NULL;
	Py_DECREF(ids);
	if (list) {
		t = PyList_GET_ITEM(list, 0);
		Py_INCREF(t);
		Py_DECREF(list);
	}
	return t;
}

PyObject *corpus_get_many(CorpusObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "ids", "bytes", NULL };
	PyObject *seq, *b = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$O:get_many", kwlist, &seq, &b))
		return NULL;
	int as_bytes = want_bytes(self, b);
	if (as_bytes < 0)
		return NULL;
	if (PyUnicode_Check(seq) || PyBytes_Check(seq)) {
		PyErr_SetString(PyExc_TypeError, "get_many takes a sequence of ids, not one id");
		return NULL;
	}
	PyObject *ids = PySequence_Tuple(seq);
	if (!ids)
		return NULL;
	PyObject *list = by_ids(self, ids, as_bytes);
	Py_DECREF(ids);
	return list;
}

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

static PyObject *by_positions(CorpusObject *self, PyObject *seq, int as_bytes)
{
	if (corpus_enter(self) < 0)
		return NULL;
	uint64_t count = dx_corpus_count(self->c);
	PyThread_release_lock(self->lock);
	PyObject *t = PySequence_Fast(seq, "get_many_positions takes a sequence of positions");
	if (!t)
		return NULL;
	size_t n = (size_t)PySequence_Fast_GET_SIZE(t);
	job j = { .n = n };
	PyObject *list = NULL;
	if (!(j.pos = malloc((n ? n : 1) * sizeof *j.pos))) {
		PyErr_NoMemory();
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		Py_ssize_t v = PyNumber_AsSsize_t(PySequence_Fast_GET_ITEM(t, (Py_ssize_t)i),
		                                  PyExc_IndexError);
		if ((v == -1 && PyErr_Occurred()) || position(v, count, &j.pos[i]) < 0)
			goto out;
	}
	list = finish(self, &j, NULL, as_bytes);
out:
	Py_DECREF(t);
	free(j.pos);
	return list;
}

PyObject *corpus_get_many_positions(CorpusObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "positions", "bytes", NULL };
	PyObject *seq, *b = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$O:get_many_positions", kwlist, &seq, &b))
		return NULL;
	int as_bytes = want_bytes(self, b);
	if (as_bytes < 0)
		return NULL;
	return by_positions(self, seq, as_bytes);
}

PyObject *corpus_item(CorpusObject *self, Py_ssize_t i)
{
	/* The sequence protocol has added len(c) to a negative i already: one
	 * still negative was before the first record. */
	if (i < 0) {
		PyErr_Format(PyExc_IndexError, "docdex.Corpus position out of range");
		return NULL;
	}
	PyObject *v = PyLong_FromSsize_t(i);
	if (!v)
		return NULL;
	PyObject *seq = PyTuple_Pack(1, v);
	Py_DECREF(v);
	if (!seq)
		return NULL;
	PyObject *list = by_positions(self, seq, self->as_bytes), *t = NULL;
	Py_DECREF(seq);
	if (list) {
		t = PyList_GET_ITEM(list, 0);
		Py_INCREF(t);
		Py_DECREF(list);
	}
	return t;
}

int corpus_contains(CorpusObject *self, PyObject *id)
{
	PyObject *b = id_bytes(id);
	if (!b)
		return -1;
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
	PyThread_release_lock(self->lock);
	Py_DECREF(b);
	if (r < 0) {
		dx_py_raise(&err);
		return -1;
	}
	return r;
}

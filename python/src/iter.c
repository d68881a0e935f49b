/* iter.c: the iterator of a corpus's ids, in corpus order or reversed
 * (reversed(c) mirrors iter(c), as reversed(dict) gives its keys). */
#include "pydocdex.h"

typedef struct {
	PyObject_HEAD
	CorpusObject *corpus;
	uint64_t done;  /* ids given so far */
	int reverse;    /* from the last record to the first */
	int as_bytes;
} IdIterObject;

static PyObject *new_iter(CorpusObject *self, int reverse)
{
	if (corpus_enter(self) < 0)
		return NULL;
	dx_py_unlock(self->lock);
	IdIterObject *it = PyObject_New(IdIterObject, &IdIterType);
	if (!it)
		return NULL;
	Py_INCREF(self);
	it->corpus = self;
	it->done = 0;
	it->reverse = reverse;
	it->as_bytes = self->as_bytes;
	return (PyObject *)it;
}

PyObject *corpus_ids(CorpusObject *self, PyObject *unused)
{
	(void)unused;
	return new_iter(self, 0);
}

PyObject *corpus_reversed(CorpusObject *self, PyObject *unused)
{
	(void)unused;
	return new_iter(self, 1);
}

PyObject *corpus_id(CorpusObject *self, PyObject *arg)
{
	Py_ssize_t i = PyNumber_AsSsize_t(arg, PyExc_IndexError);
	if (i == -1 && PyErr_Occurred())
		return NULL;
	if (corpus_enter(self) < 0)
		return NULL;
	uint64_t n = dx_corpus_count(self->c);
	if (i < 0)
		i += (Py_ssize_t)n;
	if (i < 0 || (uint64_t)i >= n) {
		dx_py_unlock(self->lock);
		PyErr_SetString(PyExc_IndexError, "docdex.Corpus position out of range");
		return NULL;
	}
	dx_err err; /* its code only: as in read.c */
	err.code = 0;
	const char *id;
	size_t len;
	PyObject *r = NULL;
	if (dx_corpus_id(self->c, (uint64_t)i, &id, &len, &err) < 0)
		corpus_failed(self, &err);
	else
		r = text_object(id, len, self->as_bytes);
	dx_py_unlock(self->lock);
	if (err.code)
		dx_py_raise(&err);
	return r;
}

static void iditer_dealloc(IdIterObject *it)
{
	Py_XDECREF(it->corpus);
	PyObject_Free(it);
}

static PyObject *iditer_next(IdIterObject *it)
{
	CorpusObject *self = it->corpus;
	if (corpus_enter(self) < 0)
		return NULL;
	uint64_t n = dx_corpus_count(self->c);
	if (it->done >= n) {
		dx_py_unlock(self->lock);
		return NULL; /* StopIteration */
	}
	uint64_t pos = it->reverse ? n - 1 - it->done : it->done;
	/* An id lookup is short: done with the GIL held, the id copied into
	 * its object before the lock (and with it the id's bytes) goes. */
	dx_err err; /* its code only: as in read.c */
	err.code = 0;
	const char *id;
	size_t len;
	PyObject *r = NULL;
	if (dx_corpus_id(self->c, pos, &id, &len, &err) < 0)
		corpus_failed(self, &err);
	else if ((r = text_object(id, len, it->as_bytes)))
		it->done++;
	dx_py_unlock(self->lock);
	if (err.code)
		dx_py_raise(&err);
	return r;
}

static PyObject *iditer_length_hint(IdIterObject *it, PyObject *unused)
{
	(void)unused;
	CorpusObject *self = it->corpus;
	uint64_t n = self->c ? dx_corpus_count(self->c) : 0;
	return PyLong_FromUnsignedLongLong(n > it->done ? n - it->done : 0);
}

static PyMethodDef iditer_methods[] = {
	{ "__length_hint__", (PyCFunction)iditer_length_hint, METH_NOARGS,
	  "The number of ids still to come." },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject IdIterType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "docdex._docdex.IdIterator",
	.tp_basicsize = sizeof(IdIterObject),
	.tp_dealloc = (destructor)iditer_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The ids of a docdex.Corpus in corpus order (Corpus.ids(), iter(corpus)),\n"
	          "or from the last to the first (reversed(corpus)).",
	.tp_iter = PyObject_SelfIter,
	.tp_iternext = (iternextfunc)iditer_next,
	.tp_methods = iditer_methods,
};

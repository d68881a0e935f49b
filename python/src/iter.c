/* iter.c: the iterator of a corpus's ids, in corpus order. */
#include "pydocdex.h"

typedef struct {
	PyObject_HEAD
	CorpusObject *corpus;
	uint64_t next;
	int as_bytes;
} IdIterObject;

PyObject *corpus_ids(CorpusObject *self, PyObject *unused)
{
	(void)unused;
	if (corpus_enter(self) < 0)
		return NULL;
	dx_py_unlock(self->lock);
	IdIterObject *it = PyObject_New(IdIterObject, &IdIterType);
	if (!it)
		return NULL;
	Py_INCREF(self);
	it->corpus = self;
	it->next = 0;
	it->as_bytes = self->as_bytes;
	return (PyObject *)it;
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
	if (it->next >= dx_corpus_count(self->c)) {
		dx_py_unlock(self->lock);
		return NULL; /* StopIteration */
	}
	/* An id lookup is short: done with the GIL held, the id copied into
	 * its object before the lock (and with it the id's bytes) goes. */
	dx_err err; /* its code only: as in read.c */
	err.code = 0;
	const char *id;
	size_t len;
	PyObject *r = NULL;
	if (dx_corpus_id(self->c, it->next, &id, &len, &err) < 0)
		corpus_failed(self, &err);
	else if ((r = text_object(id, len, it->as_bytes)))
		it->next++;
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
	return PyLong_FromUnsignedLongLong(n > it->next ? n - it->next : 0);
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
	.tp_doc = "The ids of a docdex.Corpus in corpus order (Corpus.ids(), iter(corpus)).",
	.tp_iter = PyObject_SelfIter,
	.tp_iternext = (iternextfunc)iditer_next,
	.tp_methods = iditer_methods,
};

/*
 * view.c: documents as memoryviews (view=True).  A record that lies as it
 * is in a plain file's mapping is handed out without a copy: a memoryview
 * of a small exporter object that points into the mapping and holds the
 * corpus.  While any such view is alive, closing the corpus ends the
 * handle for reads but keeps its library corpus, and with it the mapping,
 * until the last view is released (a view must never point into pages
 * that were unmapped).  Any other text (decompressed, read with pread, a
 * JSON string decoded) comes as a memoryview of a bytes copy.  The bases
 * are made under the corpus's lock, the memoryviews after it (read.c).
 */
#include "pydocdex.h"

typedef struct {
	PyObject_HEAD
	CorpusObject *owner;    /* a strong reference: keeps the mapping */
	const char *data;
	Py_ssize_t len;
} MappedObject;

static int mapped_getbuffer(MappedObject *self, Py_buffer *view, int flags)
{
	/* Read-only: the mapping is the corpus file itself. */
	return PyBuffer_FillInfo(view, (PyObject *)self, (void *)self->data, self->len, 1, flags);
}

static void mapped_dealloc(MappedObject *self)
{
	CorpusObject *owner = self->owner;
	if (--owner->views == 0 && owner->kept) {
		/* Closed while this was the last view: the mapping goes now. */
		dx_corpus_close(owner->kept);
		owner->kept = NULL;
	}
	Py_TYPE(self)->tp_free((PyObject *)self);
	Py_DECREF(owner);
}

static PyBufferProcs mapped_as_buffer = {
	.bf_getbuffer = (getbufferproc)mapped_getbuffer,
};

static PyTypeObject MappedType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "docdex._Mapped",
	.tp_basicsize = sizeof(MappedObject),
	.tp_dealloc = (destructor)mapped_dealloc,
	.tp_as_buffer = &mapped_as_buffer,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The bytes of a record in a corpus's mapping, for a memoryview of them.",
};

int dx_py_view_ready(void)
{
	return PyType_Ready(&MappedType);
}

PyObject *dx_py_mapped(CorpusObject *owner, const char *mapped, size_t len)
{
	MappedObject *m = PyObject_New(MappedObject, &MappedType);
	if (!m)
		return NULL;
	Py_INCREF(owner);
	m->owner = owner;
	m->data = mapped;
	m->len = (Py_ssize_t)len;
	owner->views++;
	return (PyObject *)m;
}

int dx_py_views(PyObject **out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		/* The memoryview holds its base; ours goes. */
		PyObject *v = PyMemoryView_FromObject(out[i]);
		if (!v)
			return -1;
		Py_SETREF(out[i], v);
	}
	return 0;
}

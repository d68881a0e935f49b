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

/*
 * A memoryview and its managed buffer are two objects the collector
 * tracks, for every document: a batch of 1,024 set off collections of the
 * young generations as it was made, and, as their survivors piled up,
 * collections of the whole heap, each walking every list the program
 * holds.  get_many(view=True) of random ids read 0.49 M documents/s beside
 * a list of 3 M ids, and 1.3-1.4 M/s made with the collector held off,
 * as fast as with gc.disable() (1 GiB corpus).  Nothing is lost: the
 * views and their bases can form no cycle (a base holds its corpus
 * alone), and the collector runs as it would at the next allocation.
 */
int dx_py_views(PyObject **out, size_t n)
{
#if PY_VERSION_HEX >= 0x030A0000
	int was = PyGC_Disable();
#endif
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		/* The memoryview holds its base; ours goes. */
		PyObject *v = PyMemoryView_FromObject(out[i]);
		if (v)
			Py_SETREF(out[i], v);
		else
			rc = -1;
	}
#if PY_VERSION_HEX >= 0x030A0000
	if (was)
		PyGC_Enable();
#endif
	return rc;
}

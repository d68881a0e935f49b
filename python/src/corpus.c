/* corpus.c: docdex.Corpus, opening, closing, pickling and locking. */
#include <stdlib.h>
#include <string.h>

#include "pydocdex.h"
#include "utf8.h"

pthread_mutex_t *dx_py_lock_new(void)
{
	pthread_mutex_t *m = malloc(sizeof *m);
	if (m && pthread_mutex_init(m, NULL) != 0) {
		free(m);
		m = NULL;
	}
	return m;
}

void dx_py_lock_free(pthread_mutex_t *lock)
{
	pthread_mutex_destroy(lock);
	free(lock);
}

void dx_py_lock(pthread_mutex_t *lock)
{
	if (pthread_mutex_trylock(lock) != 0) {
		Py_BEGIN_ALLOW_THREADS
		pthread_mutex_lock(lock);
		Py_END_ALLOW_THREADS
	}
}

void dx_py_unlock(pthread_mutex_t *lock)
{
	pthread_mutex_unlock(lock);
}

int corpus_enter(CorpusObject *self)
{
	dx_py_lock(self->lock);
	if (self->c)
		return 0;
	dx_py_unlock(self->lock);
	if (self->dead)
		dx_py_raise(self->dead); /* as it was raised the first time */
	else
		PyErr_SetString(PyExc_ValueError, "I/O operation on a closed docdex.Corpus");
	return -1;
}

/* Ends the handle: later calls find it closed.  A view into the mapping
 * still alive keeps the library corpus, and so the mapping, until the last
 * such view goes (view.c). */
static void corpus_end(CorpusObject *self)
{
	dx_fields_free(self->fields);
	self->fields = NULL;
	dx_py_texts_free(&self->tx);
	if (self->c && self->views > 0)
		self->kept = self->c;
	else
		dx_corpus_close(self->c);
	self->c = NULL;
}

void corpus_failed(CorpusObject *self, const dx_err *err)
{
	if (err->code != DX_ESTALE || self->dead)
		return;
	if ((self->dead = malloc(sizeof *self->dead)))
		*self->dead = *err;
	corpus_end(self);
}

int dx_py_access(const char *name)
{
	int a = dx_access_parse(name);
	if (a < 0)
		PyErr_Format(PyExc_ValueError, "access is 'auto', 'mmap' or 'pread', not '%s'", name);
	return a;
}

PyObject *text_object(const char *s, size_t n, int as_bytes)
{
	if (as_bytes)
		return PyBytes_FromStringAndSize(s, (Py_ssize_t)n);
	return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "surrogateescape");
}

PyObject *dx_py_str(const char *units, size_t n, uint32_t maxchar)
{
	PyObject *o = PyUnicode_New((Py_ssize_t)n, (Py_UCS4)maxchar);
	if (o && n)
		memcpy(PyUnicode_DATA(o), units, n * dx_py_utf8_width(maxchar));
	return o;
}

PyObject *id_bytes(PyObject *id)
{
	if (PyBytes_Check(id)) {
		Py_INCREF(id);
		return id;
	}
	if (PyUnicode_Check(id)) {
		PyObject *b = PyUnicode_AsEncodedString(id, "utf-8", "surrogateescape");
		if (!b && PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
			PyErr_Clear();
			PyErr_SetObject(PyExc_KeyError, id);
		}
		return b;
	}
	PyErr_Format(PyExc_TypeError, "a document id is str or bytes, not %.100s",
	             Py_TYPE(id)->tp_name);
	return NULL;
}

/* inflate_cache=, an O& converter: an integer of 0 to 2^64 - 1 bytes
 * (format "K" would take -1 as 2^64 - 1, and 2^64 as 0). */
static int cache_size(PyObject *o, void *out)
{
	PyObject *i = PyNumber_Index(o);
	if (!i)
		return 0;
	unsigned long long v = PyLong_AsUnsignedLongLong(i);
	Py_DECREF(i);
	if (v == (unsigned long long)-1 && PyErr_Occurred()) {
		if (!PyErr_ExceptionMatches(PyExc_OverflowError))
			return 0;
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "inflate_cache is a size in bytes, 0 to 2**64 - 1, not %R", o);
		return 0;
	}
	*(unsigned long long *)out = v;
	return 1;
}

static int corpus_init(CorpusObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path", "field", "bytes", "view", "access", "inflate_cache", NULL };
	PyObject *path = NULL, *field = Py_None, *fsbytes = NULL;
	const char *how = "auto";
	int as_bytes = 0, as_view = 0, access;
	unsigned long long cache = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$ppsO&:Corpus", kwlist, &path, &field, &as_bytes,
	                                 &as_view, &how, cache_size, &cache))
		return -1;
	if ((access = dx_py_access(how)) < 0)
		return -1;
	if (self->c || self->path) {
		PyErr_SetString(PyExc_RuntimeError, "docdex.Corpus is already open");
		return -1;
	}
	if (field != Py_None && !PyUnicode_Check(field)) {
		PyErr_SetString(PyExc_TypeError, "field is a str such as \"title,body\", or None");
		return -1;
	}
	PyObject *fspath = PyOS_FSPath(path);
	if (!fspath)
		return -1;
	if (!PyUnicode_FSConverter(fspath, &fsbytes)) {
		Py_DECREF(fspath);
		return -1;
	}
	const char *spec = NULL;
	if (field != Py_None && !(spec = PyUnicode_AsUTF8(field))) {
		Py_DECREF(fspath);
		Py_DECREF(fsbytes);
		return -1;
	}
	dx_err err = { 0 }, cache_err = { 0 };
	dx_corpus *c;
	dx_fields *f = NULL;
	const char *p = PyBytes_AS_STRING(fsbytes);
	int cache_rc = 0;
	/* Opening checks every source's fingerprint: reads, so no GIL. */
	Py_BEGIN_ALLOW_THREADS
	c = dx_corpus_open(p, &err);
	if (c && (dx_corpus_set_access(c, access, &err) < 0 || (spec && !(f = dx_fields_parse(c, spec, &err))))) {
		dx_corpus_close(c);
		c = NULL;
	}
	if (c && cache)
		cache_rc = dx_corpus_set_inflate_cache(c, cache, NULL, &cache_err);
	Py_END_ALLOW_THREADS
	/* As docdex get does: a size too small is an error, a cache that
	 * cannot be had a warning (the corpus reads without it). */
	if (c && cache_rc == DX_EINVAL) {
		dx_fields_free(f);
		dx_corpus_close(c);
		c = NULL;
		err = cache_err;
	} else if (c && cache_rc < 0) {
		char line[sizeof cache_err.what + sizeof cache_err.subject + 300];
		dx_describe(&cache_err, line, sizeof line);
		if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "%s; reading without it", line) < 0) {
			dx_fields_free(f);
			dx_corpus_close(c);
			Py_DECREF(fspath);
			Py_DECREF(fsbytes);
			return -1;
		}
	}
	Py_DECREF(fsbytes);
	if (!c) {
		Py_DECREF(fspath);
		dx_py_raise(&err);
		return -1;
	}
	self->c = c;
	self->fields = f;
	self->tx.plain = dx_py_corpus_plain(c);
	self->path = fspath;
	Py_INCREF(field);
	self->field = field;
	self->as_bytes = as_bytes;
	self->as_view = as_view;
	self->access = access;
	self->inflate_cache = cache;
	return 0;
}

static PyObject *corpus_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	(void)args;
	(void)kw;
	CorpusObject *self = (CorpusObject *)type->tp_alloc(type, 0);
	if (!self)
		return NULL;
	if (!(self->lock = dx_py_lock_new())) {
		Py_DECREF(self);
		return PyErr_NoMemory();
	}
	return (PyObject *)self;
}

static void corpus_dealloc(CorpusObject *self)
{
	/* No view is alive (each holds the corpus): nothing is kept. */
	corpus_end(self);
	if (self->lock)
		dx_py_lock_free(self->lock);
	Py_XDECREF(self->path);
	Py_XDECREF(self->field);
	free(self->dead);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *corpus_close(CorpusObject *self, PyObject *unused)
{
	(void)unused;
	/* Waits for a read in another thread to end. */
	dx_py_lock(self->lock);
	corpus_end(self);
	dx_py_unlock(self->lock);
	Py_RETURN_NONE;
}

static PyObject *corpus_enter_ctx(CorpusObject *self, PyObject *unused)
{
	(void)unused;
	if (!self->c && corpus_enter(self) < 0)
		return NULL;
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *corpus_exit_ctx(CorpusObject *self, PyObject *args)
{
	(void)args;
	return corpus_close(self, NULL);
}

/* Pickled as the arguments that open it again: each process that unpickles
 * one (a DataLoader worker, forked or spawned) gets a handle of its own. */
static PyObject *corpus_reduce(CorpusObject *self, PyObject *unused)
{
	(void)unused;
	if (!self->path) {
		PyErr_SetString(PyExc_ValueError, "docdex.Corpus was never opened");
		return NULL;
	}
	PyObject *args = Py_BuildValue("(OO)", self->path, self->field);
	PyObject *kw = Py_BuildValue("{s:O,s:O,s:s,s:K}", "bytes", self->as_bytes ? Py_True : Py_False,
	                             "view", self->as_view ? Py_True : Py_False, "access",
	                             dx_access_name(self->access), "inflate_cache", self->inflate_cache);
	PyObject *r = NULL;
	/* copyreg.__newobj_ex__ is not needed: functools.partial carries the
	 * keyword argument, and pickles by reference. */
	PyObject *functools = PyImport_ImportModule("functools");
	if (args && kw && functools) {
		PyObject *partial = PyObject_GetAttrString(functools, "partial");
		if (partial) {
			PyObject *pargs = Py_BuildValue("(O)", (PyObject *)Py_TYPE(self));
			PyObject *fn = pargs ? PyObject_Call(partial, pargs, kw) : NULL;
			if (fn)
				r = Py_BuildValue("(OO)", fn, args);
			Py_XDECREF(fn);
			Py_XDECREF(pargs);
			Py_DECREF(partial);
		}
	}
	Py_XDECREF(functools);
	Py_XDECREF(args);
	Py_XDECREF(kw);
	return r;
}

Py_ssize_t corpus_len(CorpusObject *self)
{
	if (corpus_enter(self) < 0)
		return -1;
	uint64_t n = dx_corpus_count(self->c);
	dx_py_unlock(self->lock);
	return (Py_ssize_t)n;
}

static PyObject *corpus_repr(CorpusObject *self)
{
	if (!self->path)
		return PyUnicode_FromString("<docdex.Corpus (not open)>");
	return PyUnicode_FromFormat("<docdex.Corpus %R%s%s%s>", self->path,
	                            self->c ? "" : " (closed)", self->as_bytes ? " bytes" : "",
	                            self->as_view ? " view" : "");
}

static PyObject *get_closed(CorpusObject *self, void *unused)
{
	(void)unused;
	return PyBool_FromLong(self->c == NULL);
}

static PyObject *get_access(CorpusObject *self, void *closure)
{
	(void)closure;
	return PyUnicode_FromString(dx_access_name(self->access));
}

static PyObject *get_inflate_cache(CorpusObject *self, void *unused)
{
	(void)unused;
	return PyLong_FromUnsignedLongLong(self->inflate_cache);
}

static PyObject *get_inflated(CorpusObject *self, void *unused)
{
	(void)unused;
	if (corpus_enter(self) < 0)
		return NULL;
	uint64_t n = dx_corpus_inflated(self->c);
	dx_py_unlock(self->lock);
	return PyLong_FromUnsignedLongLong(n);
}

static PyObject *get_bytes(CorpusObject *self, void *unused)
{
	(void)unused;
	return PyBool_FromLong(self->as_bytes);
}

static PyObject *get_view(CorpusObject *self, void *unused)
{
	(void)unused;
	return PyBool_FromLong(self->as_view);
}

static PyObject *corpus_iter(PyObject *self)
{
	return corpus_ids((CorpusObject *)self, NULL);
}

static PyMethodDef corpus_methods[] = {
	{ "get", (PyCFunction)(void (*)(void))corpus_get, METH_FASTCALL | METH_KEYWORDS,
	  "get(id, *, bytes=None, view=None) -> str | bytes | memoryview\n\n"
	  "The document with this id (str or bytes): the record as it is in the\n"
	  "corpus, or its selected fields.  KeyError when no record has the id\n"
	  "(unlike dict.get, there is no default).  view=True gives a memoryview\n"
	  "(see Corpus); else bytes=True gives bytes, bytes=False str; None\n"
	  "leaves the corpus's default." },
	{ "get_many", (PyCFunction)(void (*)(void))corpus_get_many, METH_FASTCALL | METH_KEYWORDS,
	  "get_many(ids, *, bytes=None, view=None) -> list\n\n"
	  "The documents of these ids, in the order given, read together with\n"
	  "the GIL let go: a gzip corpus in one call to the library, which\n"
	  "decompresses each stretch once, in file order; a plain one in runs\n"
	  "of records.  KeyError for the first id that no record has." },
	{ "get_many_positions", (PyCFunction)(void (*)(void))corpus_get_many_positions,
	  METH_FASTCALL | METH_KEYWORDS,
	  "get_many_positions(positions, *, bytes=None, view=None) -> list\n\n"
	  "The documents at these 0-based positions in corpus order, as\n"
	  "get_many reads them; negative positions count from the end.\n"
	  "IndexError for a position out of range." },
	{ "position", (PyCFunction)corpus_position, METH_O,
	  "position(id) -> int\n\n"
	  "The 0-based position of the record with this id (str or bytes), so\n"
	  "that c[c.position(id)] == c.get(id).  KeyError when no record has it." },
	{ "positions", (PyCFunction)corpus_positions, METH_O,
	  "positions(ids) -> list of int\n\n"
	  "The positions of the records with these ids, in the order given,\n"
	  "found together with the GIL let go: what a map-style dataset over\n"
	  "the corpus needs (a Subset of the judged documents, say) without a\n"
	  "dict of every id.  KeyError for the first id that no record has." },
	{ "id", (PyCFunction)corpus_id, METH_O,
	  "id(position) -> str (bytes for a corpus opened with bytes=True)\n\n"
	  "The id of the record at this 0-based position; a negative one counts\n"
	  "from the end.  IndexError for a position out of range." },
	{ "ids", (PyCFunction)corpus_ids, METH_NOARGS,
	  "ids() -> iterator of str (bytes for a corpus opened with bytes=True)\n\n"
	  "The ids of the records in corpus order; iter(corpus) gives the same." },
	{ "__reversed__", (PyCFunction)corpus_reversed, METH_NOARGS,
	  "The ids from the last record to the first, as reversed() of a dict\n"
	  "gives its keys: the reverse of iter(corpus)." },
	{ "close", (PyCFunction)corpus_close, METH_NOARGS,
	  "close() -> None\n\nCloses the corpus (after a read under way in another thread\n"
	  "ends); later calls raise ValueError.  Closing twice is harmless.\n"
	  "A memoryview of the file (view=True) keeps it mapped until the last\n"
	  "one is released." },
	{ "__enter__", (PyCFunction)corpus_enter_ctx, METH_NOARGS, "Returns the corpus." },
	{ "__exit__", (PyCFunction)corpus_exit_ctx, METH_VARARGS, "Closes the corpus." },
	{ "__reduce__", (PyCFunction)corpus_reduce, METH_NOARGS,
	  "Pickles the corpus as its path, field, bytes, view, access and inflate_cache: unpickling\n"
	  "opens it again." },
	{ NULL, NULL, 0, NULL },
};

static PyMemberDef corpus_members[] = {
	{ "path", T_OBJECT, offsetof(CorpusObject, path), READONLY,
	  "The path the corpus was opened with, as os.fspath gave it." },
	{ "field", T_OBJECT, offsetof(CorpusObject, field), READONLY,
	  "The field selection (\"title,body\"), or None for the whole record." },
	{ NULL, 0, 0, 0, NULL },
};

static PyGetSetDef corpus_getset[] = {
	{ "closed", (getter)get_closed, NULL, "Whether the corpus is closed.", NULL },
	{ "bytes", (getter)get_bytes, NULL, "Whether documents and ids come as bytes by default.",
	  NULL },
	{ "view", (getter)get_view, NULL, "Whether documents come as memoryviews by default.", NULL },
	{ "access", (getter)get_access, NULL, "How records are read: 'auto', 'mmap' or 'pread'.", NULL },
	{ "inflate_cache", (getter)get_inflate_cache, NULL,
	  "The size of the inflate cache it was opened with (0: none).", NULL },
	{ "inflated", (getter)get_inflated, NULL,
	  "Bytes this handle has inflated from gzip and BGZF sources since it was\n"
	  "opened (what came from the inflate cache not counted).", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PySequenceMethods corpus_as_sequence = {
	.sq_length = (lenfunc)corpus_len,
	.sq_item = (ssizeargfunc)corpus_item,
	.sq_contains = (objobjproc)corpus_contains,
};

/* c[i] and c[a:b:s], where the sequence protocol has c[i] alone. */
static PyMappingMethods corpus_as_mapping = {
	.mp_length = (lenfunc)corpus_len,
	.mp_subscript = (binaryfunc)corpus_subscript,
};

static const char corpus_doc[] =
	"Corpus(path, field=None, *, bytes=False, view=False, access='auto',\n"
	"       inflate_cache=0)\n\n"
	"Documents served out of an indexed corpus (TSV, JSONL or TREC; plain,\n"
	"gzip or BGZF), opened through the corpus file (with its .ddx index\n"
	"beside it, as `docdex index` writes it) or through the index itself.\n\n"
	"field selects what a document is, as `docdex get --field` does: TSV\n"
	"column numbers or names, JSON keys or TREC elements, separated by commas\n"
	"and joined by a space (\"title,body\"); None gives the raw record.\n"
	"Documents and ids come as str, decoded as UTF-8 with errors=\n"
	"'surrogateescape' (str.encode('utf-8', 'surrogateescape') gives back the\n"
	"exact bytes), or as bytes with bytes=True (per call: bytes= of get,\n"
	"get_many and get_many_positions).\n\n"
	"view=True (per call too) gives documents as read-only memoryviews: of\n"
	"the file's own pages, without a copy, where the text lies as it is in\n"
	"a plain file read through its mapping (a whole record, a TSV column, a\n"
	"JSON string without escapes), else of a copy (view.obj is then bytes).\n"
	"A view keeps the mapping while it lives, after close() too.  It reads\n"
	"the file itself: a file cut short under a view kills the process with\n"
	"SIGBUS when the view is read, as with mmap and numpy.memmap.\n\n"
	"access says how records of a plain corpus, and the compressed bytes of\n"
	"a gzip or BGZF one, are read, as --access of `docdex get`: 'mmap' (the\n"
	"shared mapping), 'pread' (a copy each, the way for a corpus larger than\n"
	"memory), or 'auto': the mapping while the records are in memory, pread\n"
	"while they are not.\n\n"
	"inflate_cache (bytes; 0 for none) shares what is inflated from a gzip or\n"
	"BGZF corpus with every other process that reads it with one, as\n"
	"--inflate-cache of `docdex get`: a file of that size in /dev/shm (or\n"
	"$DOCDEX_CACHE_DIR), so that DDP ranks and their DataLoader workers\n"
	"inflate each stretch once between them.  A size too small for one\n"
	"stretch raises docdex.Error; a cache that cannot be had warns\n"
	"(RuntimeWarning) and the corpus reads without it.\n\n"
	"len(c) is the number of records, c[i] the record at position i (negative\n"
	"positions count from the end), c[a:b:s] a list of the records of a slice,\n"
	"`id in c` tells whether an id is there, iter(c) and c.ids() give the\n"
	"ids in corpus order, reversed(c) from the last to the first.\n\n"
	"Errors of the library (a missing file, a changed corpus, a damaged index,\n"
	"a file cut short while open) raise docdex.Error.  A Corpus may be shared\n"
	"by threads: calls on it take turns (a lock of its own), with the GIL let\n"
	"go while the library reads (but for one document of a plain corpus found\n"
	"in memory, a read shorter than letting the GIL go and taking it back).\n"
	"A pickled Corpus opens its path again, so each worker process gets a\n"
	"handle of its own; a Corpus inherited through fork works too, as long as\n"
	"no thread was reading from it at the fork.";

PyTypeObject CorpusType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "docdex.Corpus",
	.tp_basicsize = sizeof(CorpusObject),
	.tp_dealloc = (destructor)corpus_dealloc,
	.tp_repr = (reprfunc)corpus_repr,
	.tp_as_sequence = &corpus_as_sequence,
	.tp_as_mapping = &corpus_as_mapping,
	.tp_iter = corpus_iter,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = corpus_doc,
	.tp_methods = corpus_methods,
	.tp_members = corpus_members,
	.tp_getset = corpus_getset,
	.tp_init = (initproc)corpus_init,
	.tp_new = corpus_new,
};

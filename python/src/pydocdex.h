/* pydocdex.h: what the files of the extension docdex._docdex share. */
#ifndef PYDOCDEX_H
#define PYDOCDEX_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <structmember.h>

#include "docdex.h"

/*
 * The texts of a batch of records (texts.c), the one read path of Corpus
 * and _Sampler: read under the handle's lock without the GIL, text i
 * then at buf + span[i].off.
 */
typedef struct dx_py_span {
	size_t off, len;        /* len: bytes, or code points with maxchar */
	uint32_t maxchar;       /* with decode: the kind of str the units at
	                           off make (utf8.h); 0: the text's bytes */
	const char *mapped;     /* with keep_mapped: where the text lies in a
	                           plain file's mapping (not copied), or NULL */
} dx_py_span;

typedef struct dx_py_texts {
	dx_record *rec;         /* room for cap records, spans and texts to */
	dx_py_span *span;       /* copy */
	dx_record *copy;
	size_t cap, n;
	char *buf;              /* the texts, one after another */
	size_t used, bufcap;
	int plain;              /* every source of the corpus is a plain file
	                           (dx_py_corpus_plain), set by the owner */
	int keep_mapped;        /* leave texts that lie in the mapping there
	                           (for views), set by the owner per call */
	int decode;             /* decode each text into a str's units (for
	                           str), set by the owner per call */
} dx_py_texts;

/* What a document is made into: str, bytes, or a memoryview. */
enum { DX_PY_STR, DX_PY_BYTES, DX_PY_VIEW };

/*
 * A corpus opened for Python.  The library wants a handle used by one
 * thread at a time, so every call on c holds lock; the GIL is let go while
 * the library reads, so that other Python threads run meanwhile.
 */
typedef struct {
	PyObject_HEAD
	dx_corpus *c;           /* NULL once closed */
	dx_fields *fields;      /* the field= selection, or NULL for the record */
	PyObject *path;         /* str or bytes, as os.fspath gave it: for pickle */
	PyObject *field;        /* str or None */
	int as_bytes;           /* bytes rather than str by default */
	int as_view;            /* documents as memoryviews by default */
	int access;             /* DX_ACCESS_*: for pickle */
	unsigned long long inflate_cache; /* bytes asked for (0: none): for pickle */
	pthread_mutex_t *lock;
	dx_err *dead;           /* the error that ended c (a stale file), or NULL */
	/* What one call reads, kept from call to call (under lock): a batch
	 * does not allocate afresh. */
	dx_py_texts tx;
	/* Views into the mapping alive (view.c), and the library corpus that
	 * a close left open for them: the mapping stays until the last one is
	 * released.  Both change with the GIL held. */
	Py_ssize_t views;
	dx_corpus *kept;
} CorpusObject;

extern PyObject *DxError;
extern PyTypeObject CorpusType;
extern PyTypeObject IdIterType;
extern PyTypeObject SamplerType; /* sampler.c */

/* Reads records pos[0..n) of c, checks their ids, takes fields f (NULL:
 * the record) and copies each text into buf.  Returns 0 or a library
 * code, with err filled. */
int dx_py_texts_read(dx_py_texts *t, dx_corpus *c, const dx_fields *f, const uint64_t *pos,
                     size_t n, dx_err *err);
/* Fills err as the library does when out of memory: DX_ENOMEM. */
int dx_py_nomem(dx_err *err);

/* Room for more bytes after the used ones in a buffer that doubles
 * (4 KiB at first): 0, or -1 when out of memory (buf unchanged). */
int dx_py_grow(char **buf, size_t *cap, size_t used, size_t more);

/* Text i as kind (DX_PY_*; for DX_PY_VIEW the view's base, which
 * dx_py_views makes into a view): a new reference, or NULL.  owner is the
 * corpus a base in its mapping holds (unused for other kinds).  None of
 * these objects is tracked by the garbage collector. */
PyObject *dx_py_text_object(const dx_py_texts *t, size_t i, int kind, CorpusObject *owner);
/* The base of a view of len bytes at mapped, in owner's mapping: an object
 * that holds owner, and keeps its mapping after a close, while it lives.
 * A new reference, or NULL. */
PyObject *dx_py_mapped(CorpusObject *owner, const char *mapped, size_t len);
/* Replaces each of the n bases in out (dx_py_mapped's, or bytes) by a
 * read-only memoryview of it: 0, or -1 with an exception (each out[i]
 * still a reference to release). */
int dx_py_views(PyObject **out, size_t n);
int dx_py_view_ready(void);
/* Whether every source of c is a plain (mapped) file: 1 or 0. */
int dx_py_corpus_plain(dx_corpus *c);
/* After a call: lets go of a buffer grown large, keeps a small one. */
void dx_py_texts_trim(dx_py_texts *t);
void dx_py_texts_free(dx_py_texts *t);

/* Raises docdex.Error (MemoryError for DX_ENOMEM) for err; returns NULL. */
PyObject *dx_py_raise(const dx_err *err);

/*
 * A handle's lock: a pthread mutex rather than a PyThread lock, whose
 * acquire reads the clock even when it does not wait (5% of a one-document
 * read).  dx_py_lock_new gives NULL when out of memory.
 */
pthread_mutex_t *dx_py_lock_new(void);
void dx_py_lock_free(pthread_mutex_t *lock);
/* Takes it, letting go of the GIL while it waits: waiting with the GIL
 * held would stall every thread and deadlock with the holder, which takes
 * the GIL back before it lets go. */
void dx_py_lock(pthread_mutex_t *lock);
void dx_py_unlock(pthread_mutex_t *lock);

/* Takes the corpus's lock, letting go of the GIL while it waits, and
 * checks that the corpus is open: 0, or -1 with an exception set (and the
 * lock not held). */
int corpus_enter(CorpusObject *self);
/* After a failed call under the lock: a DX_ESTALE leaves the corpus good
 * only for closing (a mapped file cut short), so it is closed here and
 * later calls raise the same error.  Call with the lock held. */
void corpus_failed(CorpusObject *self, const dx_err *err);

/* DX_ACCESS_* named by access= ("auto", "mmap", "pread"), or -1 with
 * ValueError set. */
int dx_py_access(const char *name);

/* Text of a record for Python: bytes, or str decoded as UTF-8 with
 * surrogateescape (so that any bytes come back through str.encode). */
PyObject *text_object(const char *s, size_t n, int as_bytes);
/* The str of n code points of kind maxchar decoded by dx_py_utf8_decode
 * (or ASCII bytes, maxchar 127) into units: a new reference, or NULL. */
PyObject *dx_py_str(const char *units, size_t n, uint32_t maxchar);
/* An id given from Python (str or bytes) as a new bytes object, or NULL
 * with TypeError, or KeyError for a str that no bytes spell (a lone
 * surrogate): the id of no record. */
PyObject *id_bytes(PyObject *id);

/* len(c), or -1 with an exception (a closed corpus). */
Py_ssize_t corpus_len(CorpusObject *self);
/* The reading methods of Corpus (read.c). */
PyObject *corpus_get(CorpusObject *self, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames);
PyObject *corpus_get_many(CorpusObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
PyObject *corpus_get_many_positions(CorpusObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames);
PyObject *corpus_position(CorpusObject *self, PyObject *id);
PyObject *corpus_positions(CorpusObject *self, PyObject *ids);
PyObject *corpus_item(CorpusObject *self, Py_ssize_t i);
PyObject *corpus_subscript(CorpusObject *self, PyObject *key);
PyObject *corpus_id(CorpusObject *self, PyObject *arg);
int corpus_contains(CorpusObject *self, PyObject *id);
/* ids() and iter(c) (iter.c). */
PyObject *corpus_ids(CorpusObject *self, PyObject *unused);
PyObject *corpus_reversed(CorpusObject *self, PyObject *unused);

#endif

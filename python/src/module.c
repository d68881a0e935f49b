/* module.c: docdex._docdex, the module: docdex.Error, Corpus, the version,
 * and the SIGBUS guard. */
#include <errno.h>
#include <string.h>

#include "pydocdex.h"

PyObject *DxError;

/*
 * A failed system call raises a docdex.OSError, a docdex.Error that is an
 * OSError too; where Python's own open() would raise a subclass of OSError
 * for its errno, a subclass of both, so that `except FileNotFoundError`
 * works as it does for a file Python opened.  Each is docdex.NAME, so that
 * it pickles (a DataLoader worker's exception is sent to the main process
 * by its class's name).
 */
static struct {
	const char *name, *doc;
	PyObject **base;
	int errnos[2];
	PyObject *cls;
} os_errors[] = {
	/* First: the base of the others, for any errno they do not take. */
	{ "docdex.OSError", "A system call of docdex failed (its errno in e.errno).", &PyExc_OSError,
	  { 0 }, NULL },
	{ "docdex.FileNotFoundError", "A file docdex needs does not exist (ENOENT).",
	  &PyExc_FileNotFoundError, { ENOENT }, NULL },
	{ "docdex.PermissionError", "docdex may not read or write a file (EACCES, EPERM).",
	  &PyExc_PermissionError, { EACCES, EPERM }, NULL },
	{ "docdex.IsADirectoryError", "A file docdex was given is a directory (EISDIR).",
	  &PyExc_IsADirectoryError, { EISDIR }, NULL },
	{ "docdex.NotADirectoryError", "A path docdex was given goes through a file (ENOTDIR).",
	  &PyExc_NotADirectoryError, { ENOTDIR }, NULL },
};
enum { N_OS_ERRORS = sizeof os_errors / sizeof os_errors[0] };

static PyObject *error_class(const dx_err *err)
{
	if (err->code != DX_ESYS)
		return DxError;
	for (size_t i = 1; i < N_OS_ERRORS; i++)
		if (err->sys && (err->sys == os_errors[i].errnos[0] || err->sys == os_errors[i].errnos[1]))
			return os_errors[i].cls;
	return os_errors[0].cls;
}

static int add_os_errors(PyObject *m)
{
	for (size_t i = 0; i < N_OS_ERRORS; i++) {
		PyObject *bases = PyTuple_Pack(2, i ? os_errors[0].cls : DxError, *os_errors[i].base);
		if (!bases)
			return -1;
		os_errors[i].cls = PyErr_NewExceptionWithDoc(os_errors[i].name, os_errors[i].doc, bases, NULL);
		Py_DECREF(bases);
		if (!os_errors[i].cls ||
		    PyModule_AddObjectRef(m, strchr(os_errors[i].name, '.') + 1, os_errors[i].cls) < 0)
			return -1;
	}
	return 0;
}

PyObject *dx_py_raise(const dx_err *err)
{
	if (err->code == DX_ENOMEM)
		return PyErr_NoMemory();
	char msg[1600];
	dx_describe(err, msg, sizeof msg);
	PyObject *cls = error_class(err);
	/* The message alone as its argument: an OSError given no strerror nor
	 * filename prints just that, the library's line. */
	PyObject *e = PyObject_CallFunction(cls, "s", msg);
	if (!e)
		return NULL;
	/* What a program may test rather than parse the message for. */
	PyObject *code = PyLong_FromLong(err->code), *sys = PyLong_FromLong(err->sys);
	if (code && sys && PyObject_SetAttrString(e, "code", code) == 0 &&
	    PyObject_SetAttrString(e, "errno", sys) == 0)
		PyErr_SetObject(cls, e);
	Py_XDECREF(code);
	Py_XDECREF(sys);
	Py_DECREF(e);
	return NULL;
}

static const char error_doc[] =
	"An error of the docdex library.\n\n"
	"str(e) is the library's one-line description (what went wrong, the file\n"
	"or id it concerns, and the system's reason where a system call failed).\n"
	"e.code is the library's DX_E* code (a negative int, see the ERR_*\n"
	"constants) and e.errno the errno of a failed system call, or 0; both are\n"
	"None in an Error made again from its message alone (as a DataLoader\n"
	"re-raises a worker's exception).  A failed\n"
	"system call (code ERR_SYS) raises a docdex.OSError, both a docdex.Error\n"
	"and an OSError, or its subclass of the OSError open() would raise: a\n"
	"missing file is a docdex.FileNotFoundError, caught by `except\n"
	"FileNotFoundError`; docdex.PermissionError, IsADirectoryError and\n"
	"NotADirectoryError likewise.";

static const char module_doc[] =
	"The C extension behind the docdex package: see docdex.Corpus.";

static struct PyModuleDef moduledef = {
	PyModuleDef_HEAD_INIT, .m_name = "docdex._docdex", .m_doc = module_doc, .m_size = -1,
};

static int add_codes(PyObject *m)
{
	static const struct { const char *name; int code; } codes[] = {
		{ "ERR_SYS", DX_ESYS },         { "ERR_NOMEM", DX_ENOMEM },
		{ "ERR_INVAL", DX_EINVAL },     { "ERR_FORMAT", DX_EFORMAT },
		{ "ERR_CORRUPT", DX_ECORRUPT }, { "ERR_STALE", DX_ESTALE },
		{ "ERR_DUPID", DX_EDUPID },     { "ERR_NOID", DX_ENOID },
		{ "ERR_CANCELED", DX_ECANCELED }, { "ERR_LIMIT", DX_ELIMIT },
		{ "ERR_VERSION", DX_EVERSION }, { "ERR_MISMATCH", DX_EMISMATCH },
	};
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (PyModule_AddIntConstant(m, codes[i].name, codes[i].code) < 0)
			return -1;
	return 0;
}

PyMODINIT_FUNC PyInit__docdex(void);
PyMODINIT_FUNC PyInit__docdex(void)
{
	/* A corpus file cut short under a reader must fail the read, not kill
	 * the interpreter.  Installed before any thread of ours reads. */
	dx_err err = { 0 };
	if (dx_sigbus_guard_install(&err) < 0) {
		PyErr_Format(PyExc_ImportError, "docdex: cannot install the SIGBUS guard: %s",
		             err.what);
		return NULL;
	}
	if (PyType_Ready(&CorpusType) < 0 || PyType_Ready(&IdIterType) < 0 ||
	    PyType_Ready(&SamplerType) < 0 || dx_py_view_ready() < 0)
		return NULL;
	PyObject *m = PyModule_Create(&moduledef);
	if (!m)
		return NULL;
	DxError = PyErr_NewExceptionWithDoc("docdex.Error", error_doc, PyExc_Exception, NULL);
	if (!DxError || PyModule_AddObjectRef(m, "Error", DxError) < 0 ||
	    PyModule_AddObjectRef(m, "Corpus", (PyObject *)&CorpusType) < 0 ||
	    PyModule_AddObjectRef(m, "_Sampler", (PyObject *)&SamplerType) < 0 ||
	    PyModule_AddStringConstant(m, "library_version", dx_version()) < 0 ||
	    PyModule_AddStringConstant(m, "__version__", DX_VERSION) < 0 || add_codes(m) < 0 ||
	    add_os_errors(m) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}

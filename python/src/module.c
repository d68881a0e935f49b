/* module.c: docdex._docdex, the module: docdex.Error, Corpus, the version,
 * and the SIGBUS guard. */
#include "pydocdex.h"

PyObject *DxError;

PyObject *dx_py_raise(const dx_err *err)
{
	if (err->code == DX_ENOMEM)
		return PyErr_NoMemory();
	char msg[1600];
	dx_describe(err, msg, sizeof msg);
	PyObject *e = PyObject_CallFunction(DxError, "s", msg);
	if (!e)
		return NULL;
	/* What a program may test rather than parse the message for. */
	PyObject *code = PyLong_FromLong(err->code), *sys = PyLong_FromLong(err->sys);
	if (code && sys && PyObject_SetAttrString(e, "code", code) == 0 &&
	    PyObject_SetAttrString(e, "errno", sys) == 0)
		PyErr_SetObject(DxError, e);
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
	"constants) and e.errno the errno of a failed system call, or 0.  A missing\n"
	"file is a docdex.Error with code ERR_SYS and errno ENOENT.";

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
	    PyType_Ready(&SamplerType) < 0)
		return NULL;
	PyObject *m = PyModule_Create(&moduledef);
	if (!m)
		return NULL;
	DxError = PyErr_NewExceptionWithDoc("docdex.Error", error_doc, PyExc_Exception, NULL);
	if (!DxError || PyModule_AddObjectRef(m, "Error", DxError) < 0 ||
	    PyModule_AddObjectRef(m, "Corpus", (PyObject *)&CorpusType) < 0 ||
	    PyModule_AddObjectRef(m, "_Sampler", (PyObject *)&SamplerType) < 0 ||
	    PyModule_AddStringConstant(m, "library_version", dx_version()) < 0 ||
	    PyModule_AddStringConstant(m, "__version__", DX_VERSION) < 0 || add_codes(m) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}

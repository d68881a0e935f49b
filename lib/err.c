/* err.c: error codes and the dx_err record. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

const char *dx_strerror(int code)
{
	switch (code) {
	case DX_OK: return "success";
	case DX_ESYS: return "system call failed";
	case DX_ENOMEM: return "out of memory";
	case DX_EINVAL: return "invalid argument";
	case DX_EFORMAT: return "malformed input";
	case DX_ECORRUPT: return "damaged index";
	case DX_ESTALE: return "stale index";
	case DX_EDUPID: return "duplicate id";
	case DX_ENOID: return "record without an id";
	case DX_ECANCELED: return "canceled";
	case DX_ELIMIT: return "beyond the limits of the index format";
	case DX_EVERSION: return "unsupported index version";
	case DX_EMISMATCH: return "index and corpus differ";
	}
	return "unknown error";
}

const char *dx_version(void)
{
	return DX_VERSION;
}

/* Fills err (when there is one) and returns code. */
__attribute__((format(printf, 6, 0)))
static int vfail(dx_err *err, int code, int sys, const char *subject, size_t len, const char *fmt,
                 va_list ap)
{
	if (!err)
		return code;
	vsnprintf(err->what, sizeof err->what, fmt, ap);
	err->code = code;
	err->sys = sys;
	if (len >= sizeof err->subject)
		len = sizeof err->subject - 1;
	memcpy(err->subject, subject, len);
	err->subject[len] = '\0';
	return code;
}

int dx__fail(dx_err *err, int code, int sys, const char *subject, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vfail(err, code, sys, subject ? subject : "", subject ? strlen(subject) : 0, fmt, ap);
	va_end(ap);
	return r;
}

int dx__fail_n(dx_err *err, int code, const char *subject, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vfail(err, code, 0, subject, len, fmt, ap);
	va_end(ap);
	return r;
}

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

static void set_subject(dx_err *err, const char *subject, size_t len)
{
	if (len >= sizeof err->subject)
		len = sizeof err->subject - 1;
	memcpy(err->subject, subject, len);
	err->subject[len] = '\0';
}

__attribute__((format(printf, 2, 0)))
static void set_what(dx_err *err, const char *fmt, va_list ap)
{
	vsnprintf(err->what, sizeof err->what, fmt, ap);
}

int dx__fail(dx_err *err, int code, int sys, const char *subject, const char *fmt, ...)
{
	if (!err)
		return code;
	va_list ap;
	va_start(ap, fmt);
	set_what(err, fmt, ap);
	va_end(ap);
	err->code = code;
	err->sys = sys;
	set_subject(err, subject ? subject : "", subject ? strlen(subject) : 0);
	return code;
}

int dx__fail_n(dx_err *err, int code, const char *subject, size_t len, const char *fmt, ...)
{
	if (!err)
		return code;
	va_list ap;
	va_start(ap, fmt);
	set_what(err, fmt, ap);
	va_end(ap);
	err->code = code;
	err->sys = 0;
	set_subject(err, subject, len);
	return code;
}

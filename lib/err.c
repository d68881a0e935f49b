/* err.c: error codes and the dx_err record. */
#include <ctype.h>
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

static int is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

const char *dx_escape(const char *s, size_t n, char *out, size_t outsz)
{
	static const char hex[] = "0123456789abcdef";
	if (outsz == 0)
		return out;
	size_t full = 0;
	for (size_t i = 0; i < n; i++)
		full += is_control((unsigned char)s[i]) ? 4 : 1;
	/* What does not fit is cut, and "..." says so. */
	size_t room = full < outsz ? full : outsz > 4 ? outsz - 4 : 0, o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (o + (is_control(c) ? 4 : 1) > room)
			break;
		if (is_control(c)) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	if (full >= outsz)
		for (int k = 0; k < 3 && o + 1 < outsz; k++)
			out[o++] = '.';
	out[o] = '\0';
	return out;
}

/* Fills err (when there is one) and returns code.  Control bytes of the
 * subject (an id may hold a NUL or a newline) and of what are written as
 * \xNN, so that a message stays one line and shows every byte. */
__attribute__((format(printf, 6, 0)))
static int vfail(dx_err *err, int code, int sys, const char *subject, size_t len, const char *fmt,
                 va_list ap)
{
	if (!err)
		return code;
	char what[sizeof err->what];
	vsnprintf(what, sizeof what, fmt, ap);
	dx_escape(what, strlen(what), err->what, sizeof err->what);
	err->code = code;
	err->sys = sys;
	dx_escape(subject, len, err->subject, sizeof err->subject);
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

const char *dx_describe(const dx_err *err, char *out, size_t outsz)
{
	char sys[256] = "";
	if (err->sys) {
		/* strerror in lower case, like the rest of the line. */
		snprintf(sys, sizeof sys, ": %s", strerror(err->sys));
		sys[2] = (char)tolower((unsigned char)sys[2]);
	}
	if (err->subject[0])
		snprintf(out, outsz, "%s: '%s'%s", err->what, err->subject, sys);
	else
		snprintf(out, outsz, "%s%s", err->what, sys);
	return out;
}

/* err.h: filling a dx_err (internal). */
#ifndef DX_ERR_H
#define DX_ERR_H

#include <errno.h>

#include "docdex.h"

/*
 * Records a failure in err (which may be NULL) and returns code, so that a
 * caller can write "return dx__fail(err, DX_EFORMAT, 0, path, "bad line")".
 * sys is the errno of a failed system call, or 0.  The subject is copied
 * as given, truncated if it is longer than dx_err can hold.
 */
int dx__fail(dx_err *err, int code, int sys, const char *subject, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* The same with a subject of known length, such as an id. */
int dx__fail_n(dx_err *err, int code, const char *subject, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* A system call failed: code DX_ESYS with errno. */
#define dx__fail_sys(err, subject, ...) dx__fail((err), DX_ESYS, errno, (subject), __VA_ARGS__)
#define dx__fail_nomem(err) dx__fail((err), DX_ENOMEM, ENOMEM, "", "out of memory")

#endif

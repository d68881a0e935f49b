/* opts.h: the caller's option structs, of whatever size it was built with,
 * as this library's (internal). */
#ifndef DX_OPTS_H
#define DX_OPTS_H

#include "docdex.h"

/* *out = *in, with the options in lacks at their defaults; DX_EINVAL when
 * in is NULL or was not set up by its init function. */
int dx__build_opts_take(dx_build_opts *out, const dx_build_opts *in, dx_err *err);
int dx__sample_opts_take(dx_sample_opts *out, const dx_sample_opts *in, dx_err *err);

#endif

/*
 * opts.c: option structs that can grow.  Each starts with the size of the
 * struct the caller was built with; a library with more options gives
 * those the caller does not know their defaults, and one with fewer
 * ignores what it does not know of.
 */
#include <stddef.h>
#include <string.h>

#include "err.h"
#include "opts.h"

/* The smallest struct of each kind: as it was in docdex 0.1. */
#define BUILD_OPTS_FIRST (offsetof(dx_build_opts, progress_ctx) + sizeof(void *))
#define SAMPLE_OPTS_FIRST (offsetof(dx_sample_opts, report) + sizeof(void *))

static size_t least(size_t a, size_t b)
{
	return a < b ? a : b;
}

void dx_build_opts_init_size(dx_build_opts *o, size_t size)
{
	dx_build_opts d = { .size = size };
	memcpy(o, &d, least(size, sizeof d));
}

void dx_sample_opts_init_size(dx_sample_opts *o, size_t size)
{
	dx_sample_opts d = { .size = size, .min_rel = 1, .negatives = 1, .run_ratio = 0.5, .world_size = 1 };
	memcpy(o, &d, least(size, sizeof d));
}

static int not_set_up(dx_err *err, const char *kind)
{
	return dx__fail(err, DX_EINVAL, 0, "", "%s not set up by %s_init", kind, kind);
}

int dx__build_opts_take(dx_build_opts *out, const dx_build_opts *in, dx_err *err)
{
	if (!in || in->size < BUILD_OPTS_FIRST)
		return not_set_up(err, "dx_build_opts");
	dx_build_opts_init(out);
	memcpy(out, in, least(in->size, sizeof *out));
	out->size = sizeof *out;
	return 0;
}

int dx__sample_opts_take(dx_sample_opts *out, const dx_sample_opts *in, dx_err *err)
{
	if (!in || in->size < SAMPLE_OPTS_FIRST)
		return not_set_up(err, "dx_sample_opts");
	dx_sample_opts_init(out);
	memcpy(out, in, least(in->size, sizeof *out));
	out->size = sizeof *out;
	return 0;
}

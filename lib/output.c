/*
 * output.c: the files a program writes through the library (dx_output in
 * docdex.h): an atomic file (atomic_file.h) behind an opaque handle, and
 * the check that an output is not one of the inputs.
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "err.h"

int dx_same_file(const char *a, const char *b)
{
	struct stat x, y;
	return stat(a, &x) == 0 && S_ISREG(x.st_mode) && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

int dx_output_replaces(const char *path)
{
	return dx__atomic_replaces(path);
}

/* An atomic file as the library shows it. */
struct dx_output {
	dx_atomic a;
};

dx_output *dx_output_open(const char *path, dx_err *err)
{
	dx_output *f = malloc(sizeof *f);
	if (!f) {
		dx__fail_nomem(err);
		return NULL;
	}
	if (dx__atomic_open(&f->a, path, err) < 0) {
		dx_output_abort(f);
		return NULL;
	}
	return f;
}

int dx_output_fd(const dx_output *f)
{
	return f->a.fd;
}

int dx_output_commit(dx_output *f, dx_err *err)
{
	int r = dx__atomic_commit(&f->a, err);
	dx_output_abort(f);
	return r;
}

void dx_output_abort(dx_output *f)
{
	if (!f)
		return;
	dx__atomic_abort(&f->a);
	free(f);
}

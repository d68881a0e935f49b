/*
 * atomic_file.h: writing a file so that it appears whole or not at all
 * (internal).  The bytes go to an unnamed file (O_TMPFILE) in the target's
 * directory, or where the filesystem lacks it to a hidden temporary name;
 * commit flushes them to disk and links them at the target (none there) or
 * renames them over it in one step, so a reader of the old file keeps a
 * consistent view and a process killed at any moment leaves the old file as
 * it was.  The temporary name of a process killed before its rename is
 * removed by the next commit of the same target on that host.  A target
 * that is a device or a FIFO is written through instead (see
 * resolve_target in atomic_file.c).
 */
#ifndef DX_ATOMIC_FILE_H
#define DX_ATOMIC_FILE_H

#include <stddef.h>

#include "docdex.h"

typedef struct dx_atomic {
	int fd;
	char *path;     /* the target (the file a symbolic link points to) */
	char *tmp;      /* the temporary name, once the file has one */
	int through;    /* written in place: a device or a FIFO, not a file */
} dx_atomic;

/* Whether opening path would replace a regular file there (1), rather
 * than make one or write through a device, FIFO or descriptor (0). */
int dx__atomic_replaces(const char *path);
int dx__atomic_open(dx_atomic *a, const char *path, dx_err *err);
int dx__atomic_write(dx_atomic *a, const void *p, size_t n, dx_err *err);
int dx__atomic_commit(dx_atomic *a, dx_err *err);
/* Drops the file (after a failure); harmless after commit. */
void dx__atomic_abort(dx_atomic *a);

#endif

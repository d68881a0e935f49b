/*
 * textfile.h: the line-oriented inputs of sample (queries, qrels, runs, ID
 * triples), plain or gzip-compressed, read line by line (internal).
 */
#ifndef DX_TEXTFILE_H
#define DX_TEXTFILE_H

#include <stdint.h>
#include <zlib.h>

#include "docdex.h"

typedef struct dx_textfile {
	gzFile gz;
	char *path;
	char *buf;
	size_t start, len, cap;
	int eof;
	uint64_t line;        /* 1-based number of the line last returned */
} dx_textfile;

/* Opens a file; gzip is recognised by its content.  Returns 0 or DX_ESYS. */
int dx__textfile_open(dx_textfile *t, const char *path, dx_err *err);
void dx__textfile_close(dx_textfile *t);

/*
 * The next line, without its LF or CRLF: 1, 0 at the end, or a negative
 * code (a read error, damaged or truncated gzip data).  The line stays
 * valid until the next call; it is followed by a writable byte that the
 * caller may set to NUL.
 */
int dx__textfile_next(dx_textfile *t, char **line, size_t *len, dx_err *err);

/* Starts again from the first line. */
int dx__textfile_rewind(dx_textfile *t, dx_err *err);

/* "PATH:LINE" of the line last returned, into out. */
void dx__textfile_where(const dx_textfile *t, char *out, size_t outsz);

#endif

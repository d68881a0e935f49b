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
	size_t last;          /* where the line last returned starts in buf */
	size_t read;          /* bytes read so far */
	int eof;
	int seekable;         /* a regular file, which can be read again */
	uint64_t line;        /* 1-based number of the line last returned */
} dx_textfile;

/* Opens a file; gzip is recognised by its content, and other compressions
 * (xz, bzip2, zstd...) are refused by theirs.  Returns 0, DX_ESYS,
 * DX_EFORMAT for another compression, or DX_ECANCELED when a signal
 * interrupted the open (a FIFO waiting for its writer). */
int dx__textfile_open(dx_textfile *t, const char *path, dx_err *err);
void dx__textfile_close(dx_textfile *t);

/*
 * The next line, without its LF or CRLF: 1, 0 at the end, or a negative
 * code (a read error, damaged or truncated gzip data, DX_ECANCELED for a
 * read that a signal interrupted).  The line stays
 * valid until the next call; it is followed by a writable byte that the
 * caller may set to NUL.
 */
int dx__textfile_next(dx_textfile *t, char **line, size_t *len, dx_err *err);

/* Makes the next call return the line last returned again (once). */
void dx__textfile_unget(dx_textfile *t);

/* Starts again from the first line; DX_EFORMAT for a pipe or FIFO, which
 * cannot be read twice. */
int dx__textfile_rewind(dx_textfile *t, dx_err *err);

/* "PATH:LINE" of the line last returned, into out. */
void dx__textfile_where(const dx_textfile *t, char *out, size_t outsz);

#endif

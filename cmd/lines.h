/* lines.h: reading lines (ids, positions) from a file descriptor in large
 * blocks, without an allocation per line. */
#ifndef DX_LINES_H
#define DX_LINES_H

#include <stddef.h>

typedef struct lines {
	int fd;
	char *buf;
	size_t start, len, cap;
	int eof;
} lines;

int lines_open(lines *l, int fd);
void lines_close(lines *l);

/* The next line without its LF or CRLF: 1, 0 at the end, -1 on a read
 * error (errno).  The line stays valid until a call that has to read. */
int lines_next(lines *l, const char **line, size_t *len);

/* Whether the next line is already in the buffer, so that lines_next will
 * not read (and earlier lines stay valid). */
int lines_ready(const lines *l);

#endif

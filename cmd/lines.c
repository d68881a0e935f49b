/* lines.c: see lines.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lines.h"

enum { LINES_SIZE = 1 << 16 };

int lines_open(lines *l, int fd)
{
	*l = (lines){ .fd = fd, .cap = LINES_SIZE };
	l->buf = malloc(l->cap);
	return l->buf ? 0 : -1;
}

void lines_close(lines *l)
{
	free(l->buf);
	l->buf = NULL;
}

int lines_ready(const lines *l)
{
	size_t have = l->len - l->start;
	return memchr(l->buf + l->start, '\n', have) != NULL || (l->eof && have);
}

int lines_next(lines *l, const char **line, size_t *len)
{
	size_t searched = 0;
	for (;;) {
		char *p = l->buf + l->start;
		size_t have = l->len - l->start;
		char *nl = memchr(p + searched, '\n', have - searched);
		if (nl || (l->eof && have)) {
			size_t n = nl ? (size_t)(nl - p) : have;
			l->start += nl ? n + 1 : n;
			if (n && p[n - 1] == '\r')
				n--;
			*line = p;
			*len = n;
			return 1;
		}
		if (l->eof)
			return 0;
		searched = have;
		/* Move the partial line to the front; grow for a very long one. */
		memmove(l->buf, p, have);
		l->start = 0;
		l->len = have;
		if (l->len == l->cap) {
			char *b = realloc(l->buf, l->cap * 2);
			if (!b)
				return -1;
			l->buf = b;
			l->cap *= 2;
		}
		ssize_t r = read(l->fd, l->buf + l->len, l->cap - l->len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			l->eof = 1;
		l->len += (size_t)r;
	}
}

/* buf.c: a growable byte buffer. */
#include <errno.h>
#include <stdlib.h>

#include "buf.h"

int dx__buf_reserve(dx_buf *b, size_t more)
{
	if (b->cap - b->len >= more)
		return 0;
	if (more > SIZE_MAX / 2 - b->len) {
		errno = ENOMEM;
		return -1;
	}
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < more)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

void dx__buf_free(dx_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

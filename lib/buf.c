/* buf.c: a growable byte buffer. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

int dx__buf_reserve(dx_buf *b, size_t more)
{
	if (b->cap - b->len >= more)
		return 0;
	if (more > SIZE_MAX / 2 - b->len) {
		errno = ENOMEM;
		return -1;
	}
	return dx__grow(&b->p, &b->cap, b->len + more, 256, 1);
}

void dx__buf_free(dx_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int dx__resize(void *pp, size_t n, size_t size)
{
	void *old, *p;
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return -1;
	}
	/* Through memcpy: pp is the address of a pointer of any type. */
	memcpy(&old, pp, sizeof old);
	if (!(p = realloc(old, n && size ? n * size : 1)))
		return -1;
	memcpy(pp, &p, sizeof p);
	return 0;
}

int dx__grow(void *pp, size_t *cap, size_t need, size_t first, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : first;
	while (c < need) {
		if (c > SIZE_MAX / 2) {
			errno = ENOMEM;
			return -1;
		}
		c *= 2;
	}
	if (dx__resize(pp, c, size) < 0)
		return -1;
	*cap = c;
	return 0;
}

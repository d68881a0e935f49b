/* buf.h: a growable byte buffer (internal). */
#ifndef DX_BUF_H
#define DX_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct dx_buf {
	char *p;
	size_t len, cap;
} dx_buf;

/* Makes room for at least `more` bytes after len.  Returns 0 or -1 (ENOMEM). */
int dx__buf_reserve(dx_buf *b, size_t more);
void dx__buf_free(dx_buf *b);

/* Reallocates the array that *pp points to (pp is the address of a
 * pointer) to n elements of size bytes.  Returns 0, or -1 when out of
 * memory, *pp unchanged. */
int dx__resize(void *pp, size_t n, size_t size);
/* Makes the array *pp (as for dx__resize) hold at least need elements of
 * size bytes, its capacity *cap doubled, from first when it has none, as
 * often as that takes.  Returns 0, or -1 when out of memory, *pp and *cap
 * unchanged. */
int dx__grow(void *pp, size_t *cap, size_t need, size_t first, size_t size);

static inline int dx__buf_add(dx_buf *b, const void *p, size_t n)
{
	if (b->cap - b->len < n && dx__buf_reserve(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static inline int dx__buf_addc(dx_buf *b, char c)
{
	return dx__buf_add(b, &c, 1);
}

/* Appends v as a LEB128 varint (7 bits a byte, low bits first). */
static inline int dx__buf_add_varint(dx_buf *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;
	while (v >= 0x80) {
		tmp[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (unsigned char)v;
	return dx__buf_add(b, tmp, n);
}

#endif

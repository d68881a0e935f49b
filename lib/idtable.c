/* idtable.c: see idtable.h. */
#include "docdex.h"
#include "idtable.h"
#include "index_format.h"

const char *dx_id_kind_name(int kind)
{
	return kind == DX_ID_SEQUENTIAL ? "sequential" : kind == DX_ID_HASH ? "hash" : "unknown";
}

size_t dx__id_format(uint64_t v, char *out)
{
	char tmp[21];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = '\0';
	return n;
}

int dx__pool_id(const unsigned char *pool, uint64_t pool_size, const uint64_t *ckpt,
                uint64_t nckpt, uint64_t r, dx_range_check check, void *ctx,
                const char **id, size_t *len)
{
	uint64_t g = r / DDX_CKPT_EVERY;
	if (g >= nckpt)
		return -1;
	uint64_t off = ckpt[g];
	for (uint64_t k = g * DDX_CKPT_EVERY;; k++) {
		/* A length takes at most 10 bytes; check them before reading. */
		uint64_t avail = off < pool_size ? pool_size - off : 0, n;
		uint64_t head = avail < 10 ? avail : 10;
		int c;
		if (head == 0)
			return -1;
		if (check && (c = check(ctx, off, head)) != 0)
			return c;
		size_t used = dx__varint_get(pool + off, pool + off + head, &n);
		if (!used || n > avail - used)
			return -1;
		if (k == r) {
			if (check && (c = check(ctx, off + used, n)) != 0)
				return c;
			*id = (const char *)pool + off + used;
			*len = (size_t)n;
			return 0;
		}
		off += used + n;
	}
}

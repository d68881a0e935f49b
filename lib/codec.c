/* codec.c: whole-buffer DEFLATE and CRC32 through libdeflate or zlib (see
 * codec.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifdef DX_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "codec.h"
#include "docdex.h"

#ifdef DX_HAVE_LIBDEFLATE
static int libdeflate_wanted;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void decide(void)
{
	const char *v = getenv("DOCDEX_CODEC");
	libdeflate_wanted = !(v && strcmp(v, "zlib") == 0);
}

int dx__libdeflate_on(void)
{
	pthread_once(&once, decide);
	return libdeflate_wanted;
}
#else
int dx__libdeflate_on(void)
{
	return 0;
}
#endif

const char *dx_codecs(void)
{
#ifdef DX_HAVE_LIBDEFLATE
	return dx__libdeflate_on() ? "libdeflate " LIBDEFLATE_VERSION_STRING
	                           : "zlib (DOCDEX_CODEC=zlib; built with libdeflate " LIBDEFLATE_VERSION_STRING ")";
#else
	return "zlib";
#endif
}

uint32_t dx__crc32(uint32_t crc, const void *p, uint64_t n)
{
#ifdef DX_HAVE_LIBDEFLATE
	if (dx__libdeflate_on())
		return libdeflate_crc32(crc, p, (size_t)n);
#endif
	const unsigned char *c = p;
	while (n) {
		uInt step = n > (1u << 30) ? (1u << 30) : (uInt)n;
		crc = (uint32_t)crc32(crc, c, step);
		c += step;
		n -= step;
	}
	return crc;
}

#ifdef DX_HAVE_LIBDEFLATE
struct dx_inflater {
	struct libdeflate_decompressor *ld;
};

dx_inflater *dx__inflater_new(void)
{
	dx_inflater *d = dx__libdeflate_on() ? calloc(1, sizeof *d) : NULL;
	if (d && !(d->ld = libdeflate_alloc_decompressor())) {
		free(d);
		d = NULL;
	}
	return d;
}

void dx__inflater_free(dx_inflater *d)
{
	if (d)
		libdeflate_free_decompressor(d->ld);
	free(d);
}

int dx__inflate_whole(dx_inflater *d, const void *in, size_t in_len, void *out, size_t out_len)
{
	return libdeflate_deflate_decompress(d->ld, in, in_len, out, out_len, NULL) == LIBDEFLATE_SUCCESS
	               ? 0 : -1;
}
#else
dx_inflater *dx__inflater_new(void)
{
	return NULL;
}

void dx__inflater_free(dx_inflater *d)
{
	(void)d;
}

int dx__inflate_whole(dx_inflater *d, const void *in, size_t in_len, void *out, size_t out_len)
{
	(void)d, (void)in, (void)in_len, (void)out, (void)out_len;
	return -1;
}
#endif

struct dx_deflater {
	z_stream z;
	int zinit, level;
#ifdef DX_HAVE_LIBDEFLATE
	struct libdeflate_compressor *ld;
#endif
};

dx_deflater *dx__deflater_new(int level)
{
	dx_deflater *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->level = level;
#ifdef DX_HAVE_LIBDEFLATE
	if (dx__libdeflate_on()) {
		if (!(c->ld = libdeflate_alloc_compressor(level))) {
			free(c);
			return NULL;
		}
		return c;
	}
#endif
	if (deflateInit2(&c->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(c);
		return NULL;
	}
	c->zinit = 1;
	return c;
}

void dx__deflater_free(dx_deflater *c)
{
	if (!c)
		return;
#ifdef DX_HAVE_LIBDEFLATE
	if (c->ld)
		libdeflate_free_compressor(c->ld);
#endif
	if (c->zinit)
		deflateEnd(&c->z);
	free(c);
}

size_t dx__deflate_whole(dx_deflater *c, const void *in, size_t n, void *out, size_t cap)
{
#ifdef DX_HAVE_LIBDEFLATE
	if (c->ld)
		return libdeflate_deflate_compress(c->ld, in, n, out, cap);
#endif
	if (n > UINT32_MAX || cap > UINT32_MAX)
		return 0;
	deflateReset(&c->z);
	c->z.next_in = (unsigned char *)in;
	c->z.avail_in = (uInt)n;
	c->z.next_out = out;
	c->z.avail_out = (uInt)cap;
	return deflate(&c->z, Z_FINISH) == Z_STREAM_END ? cap - c->z.avail_out : 0;
}

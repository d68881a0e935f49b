/* codec.c: whole-buffer DEFLATE and CRC32 through libdeflate or zlib (see
 * codec.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifdef DX_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif
#ifdef DX_HAVE_ISAL
#include <isa-l.h>
#endif

#include "codec.h"
#include "docdex.h"

/* DOCDEX_CODEC=zlib turns the faster codecs off, for every stream. */
static int zlib_only;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void decide(void)
{
	const char *v = getenv("DOCDEX_CODEC");
	zlib_only = v && strcmp(v, "zlib") == 0;
}

int dx__own_inflate_on(void)
{
	pthread_once(&once, decide);
	return !zlib_only;
}

int dx__libdeflate_on(void)
{
#ifdef DX_HAVE_LIBDEFLATE
	pthread_once(&once, decide);
	return !zlib_only;
#else
	return 0;
#endif
}

int dx__isal_on(void)
{
#ifdef DX_HAVE_ISAL
	pthread_once(&once, decide);
	return !zlib_only;
#else
	return 0;
#endif
}

/* "libdeflate 1.14, ISA-L 2.30.0, docdex inflate" (what serves besides
 * zlib: the libraries the build has, and the gzip scan's own decoder), or
 * "zlib (DOCDEX_CODEC=zlib; built with ...)" when zlib serves alone. */
static char codecs_text[160];
static pthread_once_t described = PTHREAD_ONCE_INIT;

static void describe(void)
{
	char built[96] = "";
#ifdef DX_HAVE_LIBDEFLATE
	snprintf(built, sizeof built, "libdeflate %s, ", LIBDEFLATE_VERSION_STRING);
#endif
#ifdef DX_HAVE_ISAL
	size_t n = strlen(built);
	snprintf(built + n, sizeof built - n, "ISA-L %d.%d.%d, ", ISAL_MAJOR_VERSION, ISAL_MINOR_VERSION,
	         ISAL_PATCH_VERSION);
#endif
	if (zlib_only)
		snprintf(codecs_text, sizeof codecs_text, "zlib (DOCDEX_CODEC=zlib; built with %sdocdex inflate)",
		         built);
	else
		snprintf(codecs_text, sizeof codecs_text, "%sdocdex inflate", built);
}

const char *dx_codecs(void)
{
	pthread_once(&once, decide);
	pthread_once(&described, describe);
	return codecs_text;
}

/* ISA-L's first: on random 64 KiB chunks of a mapped 1 GiB file (an
 * index's first reads) it took 6.9 us a chunk against libdeflate's 9.2,
 * and on data in the cache 2.5 times as fast (64 against 26 GB/s). */
uint32_t dx__crc32(uint32_t crc, const void *p, uint64_t n)
{
#ifdef DX_HAVE_ISAL
	if (dx__isal_on())
		return crc32_gzip_refl(crc, p, n);
#endif
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

#ifdef DX_HAVE_ISAL
struct dx_raw {
	struct inflate_state st;
};

dx_raw *dx__raw_new(void)
{
	return dx__isal_on() ? malloc(sizeof(dx_raw)) : NULL;
}

void dx__raw_free(dx_raw *r)
{
	free(r);
}

int dx__raw_start(dx_raw *r, const unsigned char *dict, size_t dict_len, unsigned bits,
                  unsigned char byte)
{
	isal_inflate_init(&r->st);
	r->st.crc_flag = ISAL_DEFLATE;
	if (dict_len && isal_inflate_set_dict(&r->st, (uint8_t *)dict, (uint32_t)dict_len) != COMP_OK)
		return -1;
	/* The point's first bits are the high bits of the byte before its
	 * first whole byte: handed over as bits already read in, as zlib's
	 * inflatePrime takes them. */
	r->st.read_in = bits ? (uint64_t)(byte >> (8 - bits)) : 0;
	r->st.read_in_length = (int32_t)bits;
	return 0;
}

void dx__raw_start_member(dx_raw *r)
{
	isal_inflate_init(&r->st);
	r->st.crc_flag = ISAL_GZIP_NO_HDR_VER;
}

int dx__raw_run(dx_raw *r, const unsigned char **in, size_t *avail_in, unsigned char *out,
                size_t *avail_out)
{
	uint32_t in_n = *avail_in > UINT32_MAX ? UINT32_MAX : (uint32_t)*avail_in;
	uint32_t out_n = *avail_out > UINT32_MAX ? UINT32_MAX : (uint32_t)*avail_out;
	r->st.next_in = (uint8_t *)*in;
	r->st.avail_in = in_n;
	r->st.next_out = out;
	r->st.avail_out = out_n;
	int rc = isal_inflate(&r->st);
	*in += in_n - r->st.avail_in;
	*avail_in -= in_n - r->st.avail_in;
	*avail_out -= out_n - r->st.avail_out;
	if (rc < 0)
		return -1;
	return r->st.block_state == ISAL_BLOCK_FINISH;
}

size_t dx__raw_unused(const dx_raw *r)
{
	return r->st.read_in_length > 0 ? (size_t)r->st.read_in_length / 8 : 0;
}

int dx__raw_prefix(dx_raw *r, const unsigned char *in, size_t in_len, unsigned char *out, size_t want,
                   int end)
{
	if (in_len > UINT32_MAX || (want == 0 && !end) || want > UINT32_MAX)
		return -1;
	isal_inflate_init(&r->st);
	r->st.crc_flag = ISAL_DEFLATE;
	r->st.next_in = (uint8_t *)in;
	r->st.avail_in = (uint32_t)in_len;
	r->st.next_out = out;
	r->st.avail_out = (uint32_t)want;
	/* Every byte of the room written, and the stream ended there or not
	 * as asked (a whole block, or a part of one). */
	int rc = isal_inflate_stateless(&r->st);
	return rc == (end ? ISAL_DECOMP_OK : ISAL_OUT_OVERFLOW) && r->st.avail_out == 0 ? 0 : -1;
}
#else
dx_raw *dx__raw_new(void)
{
	return NULL;
}

void dx__raw_free(dx_raw *r)
{
	(void)r;
}

int dx__raw_start(dx_raw *r, const unsigned char *dict, size_t dict_len, unsigned bits,
                  unsigned char byte)
{
	(void)r, (void)dict, (void)dict_len, (void)bits, (void)byte;
	return -1;
}

void dx__raw_start_member(dx_raw *r)
{
	(void)r;
}

int dx__raw_run(dx_raw *r, const unsigned char **in, size_t *avail_in, unsigned char *out,
                size_t *avail_out)
{
	(void)r, (void)in, (void)avail_in, (void)out, (void)avail_out;
	return -1;
}

size_t dx__raw_unused(const dx_raw *r)
{
	(void)r;
	return 0;
}

int dx__raw_prefix(dx_raw *r, const unsigned char *in, size_t in_len, unsigned char *out, size_t want,
                   int end)
{
	(void)r, (void)in, (void)in_len, (void)out, (void)want, (void)end;
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
	/* zlib's scale ends at 9: libdeflate's 10 to 12 come out as 9. */
	if (level > 9)
		level = 9;
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

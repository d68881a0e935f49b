/* gzip sources: the decompressing scan, access points, random reads, BGZF. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "dxbench.h"
#include "buf.h"
#include "codec.h"
#include "docdex.h"
#include "gz.h"
#include "inflate.h"
#include "unit.h"

static int to_buf(void *ctx, const void *p, size_t n)
{
	return dx__buf_add(ctx, p, n);
}

/* A synthetic passage corpus of n records. */
static void corpus(dx_buf *b, uint64_t n, int kind)
{
	dxb_synth_opts o = { .kind = kind, .layout = DXB_SYN_TSV, .seed = 11, .count = n };
	dxb_writer w = { to_buf, b };
	dx_err err = { 0 };
	b->len = 0;
	CHECK(dxb_synth_corpus(&o, &w, &err) == (int64_t)n);
}

/* data[0, n) deflated at level 6 with zlib's windowBits wbits (15 + 16
 * for a gzip member, -15 for raw DEFLATE), in memory the caller frees. */
static unsigned char *deflated(const char *data, size_t n, int wbits, size_t *out_len)
{
	uLong room = compressBound(n) + 64;
	unsigned char *out = malloc(room);
	z_stream z = { 0 };
	deflateInit2(&z, 6, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)data;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)room;
	CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* Writes data as gzip members cut at the given offsets (level 6). */
static void write_gz(const char *name, const char *data, size_t n, const size_t *cuts, int ncuts)
{
	FILE *f = fopen(path(name), "wb");
	size_t at = 0;
	for (int i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : n, len;
		unsigned char *out = deflated(data + at, end - at, 15 + 16, &len);
		fwrite(out, 1, len, f);
		free(out);
		at = end;
	}
	fclose(f);
}

typedef struct scanned {
	dx_buf out, points, windows;
	int kind;
	char warning[256];
	int rc;
	dx_err err;
} scanned;

/* Whether scan packs the windows (not dx_build_opts.sparse_windows). */
static int packing;

/* Decompresses a whole file through dx_gzin, laying points every span. */
static void scan(const char *name, uint64_t span, scanned *s)
{
	memset(s, 0, sizeof *s);
	int fd = open(path(name), O_RDONLY);
	unsigned char head[18];
	ssize_t hn = pread(fd, head, sizeof head, 0);
	s->kind = dx__gz_kind(head, hn > 0 ? (size_t)hn : 0);
	dx_gzin *g = malloc(sizeof *g);
	s->rc = dx__gzin_open(g, fd, path(name), s->kind, span, &s->err);
	g->packed = packing;
	while (s->rc == 0) {
		dx__buf_reserve(&s->out, 1 << 20);
		int64_t n = dx__gzin_read(g, s->out.p + s->out.len, 1 << 20, &s->err);
		if (n <= 0) {
			s->rc = (int)n;
			break;
		}
		/* The CRCs, as the scan's parsing thread checks them. */
		s->rc = dx__gzin_check(g, s->out.p + s->out.len, (size_t)n, &s->err);
		s->out.len += (size_t)n;
	}
	if (s->rc == 0)
		s->rc = dx__gzin_settle(g, &s->err);
	s->points = g->points;
	s->windows = g->windows;
	g->points = g->windows = (dx_buf){ 0 };
	snprintf(s->warning, sizeof s->warning, "%s", g->warning);
	dx__gzin_close(g);
	free(g);
	close(fd);
}

static void free_scanned(scanned *s)
{
	dx__buf_free(&s->out);
	dx__buf_free(&s->points);
	dx__buf_free(&s->windows);
}

/* Reads ranges through the points and compares them with the original;
 * also 6000 bytes around each of the given offsets, from a fresh start. */
static void reads_across(const char *name, const scanned *s, const char *want, size_t n,
                         const size_t *across, int nacross)
{
	struct stat st;
	stat(path(name), &st);
	int fd = open(path(name), O_RDONLY);
	dx_gzsrc g;
	dx_err err = { 0 };
	const struct ddx_point *pts = (const void *)s->points.p;
	uint64_t npts = s->points.len / sizeof *pts;
	CHECK(dx__gzsrc_open(&g, fd, path(name), (uint64_t)st.st_size, n, pts, npts,
	                     (const unsigned char *)s->windows.p, s->windows.len, &err) == 0);
	dx_rng r;
	dx_rng_seed(&r, 3);
	int bad = 0;
	for (int i = 0; i < 300 && !bad; i++) {
		/* Random ranges, some across a point, some right at one, some forward. */
		uint64_t off = dx_rng_below(&r, n);
		if (i % 3 == 1 && npts > 1)
			off = pts[dx_rng_below(&r, npts)].uoff - (i % 2 ? 0 : 100);
		if (off >= n)
			off = n - 1;
		uint64_t len = 1 + dx_rng_below(&r, n - off < 200000 ? n - off : 200000);
		const char *data;
		/* The compressed bytes with pread and in place in the mapping,
		 * in turns of two reads, so that a stream that goes on from the
		 * read before changes from one to the other. */
		g.via_map = (i >> 1) & 1;
		if (dx__gzsrc_read(&g, off, len, &data, &err) != 0 || memcmp(data, want + off, len) != 0) {
			fprintf(stderr, "%s: read %llu+%llu wrong (%s)\n", name, (unsigned long long)off,
			        (unsigned long long)len, err.what);
			bad = 1;
		}
	}
	for (int k = 0; k < nacross && !bad; k++) {
		const char *data;
		uint64_t off = across[k] > 3000 ? across[k] - 3000 : 0;
		g.live = 0;
		g.via_map = k & 1;
		if (dx__gzsrc_read(&g, off, 6000, &data, &err) != 0 || memcmp(data, want + off, 6000) != 0) {
			fprintf(stderr, "%s: read across %zu wrong (%s)\n", name, across[k], err.what);
			bad = 1;
		}
	}
	CHECK(!bad);
	/* Past the end: refused, not read. */
	const char *data;
	CHECK(dx__gzsrc_read(&g, n - 1, 2, &data, &err) == DX_ECORRUPT);
	dx__gzsrc_close(&g);
	close(fd);
}

static void reads_back(const char *name, const scanned *s, const char *want, size_t n)
{
	reads_across(name, s, want, n, NULL, 0);
}

static void single_member(void)
{
	dx_buf c = { 0 };
	corpus(&c, 20000, DXB_SYN_PASSAGES);
	write_gz("one.gz", c.p, c.len, NULL, 0);
	/* Sparse windows, then packed ones: the same points, each read back. */
	uint64_t stored[2] = { 0, 0 }, npoints = 0;
	for (packing = 0; packing < 2; packing++) {
		scanned s;
		scan("one.gz", 256 << 10, &s);
		CHECK_EQ(s.rc, 0);
		CHECK_EQ(s.kind, DX_SOURCE_GZIP);
		CHECK(s.out.len == c.len && memcmp(s.out.p, c.p, c.len) == 0);
		const struct ddx_point *p = (const void *)s.points.p;
		uint64_t n = s.points.len / sizeof *p;
		/* A member point at 0, then block boundaries, point i at the
		 * first after i spans (next_due: blocks are shorter here). */
		CHECK(n > 10);
		if (n == 0) { /* the scan failed: nothing more to look at */
			free_scanned(&s);
			break;
		}
		CHECK(!packing || n == npoints);
		npoints = n;
		CHECK(p[0].uoff == 0 && (p[0].flags & DDX_POINT_MEMBER));
		/* The dictionary is the first point's window. */
		CHECK(n > 16 && p[0].flags == (packing ? DDX_POINT_MEMBER | DDX_POINT_DICT : DDX_POINT_MEMBER));
		CHECK(!packing || p[0].window_len == DDX_WINDOW);
		uint64_t full = 0;
		for (uint64_t i = 1; i < n; i++) {
			CHECK(p[i].uoff >= i * (256 << 10) && p[i].uoff > p[i - 1].uoff);
			/* Packed, and from the 16th on with the dictionary. */
			uint8_t want = packing ? DDX_POINT_PACKED | (i >= 16 ? DDX_POINT_DICT : 0) : 0;
			CHECK(p[i].flags == want && p[i].bits < 8 && p[i].window_len == DDX_WINDOW);
			stored[packing] += p[i].window_clen;
			full += compressBound(DDX_WINDOW) / 3;
		}
		/* Sparse windows take well under what whole ones would (about
		 * a third of 32 KiB each, compressed). */
		CHECK(stored[packing] < full * 3 / 4);
		reads_back("one.gz", &s, c.p, c.len);
		free_scanned(&s);
	}
	packing = 0;
	/* Packed ones under sparse ones (0.73 of them for the generated
	 * passages' .gz of 1 GiB). */
	CHECK(stored[1] < stored[0] * 85 / 100);
	dx__buf_free(&c);
}

/* Members of every size, tiny ones included: points at member starts and
 * reads that run from inside one member into the next. */
static void multi_member(void)
{
	dx_buf c = { 0 };
	corpus(&c, 8000, DXB_SYN_PASSAGES);
	size_t cuts[] = { 10, 11, 300000, 300100, 1000000, 2500000 };
	write_gz("multi.gz", c.p, c.len, cuts, 6);
	scanned s;
	/* With a long span, the points are the members at least 64 KiB apart. */
	scan("multi.gz", 4 << 20, &s);
	CHECK_EQ(s.rc, 0);
	CHECK(s.out.len == c.len && memcmp(s.out.p, c.p, c.len) == 0);
	const struct ddx_point *p = (const void *)s.points.p;
	uint64_t want[] = { 0, 300000, 1000000, 2500000 };
	CHECK_EQ(s.points.len / sizeof *p, 4);
	for (int i = 0; i < 4 && (size_t)i < s.points.len / sizeof *p; i++)
		CHECK(p[i].uoff == want[i] && (p[i].flags & DDX_POINT_MEMBER));
	reads_back("multi.gz", &s, c.p, c.len);
	free_scanned(&s);
	/* With a short one, reads also start inside members and run on into the
	 * next: across every member boundary. */
	scan("multi.gz", 64 << 10, &s);
	CHECK_EQ(s.rc, 0);
	reads_across("multi.gz", &s, c.p, c.len, cuts + 2, 4);
	free_scanned(&s);
	dx__buf_free(&c);
}

static void damage(void)
{
	dx_buf c = { 0 };
	corpus(&c, 3000, DXB_SYN_PASSAGES);
	write_gz("d.gz", c.p, c.len, NULL, 0);
	struct stat st;
	stat(path("d.gz"), &st);
	scanned s;

	CHECK(truncate(path("d.gz"), st.st_size / 2) == 0);
	scan("d.gz", 0, &s);
	CHECK(s.rc == DX_EFORMAT && strstr(s.err.what, "truncated"));
	free_scanned(&s);

	write_gz("d.gz", c.p, c.len, NULL, 0);
	int fd = open(path("d.gz"), O_RDWR);
	unsigned char x = 0x55;
	CHECK(pwrite(fd, &x, 1, st.st_size - 6) == 1); /* inside the CRC */
	close(fd);
	scan("d.gz", 0, &s);
	CHECK(s.rc == DX_EFORMAT && strstr(s.err.what, "CRC mismatch"));
	free_scanned(&s);

	write_gz("d.gz", c.p, c.len, NULL, 0);
	FILE *f = fopen(path("d.gz"), "ab");
	fputs("trailing words", f);
	fclose(f);
	scan("d.gz", 0, &s);
	CHECK_EQ(s.rc, 0);
	CHECK(s.out.len == c.len);
	CHECK(strstr(s.warning, "garbage after the last gzip member") != NULL);
	free_scanned(&s);
	dx__buf_free(&c);

	unsigned char not_gz[] = "plain\ttext\n";
	CHECK_EQ(dx__gz_kind(not_gz, sizeof not_gz), 0);
}

/* The BGZF writer: valid gzip, blocks of at most 64 KiB that end at the
 * last record that fits or are full, every block a point. */
static void bgzf(void)
{
	dx_buf c = { 0 };
	corpus(&c, 3000, DXB_SYN_DOCUMENTS);
	FILE *f = fopen(path("docs.tsv"), "wb");
	fwrite(c.p, 1, c.len, f);
	fclose(f);
	dx_build_opts o;
	dx_build_opts_init(&o);
	dx_bgzf_report rep;
	dx_err err = { 0 };
	CHECK(dx_bgzf_write(path("docs.tsv"), path("docs.bgz"), &o, 6, &rep, &err) == 0);
	CHECK_EQ(rep.records, 3000);
	CHECK_EQ(rep.bytes_in, c.len);
	scanned s;
	scan("docs.bgz", DX_DEFAULT_SPAN, &s);
	CHECK_EQ(s.rc, 0);
	CHECK_EQ(s.kind, DX_SOURCE_BGZF);
	CHECK(s.out.len == c.len && memcmp(s.out.p, c.p, c.len) == 0);
	const struct ddx_point *p = (const void *)s.points.p;
	uint64_t n = s.points.len / sizeof *p;
	CHECK_EQ(n, rep.blocks + 1); /* and the empty block at the end */
	for (uint64_t i = 1; i + 1 < n; i++) {
		uint64_t u = p[i].uoff;
		CHECK(p[i].flags & DDX_POINT_MEMBER);
		CHECK(u - p[i - 1].uoff <= 0xff00);
		/* A block that ends at a record has no room for the next one;
		 * one that ends inside a record is full (tests/gzip.bats checks
		 * the 4 KiB that decide between the two). */
		uint64_t room_end = p[i - 1].uoff + 0xff00 < c.len ? p[i - 1].uoff + 0xff00 : c.len;
		if (c.p[u - 1] == '\n')
			CHECK(memchr(c.p + u, '\n', room_end - u) == NULL);
		else
			CHECK_EQ(u - p[i - 1].uoff, 0xff00);
	}
	reads_back("docs.bgz", &s, c.p, c.len);
	free_scanned(&s);
	dx__buf_free(&c);
}

/* What a build's progress callback is told: the last figures, and whether
 * any call had done past total or going back. */
typedef struct seen {
	uint64_t done, total, calls;
	int bad;
} seen;

static int note_progress(void *ctx, uint64_t done, uint64_t total)
{
	seen *s = ctx;
	s->bad |= done > total || done < s->done;
	s->done = done;
	s->total = total;
	s->calls++;
	return 0;
}

/* Progress counts uncompressed bytes, a gzip file's too (its compressed
 * rate looked slow): at the end, done and total are the corpus's size. */
static void progress_uncompressed(void)
{
	dx_buf c = { 0 };
	corpus(&c, 20000, DXB_SYN_PASSAGES);
	write_gz("progress.gz", c.p, c.len, NULL, 0);
	dx_build_opts o;
	dx_build_opts_init(&o);
	seen s = { 0 };
	o.progress = note_progress;
	o.progress_ctx = &s;
	const char *files[] = { path("progress.gz") };
	dx_build_report rep;
	dx_err err = { 0 };
	char out[4096];
	snprintf(out, sizeof out, "%s", path("progress.ddx"));
	CHECK_EQ(dx_index_build(files, 1, out, &o, &rep, &err), 0);
	CHECK(s.calls > 0 && !s.bad);
	CHECK_EQ(s.done, c.len);
	CHECK_EQ(s.total, c.len);
	dx__buf_free(&c);
}

/* A part of a block inflated from its start by ISA-L (dx__raw_prefix):
 * exactly the bytes asked for, cut wherever, matches included; a whole
 * block only when the stream ends there; data cut short refused. */
static void raw_prefix(void)
{
	dx_raw *r = dx__raw_new();
	if (!r) {
		CHECK(!dx__isal_on());
		return;
	}
	dx_buf c = { 0 };
	corpus(&c, 400, DXB_SYN_DOCUMENTS);
	/* As much as a block of bgzip's holds. */
	size_t n = c.len < 65280 ? c.len : 65280, in_len;
	unsigned char *in = deflated(c.p, n, -15, &in_len);
	unsigned char *out = malloc(n + 1);
	int bad = 0;
	for (size_t want = 1; want < n; want += want < 300 ? 1 : 331) {
		memset(out, 0, n + 1);
		if (dx__raw_prefix(r, in, in_len, out, want, 0) != 0 || memcmp(out, c.p, want) != 0 || out[want])
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(dx__raw_prefix(r, in, in_len, out, n, 1), 0);
	CHECK(memcmp(out, c.p, n) == 0);
	CHECK_EQ(dx__raw_prefix(r, in, in_len, out, n, 0), -1);     /* it ends there */
	CHECK_EQ(dx__raw_prefix(r, in, in_len, out, n - 1, 1), -1); /* it goes on */
	CHECK_EQ(dx__raw_prefix(r, in, in_len / 2, out, n - 1, 0), -1);
	CHECK_EQ(dx__raw_prefix(r, in, in_len, out, 0, 0), -1);
	free(out);
	free(in);
	dx__raw_free(r);
	dx__buf_free(&c);
}

/* dx__crc32, whichever library serves it, is zlib's CRC-32: of every
 * length up to 300 at each alignment of a word, of 1 MiB whole and in two
 * parts chained, and from a CRC given. */
static void crc32_as_zlib(void)
{
	enum { BIG = 1 << 20 };
	unsigned char *b = malloc(BIG);
	CHECK(b != NULL);
	if (!b)
		return;
	dx_rng r;
	dx_rng_seed(&r, 5);
	for (size_t i = 0; i < BIG; i++)
		b[i] = (unsigned char)dx_rng_next(&r);
	int bad = 0;
	for (size_t at = 0; at < 8; at++)
		for (size_t n = 0; n <= 300; n++)
			bad += dx__crc32(0, b + at, n) != (uint32_t)crc32(0, b + at, (uInt)n);
	CHECK_EQ(bad, 0);
	uint32_t whole = (uint32_t)crc32(0, b, BIG);
	CHECK_EQ(dx__crc32(0, b, BIG), whole);
	CHECK_EQ(dx__crc32(dx__crc32(0, b, 12345), b + 12345, BIG - 12345), whole);
	CHECK_EQ(dx__crc32(0x12345678, b, 1000), (uint32_t)crc32(0x12345678, b, 1000));
	free(b);
}

int main(void)
{
	CHECK(unit_mkdir());
	progress_uncompressed();
	single_member();
	multi_member();
	damage();
	bgzf();
	raw_prefix();
	crc32_as_zlib();
	CHECK(unit_rmdir());
	UNIT_DONE();
}

/*
 * scan.c: the scan of a corpus file from start to end, record by record,
 * for building an index and for verifying one.  The file is read in blocks
 * (as wc does: no page-table work, and a file cut short while it is read
 * is an error, not a crash), by a second thread a few blocks ahead
 * (readahead.c); the format's next() finds records in each block, and an
 * unfinished record moves on to the next block.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "fileutil.h"
#include "format.h"
#include "gz.h"
#include "readahead.h"
#include "scan.h"

/* Chunks of 1 MiB, each with room for an unfinished record of 256 KiB
 * before it. */
enum { READ_SIZE = 1 << 20, HEADROOM = 1 << 18 };

void dx__place(char *out, size_t outsz, const char *path, uint64_t offset)
{
	/* zlib's gzread reads plain files as they are and gzip ones (every
	 * member) uncompressed: lines are counted in the content either way. */
	snprintf(out, outsz, "%s", path);
	gzFile f = gzopen(path, "rb");
	char *buf = malloc(1 << 16);
	uint64_t line = 1, at = 0;
	int n = 0;
	while (f && buf && at < offset && (n = gzread(f, buf, 1 << 16)) > 0) {
		size_t want = offset - at < (uint64_t)n ? (size_t)(offset - at) : (size_t)n;
		for (char *p = buf, *e = buf + want; (p = memchr(p, '\n', (size_t)(e - p))); p++)
			line++;
		at += (uint64_t)n;
	}
	if (f && buf && n >= 0)
		snprintf(out, outsz, "%s:%llu", path, (unsigned long long)line);
	free(buf);
	if (f)
		gzclose(f);
}

/* A file of another kind (a program, a tar archive, UTF-16 text) reads as
 * TSV when its first line holds a tab, and would be indexed as a few
 * garbled records: a file's first record whose first column holds a
 * control byte says so.  No id or title starts a text corpus so; NUL
 * bytes later in a record are its content, and served as they are. */
static int refuse_binary(const dx_scan *s, const char *path, const char *rec, size_t len,
                         uint64_t offset, dx_err *err)
{
	if (s->pm->format != DX_FMT_TSV)
		return 0;
	for (size_t i = 0; i < len && rec[i] != '\t'; i++) {
		unsigned char c = (unsigned char)rec[i];
		if (c < 0x20 || c == 0x7f) {
			char place[1100];
			dx__place(place, sizeof place, path, offset);
			return dx__fail(err, DX_EFORMAT, 0, place,
			                "not a text corpus: a control byte (0x%02x) in the first record's "
			                "first column (a binary file, or UTF-16?)", c);
		}
	}
	return 0;
}

/* Decides the format and the parameters that the first record fixes. */
static int first_bytes(dx_scan *s, const char *path, const char *p, size_t n, dx_err *err)
{
	int f = dx__format_detect(p, n);
	if (f == DX_FMT_AUTO)
		return n ? dx__fail(err, DX_EFORMAT, 0, path,
		                    "cannot tell the corpus format, give --format tsv, jsonl or trec")
		         : 0;
	if (s->pm->format == DX_FMT_AUTO)
		s->pm->format = f;
	else if (f != s->pm->format)
		return dx__fail(err, DX_EFORMAT, 0, path, "file in %s format, unlike the first file (%s)",
		                dx_format_name(f), dx_format_name(s->pm->format));
	return 0;
}

static int complete_params(dx_scan *s, const char *path, const char *rec, size_t len,
                           uint64_t offset, dx_err *err)
{
	dx_params *pm = s->pm;
	s->complete = 0;
	if (pm->format == DX_FMT_JSONL && !pm->id_field[0]) {
		const char *f = dx__jsonl_default_id_field(rec, len);
		if (!f) {
			/* A record that is no JSON object says so rather than lacking an id. */
			char place[1100];
			const char *id, *bad;
			size_t n;
			dx_buf tmp = { 0 };
			int malformed = dx__fmt_jsonl.id(pm, rec, len, &tmp, &id, &n, &bad) == DX_EFORMAT;
			dx__buf_free(&tmp);
			dx__place(place, sizeof place, path, offset);
			if (malformed)
				return dx__fail(err, DX_EFORMAT, 0, place, "%s", bad);
			return dx__fail(err, DX_ENOID, 0, place,
			                "no id field (docid, _id, id, pid or doc_id) in the first record, "
			                "give --id-field");
		}
		snprintf(pm->id_field, sizeof pm->id_field, "%s", f);
	}
	if (pm->format == DX_FMT_TSV && !pm->columns[0] && pm->id_column == 1)
		snprintf(pm->columns, sizeof pm->columns, "%s", dx__tsv_default_columns(rec, len));
	return 0;
}

/* Opens the input of a scan: the file, decompressed when it is gzip. */
static int open_input(dx_scan *s, const char *path, int fd, dx_gzin *gz, dx_err *err)
{
	unsigned char head[18];
	ssize_t n = pread(fd, head, sizeof head, 0);
	if (n < 0)
		return dx__fail_sys(err, path, "cannot read");
	if (dx__refuse_compressed(fd, path, err) < 0)
		return err->code;
	s->kind = dx__gz_kind(head, (size_t)n);
	if (!s->kind) {
		/* An empty file is empty whatever its name (MS MARCO v2.1 has empty shards). */
		size_t len = strlen(path);
		if (n > 0 && ((len > 3 && strcmp(path + len - 3, ".gz") == 0) ||
		    (len > 4 && strcmp(path + len - 4, ".bgz") == 0)))
			return dx__fail(err, DX_EFORMAT, 0, path, "not a gzip file (no gzip header at byte 0), "
			                                          "though named so");
		s->kind = DX_SOURCE_PLAIN;
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		return 0;
	}
	int rc = dx__gzin_open(gz, fd, path, s->kind, s->span, err);
	gz->packed = s->packed;
	return rc;
}

typedef struct input {
	int kind;
	int fd;
	dx_gzin *gz;
	const char *path;
	uint64_t read;        /* plain file bytes read (the reading thread's own) */
} input;

/* The readahead thread's fill: the file's bytes, inflated when gzip. */
static int64_t read_input(void *ctx, char *buf, size_t cap, uint64_t *pos, dx_err *err)
{
	input *in = ctx;
	if (in->kind != DX_SOURCE_PLAIN) {
		int64_t n = dx__gzin_read(in->gz, buf, cap, err);
		*pos = in->gz->in_off;
		return n;
	}
	for (;;) {
		ssize_t n = read(in->fd, buf, cap);
		if (n >= 0) {
			*pos = in->read += (uint64_t)n;
			return n;
		}
		if (errno != EINTR)
			return dx__fail_sys(err, in->path, "cannot read");
	}
}

/*
 * Progress in uncompressed bytes, as dx_progress_fn has it: a compressed
 * file's total is projected from its ratio so far (the gzip trailer's
 * size is modulo 4 GiB, and one member's only), the files after it at
 * their size on disk.  pos of the file's fsize bytes read; done_before,
 * the file bytes of the files before.  Non-zero to cancel.
 */
static int report(dx_scan *s, uint64_t pos, uint64_t fsize, uint64_t done_before)
{
	/* The files after this one, at their size on disk (none where the
	 * files grew since the total was taken). */
	uint64_t left = s->total > done_before ? s->total - done_before : 0;
	uint64_t later = left > fsize ? left - fsize : 0;
	uint64_t est = fsize;
	if (s->kind != DX_SOURCE_PLAIN && pos)
		est = (uint64_t)((double)s->usize / (double)pos * (double)fsize);
	if (est < s->usize)
		est = s->usize;
	return s->progress(s->progress_ctx, s->udone + s->usize, s->udone + est + later);
}

int dx__scan_file(dx_scan *s, const char *path, uint32_t file, dx_err *err)
{
	dx__buf_free(&s->points);
	dx__buf_free(&s->windows);
	s->warning[0] = '\0';
	s->usize = 0;
	dx_buf carry = { 0 }, scratch = { 0 };
	dx_readahead ra;
	int started = 0;
	int rc = 0, fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dx__fail_sys(err, path, "cannot open");
	dx_gzin *gz = malloc(sizeof *gz);
	if (!gz) {
		close(fd);
		return dx__fail_nomem(err);
	}
	gz->in = NULL;
	input in = { 0, fd, gz, path, 0 };
	struct stat st;
	uint64_t fsize = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	if ((rc = open_input(s, path, fd, gz, err)) < 0)
		goto out;
	in.kind = s->kind; /* before the reading thread starts */
	if ((rc = dx__ra_start(&ra, read_input, &in, HEADROOM, READ_SIZE, err)) < 0)
		goto out;
	started = 1;
	uint64_t done_before = s->done;
	const dx_format_ops *ops = NULL;
	uint64_t base = 0;      /* file offset of the window's first byte */
	size_t hint = 0;        /* bytes after the unconsumed start already searched in vain */
	int eof = 0, first = 1, first_rec = 1;
	while (!eof) {
		dx_chunk *c = dx__ra_next(&ra);
		if (c->rc < 0) {
			*err = c->err;
			rc = c->rc;
			goto out;
		}
		/* The members' CRCs over these bytes, before they are parsed:
		 * the inflating thread left them to this one. */
		if (s->kind != DX_SOURCE_PLAIN && (rc = dx__gzin_check(gz, c->mem + HEADROOM, c->len, err)) < 0)
			goto out;
		eof = c->last;
		s->usize += c->len;
		s->done = done_before + c->pos;
		if (s->progress && report(s, c->pos, fsize, done_before)) {
			rc = dx__fail(err, DX_ECANCELED, 0, path, "interrupted");
			goto out;
		}
		/* The window: the unfinished record of the last chunk, in this
		 * chunk's headroom, then its data; or, for a record longer than
		 * the headroom, everything gathered in carry. */
		char *w;
		size_t wlen;
		if (carry.len <= HEADROOM) {
			w = c->mem + HEADROOM - carry.len;
			if (carry.len)
				memcpy(w, carry.p, carry.len);
			wlen = carry.len + c->len;
		} else {
			if (carry.len > DDX_MAX_RECORD) {
				char most[32];
				rc = dx__fail(err, DX_ELIMIT, 0, path, "a record longer than %s, the most "
				              "one may hold, at byte %llu",
				              dx_format_bytes(DDX_MAX_RECORD, most, sizeof most),
				              (unsigned long long)base);
				goto out;
			}
			if (dx__buf_add(&carry, c->mem + HEADROOM, c->len) < 0) {
				rc = dx__fail_nomem(err);
				goto out;
			}
			w = carry.p;
			wlen = carry.len;
		}
		size_t start = 0;
		if (first) {
			/* The first chunk tells the format; a UTF-8 byte order mark is no record. */
			first = 0;
			if (s->detect && (rc = first_bytes(s, path, w, wlen, err)) < 0)
				goto out;
			if (wlen >= 3 && memcmp(w, "\xef\xbb\xbf", 3) == 0)
				start = 3;
			if (wlen == 0)
				goto end; /* an empty file holds no records, in any format */
			if (!(ops = dx__format_ops(s->pm->format))) {
				rc = dx__fail(err, DX_EINVAL, 0, path, "no corpus format given");
				goto out;
			}
		}
		for (;;) {
			const char *rec, *next;
			size_t len;
			int r = ops->next(w + start, w + wlen, eof, &hint, &rec, &len, &next);
			start = (size_t)(next - w);
			if (r == 0)
				break;
			dx_scan_item it = { .file = file, .offset = base + (uint64_t)(rec - w),
			                    .length = len, .rec = rec };
			if (r < 0) {
				it.bad = DX_EFORMAT;
				it.why = "unterminated record at the end of the file";
				start = wlen;
			} else {
				if (first_rec && (rc = refuse_binary(s, path, rec, len, it.offset, err)) < 0)
					goto out;
				first_rec = 0;
				if (s->complete && (rc = complete_params(s, path, rec, len, it.offset, err)) < 0)
					goto out;
				scratch.len = 0;
				it.bad = ops->id(s->pm, rec, len, &scratch, &it.id, &it.id_len, &it.why);
			}
			if ((rc = s->on_record(s->ctx, &it, err)) < 0)
				goto out;
		}
		/* The access points the reading thread laid, stored here, off
		 * the inflate's path. */
		if (s->kind != DX_SOURCE_PLAIN && (rc = dx__gzin_settle(gz, err)) < 0)
			goto out;
		/* Hand over what was consumed (all of it at the end), and keep the
		 * rest before the chunk goes back. */
		size_t give = eof ? wlen : start;
		if (s->on_bytes && give && (rc = s->on_bytes(s->ctx, w, give, err)) < 0)
			goto out;
		base += start;
		if (w == carry.p) {
			memmove(carry.p, carry.p + start, wlen - start);
			carry.len = wlen - start;
		} else {
			carry.len = 0;
			if (dx__buf_add(&carry, w + start, wlen - start) < 0) {
				rc = dx__fail_nomem(err);
				goto out;
			}
		}
	}
end:
	dx__ra_stop(&ra);
	started = 0;
	s->done = done_before + fsize;
	s->udone += s->usize;
	/* The file's projection replaced by what it held, once it is read. */
	if (rc == 0 && s->progress)
		(void)s->progress(s->progress_ctx, s->udone,
		                  s->udone + (s->total > s->done ? s->total - s->done : 0));
	if (s->kind != DX_SOURCE_PLAIN) {
		/* The points and windows go to the caller; the warning too. */
		if ((rc = dx__gzin_settle(gz, err)) < 0)
			goto out;
		s->points = gz->points;
		s->windows = gz->windows;
		gz->points = gz->windows = (dx_buf){ 0 };
		snprintf(s->warning, sizeof s->warning, "%s", gz->warning);
	}
out:
	if (started)
		dx__ra_stop(&ra);
	dx__buf_free(&carry);
	dx__buf_free(&scratch);
	dx__gzin_close(gz);
	free(gz);
	close(fd);
	return rc;
}

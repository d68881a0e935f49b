/*
 * scan.c: the scan of a corpus file from start to end, record by record,
 * for building an index and for verifying one.  The file is read in blocks
 * into one buffer (as wc does: no page-table work, and a file cut short
 * while it is read is an error, not a crash); the format's next() finds
 * records in it, and the unfinished tail moves to the front before the
 * next read.  The buffer grows only when one record is larger than it.
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
#include "format.h"
#include "gz.h"
#include "scan.h"

enum { READ_SIZE = 1 << 20 };

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
	return dx__gzin_open(gz, fd, path, s->kind, s->span, err);
}

static int64_t read_input(dx_scan *s, int fd, dx_gzin *gz, char *buf, size_t cap, const char *path,
                          dx_err *err)
{
	if (s->kind != DX_SOURCE_PLAIN)
		return dx__gzin_read(gz, buf, cap, err);
	for (;;) {
		ssize_t n = read(fd, buf, cap);
		if (n >= 0)
			return n;
		if (errno != EINTR)
			return dx__fail_sys(err, path, "cannot read");
	}
}

int dx__scan_file(dx_scan *s, const char *path, uint32_t file, dx_err *err)
{
	dx__buf_free(&s->points);
	dx__buf_free(&s->windows);
	s->warning[0] = '\0';
	s->usize = 0;
	dx_buf buf = { 0 }, scratch = { 0 };
	int rc = 0, fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dx__fail_sys(err, path, "cannot open");
	dx_gzin *gz = malloc(sizeof *gz);
	if (!gz) {
		close(fd);
		return dx__fail_nomem(err);
	}
	gz->in = NULL;
	if ((rc = open_input(s, path, fd, gz, err)) < 0)
		goto out;
	uint64_t done_before = s->done;
	const dx_format_ops *ops = NULL;
	uint64_t base = 0;      /* file offset of buf.p[0] */
	size_t start = 0;       /* where the unconsumed bytes start in buf */
	size_t hint = 0;        /* bytes after start already searched in vain */
	int eof = 0, first = 1;
	if (dx__buf_reserve(&buf, READ_SIZE) < 0) {
		rc = dx__fail_nomem(err);
		goto out;
	}
	while (!eof) {
		/* Drop what was consumed; grow only for a record larger than the buffer. */
		if (s->on_bytes && start && (rc = s->on_bytes(s->ctx, buf.p, start, err)) < 0)
			goto out;
		memmove(buf.p, buf.p + start, buf.len - start);
		base += start;
		buf.len -= start;
		start = 0;
		if (buf.cap - buf.len < READ_SIZE / 2 && dx__buf_reserve(&buf, READ_SIZE) < 0) {
			rc = dx__fail_nomem(err);
			goto out;
		}
		int64_t n = read_input(s, fd, gz, buf.p + buf.len, buf.cap - buf.len, path, err);
		if (n < 0) {
			rc = (int)n;
			goto out;
		}
		eof = n == 0;
		buf.len += (size_t)n;
		s->usize += (uint64_t)n;
		/* Progress counts file bytes, compressed or not. */
		s->done = done_before + (s->kind == DX_SOURCE_PLAIN ? s->usize : gz->in_off);
		if (s->progress && s->progress(s->progress_ctx, s->done, s->total)) {
			rc = dx__fail(err, DX_ECANCELED, 0, path, "interrupted");
			goto out;
		}
		if (first) {
			/* The first block tells the format; a UTF-8 byte order mark is no record. */
			first = 0;
			if (s->detect && (rc = first_bytes(s, path, buf.p, buf.len, err)) < 0)
				goto out;
			if (buf.len >= 3 && memcmp(buf.p, "\xef\xbb\xbf", 3) == 0)
				start = 3;
			if (buf.len == 0)
				goto out; /* an empty file holds no records, in any format */
			if (!(ops = dx__format_ops(s->pm->format))) {
				rc = dx__fail(err, DX_EINVAL, 0, path, "no corpus format given");
				goto out;
			}
		}
		for (;;) {
			const char *rec, *next;
			size_t len;
			int r = ops->next(buf.p + start, buf.p + buf.len, eof, &hint, &rec, &len, &next);
			start = (size_t)(next - buf.p);
			if (r == 0)
				break;
			dx_scan_item it = { .file = file, .offset = base + (uint64_t)(rec - buf.p),
			                    .length = len, .rec = rec };
			if (r < 0) {
				it.bad = DX_EFORMAT;
				it.why = "unterminated record at the end of the file";
				start = buf.len;
			} else {
				if (s->complete && (rc = complete_params(s, path, rec, len, it.offset, err)) < 0)
					goto out;
				scratch.len = 0;
				it.bad = ops->id(s->pm, rec, len, &scratch, &it.id, &it.id_len, &it.why);
			}
			if ((rc = s->on_record(s->ctx, &it, err)) < 0)
				goto out;
		}
	}
	struct stat st;
	if (fstat(fd, &st) == 0)
		s->done = done_before + (uint64_t)st.st_size;
	/* What no record took (blank lines, text between TREC documents). */
	if (s->on_bytes && buf.len && (rc = s->on_bytes(s->ctx, buf.p, buf.len, err)) < 0)
		goto out;
	if (s->kind != DX_SOURCE_PLAIN) {
		/* The points and windows go to the caller; the warning too. */
		s->points = gz->points;
		s->windows = gz->windows;
		gz->points = gz->windows = (dx_buf){ 0 };
		snprintf(s->warning, sizeof s->warning, "%s", gz->warning);
	}
out:
	dx__buf_free(&buf);
	dx__buf_free(&scratch);
	dx__gzin_close(gz);
	free(gz);
	close(fd);
	return rc;
}

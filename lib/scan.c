/*
 * scan.c: the scan of a corpus file from start to end, record by record,
 * for building an index and for verifying one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "format.h"
#include "scan.h"

void dx__place(char *out, size_t outsz, const char *path, uint64_t offset)
{
	snprintf(out, outsz, "%s", path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char *buf = malloc(1 << 16);
	uint64_t line = 1, at = 0;
	ssize_t n = 0;
	while (buf && at < offset && (n = read(fd, buf, 1 << 16)) > 0) {
		size_t want = offset - at < (uint64_t)n ? (size_t)(offset - at) : (size_t)n;
		for (char *p = buf, *e = buf + want; (p = memchr(p, '\n', (size_t)(e - p))); p++)
			line++;
		at += (uint64_t)n;
	}
	if (buf && n >= 0)
		snprintf(out, outsz, "%s:%llu", path, (unsigned long long)line);
	free(buf);
	close(fd);
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

int dx__scan_file(dx_scan *s, const char *path, uint32_t file, dx_err *err)
{
	int rc = 0, fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t size = 0;
	const char *map = NULL;
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = dx__fail_sys(err, path, "cannot open");
		goto out;
	}
	/* A plain file is scanned through a mapping: no copy, and every record
	 * is complete, so the formats never ask for more. */
	size = (size_t)st.st_size;
	if (size) {
		void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			rc = dx__fail_sys(err, path, "cannot map");
			goto out;
		}
		map = m;
		madvise(m, size, MADV_SEQUENTIAL);
	}
	if (s->detect && (rc = first_bytes(s, path, map, size < (1u << 20) ? size : (1u << 20), err)) < 0)
		goto out;
	const dx_format_ops *ops = dx__format_ops(s->pm->format);
	if (!size)
		goto out; /* an empty file holds no records, in any format */
	if (!ops) {
		rc = dx__fail(err, DX_EINVAL, 0, path, "no corpus format given");
		goto out;
	}
	dx_buf scratch = { 0 };
	const char *p = map, *end = map + size;
	size_t hint = 0;
	if (size >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3; /* a UTF-8 byte order mark is no record */
	/* Progress every 64 MiB or so, not every record. */
	const char *report_at = p + (64u << 20);
	for (;;) {
		const char *rec, *next;
		size_t len;
		int r = ops->next(p, end, 1, &hint, &rec, &len, &next);
		if (r == 0)
			break;
		p = next;
		dx_scan_item it = { .file = file, .offset = (uint64_t)(rec - map), .length = len, .rec = rec };
		if (r < 0) {
			it.bad = DX_EFORMAT;
			it.why = "unterminated record at the end of the file";
			p = end;
		} else {
			if (s->complete && (rc = complete_params(s, path, rec, len, it.offset, err)) < 0)
				break;
			scratch.len = 0;
			it.bad = ops->id(s->pm, rec, len, &scratch, &it.id, &it.id_len, &it.why);
		}
		if ((rc = s->on_record(s->ctx, &it, err)) < 0)
			break;
		if (p >= report_at) {
			report_at = p + (64u << 20);
			if (s->progress && s->progress(s->progress_ctx, s->done + (uint64_t)(p - map), s->total)) {
				rc = dx__fail(err, DX_ECANCELED, 0, path, "interrupted");
				break;
			}
		}
	}
	dx__buf_free(&scratch);
	if (rc == 0) {
		s->done += size;
		if (s->progress && s->progress(s->progress_ctx, s->done, s->total))
			rc = dx__fail(err, DX_ECANCELED, 0, path, "interrupted");
	}
out:
	if (map)
		munmap((void *)map, size);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* textfile.c: reading plain or gzipped text files line by line. */
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
#include "textfile.h"

enum { READ_SIZE = 1 << 18 };

int dx__textfile_open(dx_textfile *t, const char *path, dx_err *err)
{
	memset(t, 0, sizeof *t);
	/* open(2) first, so that a missing file is reported with its errno. */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* A FIFO opened before its writer, when a signal came. */
		if (errno == EINTR)
			return dx__fail(err, DX_ECANCELED, 0, path, "interrupted");
		return dx__fail_sys(err, path, "cannot open");
	}
	struct stat st;
	t->seekable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	t->path = strdup(path);
	t->gz = t->path ? gzdopen(fd, "rb") : NULL;
	if (!t->gz) {
		close(fd);
		dx__textfile_close(t);
		return dx__fail_nomem(err);
	}
	gzbuffer(t->gz, READ_SIZE);
	return 0;
}

void dx__textfile_close(dx_textfile *t)
{
	if (t->gz)
		gzclose(t->gz);
	free(t->path);
	free(t->buf);
	memset(t, 0, sizeof *t);
}

/* Reads more bytes after those not yet returned.  Returns 1, 0 at the end
 * of the file, or a negative code. */
static int fill(dx_textfile *t, dx_err *err)
{
	if (t->start) {
		memmove(t->buf, t->buf + t->start, t->len - t->start);
		t->len -= t->start;
		t->start = 0;
	}
	if (dx__grow(&t->buf, &t->cap, t->len + READ_SIZE + 1, 2 * READ_SIZE, 1) < 0)
		return dx__fail_nomem(err);
	int n = gzread(t->gz, t->buf + t->len, READ_SIZE);
	int zerr;
	const char *msg = gzerror(t->gz, &zerr);
	if (n < 0 || (zerr != Z_OK && zerr != Z_BUF_ERROR)) {
		/* zlib does not retry a read that a signal interrupted (a pipe,
		 * a FIFO): the signal was sent to stop the work. */
		if (zerr == Z_ERRNO && errno == EINTR)
			return dx__fail(err, DX_ECANCELED, 0, t->path, "interrupted");
		if (zerr == Z_ERRNO)
			return dx__fail_sys(err, t->path, "cannot read");
		return dx__fail(err, DX_EFORMAT, 0, t->path, "damaged gzip data (%s)", msg);
	}
	if (n == 0 && zerr == Z_BUF_ERROR)
		return dx__fail(err, DX_EFORMAT, 0, t->path, "truncated gzip file");
	/* xz, bzip2, zstd...: refused by their magic, not read as text; here,
	 * on the first bytes read, so that a pipe is checked too (zlib passes
	 * bytes that are not gzip through as they are). */
	if (t->read == 0) {
		int r = dx__refuse_compressed_bytes(t->buf + t->len, (size_t)n, t->path, err);
		if (r < 0)
			return r;
	}
	t->read += (size_t)n;
	t->len += (size_t)n;
	return n > 0;
}

int dx__textfile_next(dx_textfile *t, char **line, size_t *len, dx_err *err)
{
	size_t searched = t->start;
	for (;;) {
		char *nl = t->len > searched ? memchr(t->buf + searched, '\n', t->len - searched) : NULL;
		if (nl || (t->eof && t->len > t->start)) {
			/* Only here: before the first fill, buf is NULL (no arithmetic on it). */
			char *s = t->buf + t->start;
			char *e = nl ? nl : t->buf + t->len;
			t->last = t->start;
			t->start = nl ? (size_t)(nl - t->buf) + 1 : t->len;
			if (e > s && e[-1] == '\r')
				e--;
			*line = s;
			*len = (size_t)(e - s);
			t->line++;
			return 1;
		}
		if (t->eof)
			return 0;
		searched = t->len;
		size_t at = t->start;
		int r = fill(t, err);
		if (r < 0)
			return r;
		searched -= at;
		t->eof = r == 0;
		if (t->eof && t->buf)
			t->buf[t->len] = '\0';
	}
}

void dx__textfile_unget(dx_textfile *t)
{
	/* The line is still in buf: fill moves only what is after start. */
	t->start = t->last;
	t->line--;
}

int dx__textfile_rewind(dx_textfile *t, dx_err *err)
{
	if (!t->seekable)
		return dx__fail(err, DX_EFORMAT, 0, t->path,
		                "needs a second reading, which a pipe or FIFO cannot give: save it to a file");
	if (gzrewind(t->gz) < 0)
		return dx__fail_sys(err, t->path, "cannot read");
	t->start = t->len = t->last = 0;
	t->eof = 0;
	t->line = 0;
	return 0;
}

void dx__textfile_where(const dx_textfile *t, char *out, size_t outsz)
{
	snprintf(out, outsz, "%s:%llu", t->path, (unsigned long long)t->line);
}

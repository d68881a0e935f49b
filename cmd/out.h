/*
 * out.h: buffered output for data on stdout, written in large blocks.
 * Small pieces are copied into a buffer; large pieces of memory that stays
 * put (a mapped corpus) are handed to writev by reference, so a document
 * is copied once, by the kernel, or not at all for /dev/null.  A reader
 * that went away (EPIPE) ends the output quietly; any other write error is
 * kept for the caller to report once.
 */
#ifndef DX_OUT_H
#define DX_OUT_H

#include <stddef.h>
#include <sys/uio.h>

enum { OUT_IOV = 512 };

typedef struct out {
	int fd;
	char *buf;
	size_t len, cap;
	struct iovec iov[OUT_IOV];
	int niov;
	size_t copied_from;  /* buf offset where the current copied run starts */
	int closed;          /* the reader went away */
	int error;           /* errno of a failed write, 0 if none */
} out;

/* Returns 0, or -1 when out of memory. */
int out_open(out *o, int fd);
/* Flushes and frees; returns 0, or -1 when some output was lost to an
 * error other than a closed pipe (o->error says which). */
int out_close(out *o);

/* Each returns 0, or -1 once output can go nowhere (closed or failed). */
int out_write(out *o, const void *p, size_t n);
/* Like out_write for memory that stays valid until out_close. */
int out_write_ref(out *o, const void *p, size_t n);
int out_flush(out *o);
/* out_write of a string literal, its length counted by the compiler. */
#define OUT_LIT(o, lit) out_write((o), (lit), sizeof(lit) - 1)

static inline int out_char(out *o, char c)
{
	if (o->len < o->cap) {
		o->buf[o->len++] = c;
		return 0;
	}
	return out_write(o, &c, 1);
}

/* Bytes as one TSV field: tab, CR and LF become spaces. */
int out_tsv_field(out *o, const char *p, size_t n);
/* Bytes as a JSON string with its quotes; bytes >= 0x80 pass unchanged. */
int out_json_string(out *o, const char *p, size_t n);

#endif

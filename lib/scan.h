/*
 * scan.h: reading a corpus file from start to end and handing each record
 * to a callback (internal).  Used to build an index and to verify one.
 */
#ifndef DX_SCAN_H
#define DX_SCAN_H

#include <stdint.h>

#include "buf.h"
#include "docdex.h"
#include "params.h"

typedef struct dx_scan_item {
	uint32_t file;        /* index of the file among those scanned */
	uint64_t offset;      /* of the record's first byte in the file */
	uint64_t length;
	const char *rec;      /* the record's bytes, valid during the call */
	const char *id;       /* its id when bad is 0 */
	size_t id_len;
	int bad;              /* 0, or DX_ENOID / DX_EFORMAT */
	const char *why;      /* what is wrong when bad */
} dx_scan_item;

typedef int (*dx_scan_fn)(void *ctx, const dx_scan_item *it, dx_err *err);

typedef struct dx_scan {
	dx_params *pm;        /* format DX_FMT_AUTO is detected from the first file */
	uint64_t span;        /* gzip: lay access points this far apart; 0 for none */
	int packed;           /* gzip: their windows packed (dx_build_opts) */
	int detect;           /* the format was detected: every file must match it */
	int complete;         /* fill a missing id field or column names from the first record */
	dx_scan_fn on_record;
	/* When set, receives every uncompressed byte of the file, in order and
	 * after the records in them were handed to on_record. */
	int (*on_bytes)(void *ctx, const char *p, size_t n, dx_err *err);
	void *ctx;
	dx_progress_fn progress;
	void *progress_ctx;
	uint64_t done, total; /* file bytes scanned so far and in all, for progress */
	uint64_t udone;       /* uncompressed bytes of the files scanned before */
	/* What dx__scan_file found of the last file it read: */
	int kind;             /* DX_SOURCE_* */
	uint64_t usize;       /* its uncompressed size */
	dx_buf points;        /* gzip: struct ddx_point[] (the caller may take them) */
	dx_buf windows;       /* and their compressed windows */
	char warning[256];    /* something wrong that did not stop the scan */
} dx_scan;

/* Scans one file, plain or gzip (told by its first bytes).  Returns 0, the
 * callback's error, or an error of its own (unreadable file, damaged gzip,
 * undetectable format, unterminated record).  Frees s->points and
 * s->windows left from a previous file first. */
int dx__scan_file(dx_scan *s, const char *path, uint32_t file, dx_err *err);

/* Writes "PATH:LINE" for a byte offset of a file into out, counting its
 * lines; just "PATH" when the file cannot be read. */
void dx__place(char *out, size_t outsz, const char *path, uint64_t offset);

#endif

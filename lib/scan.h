/*
 * scan.h: reading a corpus file from start to end and handing each record
 * to a callback (internal).  Used to build an index and to verify one.
 */
#ifndef DX_SCAN_H
#define DX_SCAN_H

#include <stdint.h>

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
	int detect;           /* the format was detected: every file must match it */
	int complete;         /* fill a missing id field or column names from the first record */
	dx_scan_fn on_record;
	void *ctx;
	dx_progress_fn progress;
	void *progress_ctx;
	uint64_t done, total; /* bytes scanned so far and in all, for progress */
} dx_scan;

/* Scans one file.  Returns 0, the callback's error, or an error of its own
 * (unreadable file, undetectable format, unterminated record). */
int dx__scan_file(dx_scan *s, const char *path, uint32_t file, dx_err *err);

/* Writes "PATH:LINE" for a byte offset of a file into out, counting its
 * lines; just "PATH" when the file cannot be read. */
void dx__place(char *out, size_t outsz, const char *path, uint64_t offset);

#endif

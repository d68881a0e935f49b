/*
 * sample.h: what docdex sample's parts share: the sampler and its output,
 * and the writing of triples in each format (sample_write.c).
 */
#ifndef DX_SAMPLE_CMD_H
#define DX_SAMPLE_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "docdex.h"
#include "out.h"

/* --format, by FMT_* number. */
enum { FMT_TSV, FMT_IDS, FMT_JSONL, FMT_TEVATRON, FMT_FLAG };
extern const char *const sample_formats[];

/* Triples are read in batches: the records of a batch are read together,
 * in file order. */
enum { BATCH = 1024, BATCH_MAX = 1 << 18, BATCH_BYTES = 64 << 20 };

typedef struct sampler_cli {
	dx_corpus *c;         /* NULL with --format ids and no corpus */
	dx_sampler *s;
	dx_fields *fields;
	dx_fields *title;     /* tevatron: the corpus's title field, or NULL */
	out o;
	int format;
	int lists;            /* jsonl: negatives as lists (--negatives given) */
	int strict;
	unsigned k;           /* negatives per triple */
	unsigned depth;
	dx_err err;
	size_t batch;         /* triples a batch holds */
	dx_triple *t;         /* the batch */
	uint64_t *neg;        /* batch * k negatives */
	uint64_t *pos;        /* batch * (1 + k) positions to read */
	dx_record *recs;
	uint64_t written;
	int shape_failed;     /* the error was an input's shape, which says
	                         why: no summary of the lines read wrongly */
	int prefetch;         /* read the next batch ahead */
	dx_triple *next;      /* that batch, drawn before this one is written */
	uint64_t *next_neg;
	progress bar;         /* the input lines read, then the triples written */
	int reading;          /* the sampler is reading its inputs */
	uint64_t total;       /* triples this shard writes, 0 when not known */
} sampler_cli;

/* Reads the documents of n triples together (when there is a corpus) and
 * writes the triples in x->format.  Returns 0, 1 once output can go
 * nowhere, or a negative code on a library error. */
int sample_flush(sampler_cli *x, size_t n);

#endif

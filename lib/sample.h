/*
 * sample.h: the parts of the triple sampler (internal).  queries.c reads
 * query texts, qrels.c the judgements, run.c the run's candidates and
 * sampler.c draws triples from them.
 */
#ifndef DX_SAMPLE_H
#define DX_SAMPLE_H

#include "buf.h"
#include "docdex.h"
#include "strtab.h"
#include "textfile.h"

typedef struct dx_queries {
	dx_strtab ids;        /* query number -> qid */
	dx_buf text;          /* texts, back to back */
	uint64_t *text_off;   /* text of query i is [text_off[i], text_off[i + 1]) */
	uint32_t cap;
} dx_queries;

struct dx_sampler {
	dx_corpus *c;
	dx_sample_opts o;
	dx_sample_report rep;
	dx_queries q;
	/* Documents that may not be a query's negatives (its positives, or all
	 * its judged documents), sorted: excl[excl_at[i] .. excl_at[i + 1]). */
	uint64_t *excl_at, *excl;
	/* (query, positive) pairs. */
	uint32_t *pair_q;
	uint64_t *pair_doc;
	uint64_t npairs;
	/* A query's run candidates: cand[cand_at[i] .. cand_at[i] + cand_n[i]). */
	uint64_t *cand_at, *cand;
	uint32_t *cand_n;
	/* Where the iteration is. */
	uint64_t next;        /* the next triple number of this shard */
	dx_perm perm;         /* the order of the pairs in the current epoch */
	uint64_t perm_epoch;  /* the epoch perm is for, or UINT64_MAX */
	/* A triples file, read in its order, maybe several times (epochs). */
	dx_textfile tf;
	uint64_t tf_lines;      /* data lines read, over all epochs */
	uint64_t tf_pass_start; /* tf_lines when this pass began */
	uint64_t tf_epoch;
	char **tf_field;        /* a line's columns: 2 + negatives of them */
	size_t *tf_len;
};

int dx__queries_load(dx_sampler *s, dx_err *err);
void dx__queries_free(dx_queries *q);

static inline const char *dx__query_text(const dx_queries *q, uint32_t i, size_t *len)
{
	*len = (size_t)(q->text_off[i + 1] - q->text_off[i]);
	/* Queries whose texts are all empty have no text buffer at all. */
	return q->text.p ? q->text.p + q->text_off[i] : "";
}

int dx__qrels_load(dx_sampler *s, dx_err *err);
int dx__run_load(dx_sampler *s, dx_err *err);

/*
 * A bad input line at t's current line: counted under kind in the report,
 * or with strict an error (DX_EFORMAT) naming the place.  Returns 0 or the
 * error code.
 */
int dx__sample_problem(dx_sampler *s, int kind, const dx_textfile *t, dx_err *err,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Splits a line on runs of blanks (spaces and tabs) into at most max
 * fields; returns how many there are (counting any beyond max as one). */
int dx__split_blanks(char *line, size_t len, char **f, size_t *flen, int max);

/* A number that is the whole of [p, p + n): 1 with *v, or 0. */
int dx__parse_double(const char *p, size_t n, double *v);

/* Whether a document may not be a negative of query q. */
int dx__sample_excluded(const dx_sampler *s, uint32_t q, uint64_t pos);

/* The corpus position of a document id: 1, 0 when unknown, or negative. */
int dx__sample_doc(dx_sampler *s, const char *id, size_t len, uint64_t *pos, dx_err *err);

#endif

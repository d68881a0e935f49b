/*
 * sample.h: the parts of the triple sampler (internal).  queries.c reads
 * query texts, qrels.c the judgements, runfile.c the run's candidates,
 * sample_shape.c tells an input that has the shape of another kind of file,
 * and sampler.c draws triples from them.
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

/* The formats of a run: TREC "qid Q0 docid rank score tag", or MS MARCO
 * "qid TAB pid TAB rank"; told from the first line. */
enum { DX_RUN_UNKNOWN, DX_RUN_TREC, DX_RUN_MSMARCO };

/* Where a bad line is counted (dx__sample_problem): in the report, with
 * strict making it an error; in the shadow count of the first pass over a
 * triples file, which holds every shard's lines; or both. */
enum { DX_COUNT_REPORT = 1, DX_COUNT_SHADOW = 2 };

struct dx_sampler {
	dx_corpus *c;         /* NULL: documents are numbered by docs below */
	dx_strtab docs;       /* without a corpus: the document ids named */
	dx_sample_opts o;
	dx_sample_report rep;
	dx_queries q;
	int have_texts;       /* the queries come from a file (o.queries) */
	/* Documents that may not be a query's negatives (its positives, or all
	 * its judged documents), sorted: excl[excl_at[i] .. excl_at[i + 1]). */
	uint64_t *excl_at, *excl;
	/* (query, positive) pairs, in the order of their qrels lines. */
	uint32_t *pair_q;
	uint64_t *pair_doc;
	uint64_t npairs;
	/* With DX_PAIRS_QUERY: the queries an epoch visits, in the order of
	 * their first pair, and each one's pairs: qpair[qpair_at[j] ..
	 * qpair_at[j + 1]) are indexes into pair_q and pair_doc. */
	uint32_t *qorder;
	uint64_t *qpair_at, *qpair;
	uint64_t nqorder;
	/* A query's run candidates: cand[cand_at[i] .. cand_at[i] + cand_n[i]),
	 * in the run's order (best first). */
	uint64_t *cand_at, *cand;
	uint32_t *cand_n;
	double *cand_score;   /* with a margin: each candidate's score */
	double *cand_cw;      /* with DX_WEIGHTS_RANK: the sum of the weights
	                         of the query's candidates up to this one */
	double *pair_score;   /* with a margin: the run's score of each pair's
	                         positive, NAN when the run does not score it */
	int run_format;       /* DX_RUN_* */
	/* Input lines read, for the progress callback. */
	uint64_t lines_read;
	/* Where the iteration is: the k-th triple of this shard is next, of
	 * shard in all; the sequence from start on holds tail triples. */
	uint64_t k, shard, tail;
	dx_perm perm;         /* the order of the pairs in the current epoch */
	uint64_t perm_epoch;  /* the epoch perm is for, or UINT64_MAX */
	/* A triples file, read in its order, maybe several times (epochs). */
	dx_textfile tf;
	uint64_t tf_lines;      /* data lines read, over all epochs */
	uint64_t tf_epoch;
	int tf_first_pass;      /* still in the first pass over the file */
	int tf_valid;           /* a line of the first pass, any shard's, holds a triple */
	int tf_done;            /* the triples are over */
	int counting;           /* DX_COUNT_*: where dx__sample_problem counts */
	dx_sample_report shadow; /* the first pass's bad lines, every shard's */
	/* By DX_INPUT_*: the shape of a file shaped like another kind of file
	 * (sample_shape.c's, 0 for none), and where it shows: what to say
	 * when nothing could be read from it. */
	int foreign[4];
	char foreign_at[4][sizeof(((dx_err *)0)->subject)];
	char **tf_field;        /* a line's columns: 2 + negatives of them */
	size_t *tf_len;
	/* The lines numbered start to start + rank, resolved as they were
	 * read: a shard that comes short pads with one of them (pad_line). */
	struct dx_pad {
		uint64_t n, epoch, pos;
		uint32_t q;
		int ok;         /* the line held a triple */
	} *tf_pad;
	uint64_t *tf_pad_neg;   /* their negatives, o.negatives apiece */
	size_t tf_npad, tf_pad_cap;
	int tf_padded;
	/* With drop_last and no count, the shard's line held back until its
	 * round is complete, at line tf_hold_end (next_own_line). */
	struct dx_pad tf_hold;
	uint64_t *tf_hold_neg;
	uint64_t tf_hold_end;
	int tf_holding;
};

/* A sampler with its options, before it reads anything; NULL when out of
 * memory.  dx_sampler_open and the fuzz harness start here. */
dx_sampler *dx__sampler_new(dx_corpus *c, const dx_sample_opts *o, dx_err *err);

int dx__queries_load(dx_sampler *s, dx_err *err);
void dx__queries_free(dx_queries *q);

/* Adds query id with its text (without a queries file, the ids come from
 * the qrels or triples with empty texts).  Returns 1 when added, 0 when it
 * was there, or a negative code (out of memory). */
int dx__queries_add(dx_sampler *s, const char *id, size_t idlen, const char *text, size_t textlen,
                    uint32_t *idx, dx_err *err);

static inline const char *dx__query_text(const dx_queries *q, uint32_t i, size_t *len)
{
	*len = (size_t)(q->text_off[i + 1] - q->text_off[i]);
	/* Queries whose texts are all empty have no text buffer at all. */
	return q->text.p ? q->text.p + q->text_off[i] : "";
}

/* The number of the query that a qrels or triples line names: 1, 0 when it
 * has no text (only with a queries file), or a negative code. */
int dx__sample_query(dx_sampler *s, const char *id, size_t len, uint32_t *q, dx_err *err);

int dx__qrels_load(dx_sampler *s, dx_err *err);
int dx__run_load(dx_sampler *s, dx_err *err);

/*
 * A bad input line at t's current line: counted under kind in the report,
 * or with strict an error (DX_EFORMAT) naming the place.  Returns 0 or the
 * error code.
 */
int dx__sample_problem(dx_sampler *s, int kind, const dx_textfile *t, dx_err *err,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The same for count bad lines at once, the first of them at path:line. */
int dx__sample_problems(dx_sampler *s, int kind, const char *path, uint64_t line, uint64_t count,
                        dx_err *err, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* Counts a line read, calling the progress callback now and then: 0, or
 * DX_ECANCELED when it asks to stop. */
int dx__sample_tick(dx_sampler *s, const dx_textfile *t, dx_err *err);

/* Splits a line on runs of blanks (spaces and tabs) into at most max
 * fields; returns how many there are (counting any beyond max as one). */
int dx__split_blanks(char *line, size_t len, char **f, size_t *flen, int max);

/* A number that is the whole of [p, p + n): 1 with *v, or 0. */
int dx__parse_double(const char *p, size_t n, double *v);

/* Whether [p, p + n) is a non-empty run of decimal digits. */
int dx__is_digits(const char *p, size_t n);

/* Whether a document may not be a negative of query q. */
int dx__sample_excluded(const dx_sampler *s, uint32_t q, uint64_t pos);

/* The number of a document id: its corpus position, or without a corpus
 * its number among the ids named.  1, 0 when not in the corpus, or
 * negative. */
int dx__sample_doc(dx_sampler *s, const char *id, size_t len, uint64_t *pos, dx_err *err);

/*
 * Telling an input that has the shape of another kind of file (a TREC run
 * given as qrels): the loader of each file feeds its data lines (not blank,
 * not comments) until done is set.  A shape that does not fit is a warning
 * in the report, or with strict an error naming the file and line.
 */
enum { DX_INPUT_QUERIES, DX_INPUT_QRELS, DX_INPUT_RUN, DX_INPUT_TRIPLES };

typedef struct dx_shape {
	int input;            /* DX_INPUT_* */
	int done;
	unsigned lines;       /* lines seen */
	uint64_t first_line;  /* the line number of the first */
	char qid[64];         /* the first line's query id, when it has three columns */
	size_t qid_len;
	double val[3];        /* their third columns, while the query is the same */
	unsigned nval;
} dx_shape;

int dx__shape_line(dx_sampler *s, dx_shape *sh, const dx_textfile *t, const char *line, size_t len,
                   dx_err *err);
/* At the end of the file: what the lines seen tell. */
int dx__shape_end(dx_sampler *s, dx_shape *sh, const dx_textfile *t, dx_err *err);

/* When input (DX_INPUT_*) was shaped like another kind of file, which is
 * then why nothing could be read from it: fills err with that (or, for
 * queries and qrels given the other way round, with both) and returns 1;
 * else 0, err untouched. */
int dx__shape_failure(dx_sampler *s, int input, dx_err *err);

#endif

/* sample_write.c: docdex sample's triples written in each format. */
#include <stdio.h>

#include "sample.h"

const char *const sample_formats[] = { "tsv", "ids", "jsonl", "tevatron", "flagembedding", NULL };

/* Document i of a triple (0 the positive, then the negatives): its id, or
 * its text fields from rec. */
static int doc(sampler_cli *x, const dx_triple *t, unsigned i, const dx_record *rec, int want_id, int json)
{
	const char *s;
	size_t n;
	int r = want_id ? dx_sampler_doc_id(x->s, i ? t->neg[i - 1] : t->pos, &s, &n, &x->err)
	                : dx_corpus_fields(x->c, x->fields, rec, &s, &n, &x->err);
	if (r < 0)
		return r;
	return json ? out_json_string(&x->o, s, n) : out_tsv_field(&x->o, s, n);
}

/* r: the triple's records, read in flush; NULL for ids without a corpus. */
static int emit_tsv(sampler_cli *x, const dx_triple *t, const dx_record *r)
{
	int ids = x->format == FMT_IDS;
	if (ids ? out_tsv_field(&x->o, t->qid, t->qid_len) : out_tsv_field(&x->o, t->query, t->query_len))
		return -1;
	for (unsigned i = 0; i <= t->nneg; i++)
		if (out_char(&x->o, '\t') || doc(x, t, i, r ? &r[i] : NULL, ids, 0))
			return -1;
	return out_char(&x->o, '\n');
}

/* The negatives' ids or texts: one value, or a list. */
static int json_negatives(sampler_cli *x, const dx_triple *t, const dx_record *r, int ids)
{
	if (x->lists && out_char(&x->o, '['))
		return -1;
	for (unsigned i = 1; i <= t->nneg; i++)
		if ((i > 1 && out_char(&x->o, ',')) || doc(x, t, i, &r[i], ids, 1))
			return -1;
	return x->lists ? out_char(&x->o, ']') : 0;
}

/* ,"epoch":E: which pass over the pairs (or the triples file) it is of. */
static int epoch(sampler_cli *x, const dx_triple *t)
{
	char buf[40];
	int n = snprintf(buf, sizeof buf, ",\"epoch\":%llu", (unsigned long long)t->epoch);
	return out_write(&x->o, buf, (size_t)n);
}

static int emit_jsonl(sampler_cli *x, const dx_triple *t, const dx_record *r)
{
	return OUT_LIT(&x->o, "{\"qid\":") || out_json_string(&x->o, t->qid, t->qid_len) ||
	       OUT_LIT(&x->o, ",\"query\":") || out_json_string(&x->o, t->query, t->query_len) ||
	       OUT_LIT(&x->o, ",\"pos_id\":") || doc(x, t, 0, &r[0], 1, 1) ||
	       OUT_LIT(&x->o, ",\"pos\":") || doc(x, t, 0, &r[0], 0, 1) ||
	       OUT_LIT(&x->o, ",\"neg_id\":") || json_negatives(x, t, r, 1) ||
	       OUT_LIT(&x->o, ",\"neg\":") || json_negatives(x, t, r, 0) ||
	       epoch(x, t) || OUT_LIT(&x->o, "}\n");
}

/* A passage as Tevatron reads one: {"docid": ..., "title": ..., "text": ...}. */
static int tevatron_passage(sampler_cli *x, const dx_triple *t, unsigned i, const dx_record *rec)
{
	const char *s = "";
	size_t n = 0;
	if (OUT_LIT(&x->o, "{\"docid\":") || doc(x, t, i, rec, 1, 1) ||
	    OUT_LIT(&x->o, ",\"title\":"))
		return -1;
	if (x->title && dx_corpus_fields(x->c, x->title, rec, &s, &n, &x->err) < 0)
		return -1;
	return out_json_string(&x->o, s, n) || OUT_LIT(&x->o, ",\"text\":") ||
	       doc(x, t, i, rec, 0, 1) || out_char(&x->o, '}');
}

/* Tevatron's training JSONL (its docs' "Datasets" page):
 * {"query_id", "query", "positive_passages": [passage], "negative_passages":
 * [passage, ...]}, one line a triple. */
static int emit_tevatron(sampler_cli *x, const dx_triple *t, const dx_record *r)
{
	if (OUT_LIT(&x->o, "{\"query_id\":") || out_json_string(&x->o, t->qid, t->qid_len) ||
	    OUT_LIT(&x->o, ",\"query\":") || out_json_string(&x->o, t->query, t->query_len) ||
	    OUT_LIT(&x->o, ",\"positive_passages\":[") || tevatron_passage(x, t, 0, &r[0]) ||
	    OUT_LIT(&x->o, "],\"negative_passages\":["))
		return -1;
	for (unsigned i = 1; i <= t->nneg; i++)
		if ((i > 1 && out_char(&x->o, ',')) || tevatron_passage(x, t, i, &r[i]))
			return -1;
	return OUT_LIT(&x->o, "]}\n");
}

/* FlagEmbedding's fine-tuning JSONL, which sentence-transformers reads
 * too: {"query": text, "pos": [text], "neg": [text, ...]}. */
static int emit_flag(sampler_cli *x, const dx_triple *t, const dx_record *r)
{
	if (OUT_LIT(&x->o, "{\"query\":") || out_json_string(&x->o, t->query, t->query_len) ||
	    OUT_LIT(&x->o, ",\"pos\":[") || doc(x, t, 0, &r[0], 0, 1) ||
	    OUT_LIT(&x->o, "],\"neg\":["))
		return -1;
	for (unsigned i = 1; i <= t->nneg; i++)
		if ((i > 1 && out_char(&x->o, ',')) || doc(x, t, i, &r[i], 0, 1))
			return -1;
	return OUT_LIT(&x->o, "]}\n");
}

static int emit(sampler_cli *x, const dx_triple *t, const dx_record *r)
{
	switch (x->format) {
	case FMT_JSONL: return emit_jsonl(x, t, r);
	case FMT_TEVATRON: return emit_tevatron(x, t, r);
	case FMT_FLAG: return emit_flag(x, t, r);
	default: return emit_tsv(x, t, r);
	}
}

/* Reads the documents of n triples together (when there is a corpus) and
 * prints the triples.  Returns 0, 1 once output can go nowhere, or a
 * negative code on a library error. */
int sample_flush(sampler_cli *x, size_t n)
{
	size_t per = 1 + x->k, m = 0;
	int r;
	/* Ids come from the index: no document is read for them. */
	if (x->c && x->format != FMT_IDS) {
		for (size_t i = 0; i < n; i++) {
			x->pos[m++] = x->t[i].pos;
			for (unsigned j = 0; j < x->k; j++)
				x->pos[m++] = x->t[i].neg[j];
		}
		if ((r = dx_corpus_records(x->c, x->pos, m, x->recs, &x->err)) < 0 ||
		    (r = dx_corpus_check_ids(x->c, x->recs, m, &x->err)) < 0)
			return r;
	}
	for (size_t i = 0; i < n; i++) {
		x->err.code = 0;
		const dx_record *rec = x->c && x->format != FMT_IDS ? &x->recs[i * per] : NULL;
		r = emit(x, &x->t[i], rec);
		if (r)
			return x->err.code ? x->err.code : 1;
		x->written++;
	}
	return 0;
}


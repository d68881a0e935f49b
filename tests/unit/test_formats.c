/* Record splitting, ids and fields of the TSV, JSONL and TREC formats. */
#include "format.h"
#include "unit.h"

/*
 * Splits text into records as a reader would: the bytes arrive `chunk` at a
 * time, the unconsumed tail moves to the front, and the hint carries over.
 * Returns the records joined by '|' (and "!" for a malformed one).
 */
static char *split(dx_next_fn next, const char *text, size_t chunk)
{
	static char outbuf[8192];
	size_t total = strlen(text), have = 0, start = 0, hint = 0, o = 0;
	char buf[4096];
	int eof = 0;
	outbuf[0] = '\0';
	while (!eof || start < have) {
		const char *rec, *nx;
		size_t len;
		int r = next(buf + start, buf + have, eof, &hint, &rec, &len, &nx);
		start = (size_t)(nx - buf);
		if (r == 0) {
			if (eof)
				break;
			memmove(buf, buf + start, have - start);
			have -= start;
			start = 0;
			size_t k = total < chunk ? total : chunk;
			memcpy(buf + have, text, k);
			text += k;
			total -= k;
			have += k;
			eof = total == 0 && k == 0;
			continue;
		}
		if (r < 0) {
			o += (size_t)snprintf(outbuf + o, sizeof outbuf - o, "!");
			start = have;
			continue;
		}
		o += (size_t)snprintf(outbuf + o, sizeof outbuf - o, "%s%.*s", o ? "|" : "", (int)len, rec);
	}
	return outbuf;
}

static void splits_as(dx_next_fn next, const char *text, const char *want)
{
	for (size_t chunk = 1; chunk <= strlen(text) + 1; chunk++) {
		const char *got = split(next, text, chunk);
		if (strcmp(got, want) != 0) {
			fprintf(stderr, "chunk %zu: got '%s', want '%s'\n", chunk, got, want);
			unit_failures++;
			return;
		}
	}
}

static dx_params params(int format)
{
	dx_params pm = { .format = format, .id_column = 1 };
	return pm;
}

static void id_is(const dx_format_ops *ops, const dx_params *pm, const char *rec, const char *want)
{
	dx_buf scratch = { 0 };
	const char *id, *why = NULL;
	size_t n;
	int r = ops->id(pm, rec, strlen(rec), &scratch, &id, &n, &why);
	if (!want) {
		CHECK(r < 0 && why);
	} else {
		CHECK(r == 0);
		if (r == 0)
			CHECK_MEM(id, n, want);
	}
	dx__buf_free(&scratch);
}

/* The field's bytes, want, and its kind: a JSON value other than a string
 * when want_kind is DX_VALUE_JSON, absent when want is NULL. */
static void field_kind_is(const dx_format_ops *ops, const dx_params *pm, const char *name,
                          const char *rec, const char *want, int want_kind)
{
	dx_field f;
	const char *why, *s;
	size_t n;
	dx_buf scratch = { 0 };
	CHECK(ops->field_parse(pm, name, strlen(name), &f, &why) == 0);
	CHECK_EQ(ops->field(pm, &f, rec, strlen(rec), &scratch, &s, &n), want ? want_kind : DX_VALUE_ABSENT);
	CHECK_MEM(s, n, want ? want : "");
	dx__buf_free(&scratch);
}

static void field_is(const dx_format_ops *ops, const dx_params *pm, const char *name, const char *rec,
                     const char *want)
{
	field_kind_is(ops, pm, name, rec, want, DX_VALUE_TEXT);
}

/* dx_all_fn's fields, gathered as "name=value" joined by '|', a JSON value
 * as "name:value", the id's name starred. */
static char all_out[1024];

static int gather(void *ctx, const char *name, size_t nl, const char *s, size_t n, int kind, int is_id)
{
	size_t *o = ctx;
	*o += (size_t)snprintf(all_out + *o, sizeof all_out - *o, "%s%s%.*s%c%.*s", *o ? "|" : "",
	                       is_id ? "*" : "", (int)nl, name, kind == DX_VALUE_JSON ? ':' : '=', (int)n, s);
	return 0;
}

static void all_is(const dx_format_ops *ops, const dx_params *pm, const char *rec, const char *want)
{
	dx_buf scratch = { 0 };
	size_t o = 0;
	all_out[0] = '\0';
	CHECK_EQ(ops->all(pm, rec, strlen(rec), &scratch, gather, &o), 0);
	CHECK_MEM(all_out, o, want);
	dx__buf_free(&scratch);
}

int main(void)
{
	CHECK_EQ(dx__format_detect("1\tx\n", 4), DX_FMT_TSV);
	CHECK_EQ(dx__format_detect("\xef\xbb\xbf\n\n {\"a\":1}", 13), DX_FMT_JSONL);
	CHECK_EQ(dx__format_detect("\n<DOC>\n<DOCNO>", 14), DX_FMT_TREC);
	CHECK_EQ(dx__format_detect("<DOC id=\"x\">", 12), DX_FMT_TREC);
	CHECK_EQ(dx__format_detect("<DOCNO>", 7), DX_FMT_AUTO);
	CHECK_EQ(dx__format_detect("just words\n1\t2", 14), DX_FMT_AUTO);
	CHECK_EQ(dx__format_detect("", 0), DX_FMT_AUTO);

	/* Lines: CRLF and blank lines, a last line without a newline. */
	splits_as(dx__next_line, "a\tb\r\n\r\n  \n\tx\nlast", "a\tb|\tx|last");
	splits_as(dx__next_line, "one\n\n\ntwo\n", "one|two");
	splits_as(dx__next_line, "\n \t \r\n", "");
	splits_as(dx__next_line, "cr\rinside\n", "cr\rinside");

	/* TREC: text between documents is skipped, "<DOCNO" is no document start,
	 * a document cut off at the end is malformed. */
	const dx_format_ops *trec = &dx__fmt_trec;
	splits_as(trec->next, "<!-- c -->\n<DOC>\n<DOCNO> 1 </DOCNO>\nx</DOC>\njunk<DOC>y</DOC>",
	          "<DOC>\n<DOCNO> 1 </DOCNO>\nx</DOC>|<DOC>y</DOC>");
	splits_as(trec->next, "<DOCNO>x</DOCNO><DOC id=\"7\">z</DOC>", "<DOC id=\"7\">z</DOC>");
	splits_as(trec->next, "<DOC>a</DOC><DOC>cut off", "<DOC>a</DOC>!");
	splits_as(trec->next, "<DOC>one</DO", "!");

	dx_params tsv = params(DX_FMT_TSV);
	id_is(&dx__fmt_tsv, &tsv, "D1\thttp://x\ttitle\tbody", "D1");
	id_is(&dx__fmt_tsv, &tsv, "\ttext", NULL);
	tsv.id_column = 3;
	id_is(&dx__fmt_tsv, &tsv, "a\tb\tc", "c");
	id_is(&dx__fmt_tsv, &tsv, "a\tb", NULL);
	tsv.id_column = 1;
	snprintf(tsv.columns, sizeof tsv.columns, "%s", dx__tsv_default_columns("1\tx", 3));
	CHECK(strcmp(tsv.columns, "id,text") == 0);
	CHECK(strcmp(dx__tsv_default_columns("D1\tu\tt\tb", 9), "id,url,title,body") == 0);
	CHECK(strcmp(dx__tsv_default_columns("a\tb\tc\td\te", 9), "") == 0);
	snprintf(tsv.columns, sizeof tsv.columns, "id,url,title,body");
	field_is(&dx__fmt_tsv, &tsv, "title", "D1\thttp://x\tA title\tthe body", "A title");
	field_is(&dx__fmt_tsv, &tsv, "4", "D1\thttp://x\tA title\tthe body", "the body");
	field_is(&dx__fmt_tsv, &tsv, "body", "D1\thttp://x", NULL); /* a missing column is empty */
	field_is(&dx__fmt_tsv, &tsv, "title", "D1\thttp://x\t\tb", "");
	dx_field f;
	const char *why;
	CHECK(dx__fmt_tsv.field_parse(&tsv, "0", 1, &f, &why) < 0);
	CHECK(dx__fmt_tsv.field_parse(&tsv, "nope", 4, &f, &why) < 0);
	/* A number past the columns the index names: no record has it. */
	CHECK(dx__fmt_tsv.field_parse(&tsv, "5", 1, &f, &why) < 0);
	/* A number is named by the index's name for it. */
	CHECK(dx__fmt_tsv.field_parse(&tsv, "3", 1, &f, &why) == 0);
	CHECK_MEM(f.name, f.name_len, "title");
	all_is(&dx__fmt_tsv, &tsv, "D1\thttp://x\tA title\tthe body", "*id=D1|url=http://x|title=A title|body=the body");
	all_is(&dx__fmt_tsv, &tsv, "D1\tu\tt\tb\textra", "*id=D1|url=u|title=t|body=b|5=extra");
	dx_params bare = params(DX_FMT_TSV);
	CHECK(dx__fmt_tsv.field_parse(&bare, "7", 1, &f, &why) == 0); /* no names: no count */
	CHECK_MEM(f.name, f.name_len, "7");
	field_is(&dx__fmt_tsv, &bare, "7", "a\tb", NULL);
	all_is(&dx__fmt_tsv, &bare, "a\tb", "*1=a|2=b");

	dx_params js = params(DX_FMT_JSONL);
	CHECK(strcmp(dx__jsonl_default_id_field("{\"pid\": \"p\", \"docid\": \"d\"}", 26), "pid") == 0);
	CHECK(strcmp(dx__jsonl_default_id_field("{\"url\": \"u\", \"docid\": \"d\"}", 26), "docid") == 0);
	CHECK(dx__jsonl_default_id_field("{\"contents\": \"x\"}", 17) == NULL);
	snprintf(js.id_field, sizeof js.id_field, "_id");
	id_is(&dx__fmt_jsonl, &js, "{\"_id\": \"<dbpedia:A_b>\", \"text\": \"x\"}", "<dbpedia:A_b>");
	id_is(&dx__fmt_jsonl, &js, "{\"text\": \"x\", \"_id\": 1234}", "1234");
	id_is(&dx__fmt_jsonl, &js, "{\"_id\": \"caf\\u00e9#1\"}", "caf\xc3\xa9#1");
	id_is(&dx__fmt_jsonl, &js, "{\"meta\": {\"_id\": \"inner\"}}", NULL); /* not top level */
	id_is(&dx__fmt_jsonl, &js, "{\"_id\": \"\"}", NULL);
	id_is(&dx__fmt_jsonl, &js, "{\"_id\": null}", NULL);
	id_is(&dx__fmt_jsonl, &js, "{\"_id\": \"x\"", NULL);
	id_is(&dx__fmt_jsonl, &js, "[\"_id\"]", NULL);
	field_is(&dx__fmt_jsonl, &js, "text", "{\"_id\": \"1\", \"text\": \"a\\tb\"}", "a\tb");
	field_kind_is(&dx__fmt_jsonl, &js, "meta", "{\"_id\": \"1\", \"meta\": {\"k\": [1]}}", "{\"k\": [1]}",
	              DX_VALUE_JSON);
	field_kind_is(&dx__fmt_jsonl, &js, "n", "{\"_id\": \"1\", \"n\": -1.5e3}", "-1.5e3", DX_VALUE_JSON);
	/* Not JSON (Python writes NaN): its text, as a string would be. */
	field_is(&dx__fmt_jsonl, &js, "n", "{\"_id\": \"1\", \"n\": NaN}", "NaN");
	field_is(&dx__fmt_jsonl, &js, "title", "{\"_id\": \"1\"}", NULL);
	field_is(&dx__fmt_jsonl, &js, "title", "{\"_id\": \"1\", \"title\": \"\"}", "");
	all_is(&dx__fmt_jsonl, &js, "{\"_id\": \"1\", \"t\\u00e9\": \"a\\tb\", \"m\": {\"k\": null}, \"_id\": 2}",
	       "*_id=1|t\xc3\xa9=a\tb|m:{\"k\": null}|_id:2");

	dx_params tr = params(DX_FMT_TREC);
	id_is(trec, &tr, "<DOC>\n<DOCNO> FBIS3-1 </DOCNO>\n<TEXT>t</TEXT>\n</DOC>", "FBIS3-1");
	id_is(trec, &tr, "<DOC id=\"doc2\">\n<TEXT>t</TEXT>\n</DOC>", "doc2");
	id_is(trec, &tr, "<DOC>\nWEB-0002 </DOCNO>\n</DOC>", NULL);
	id_is(trec, &tr, "<DOC><DOCNO>  </DOCNO></DOC>", NULL);
	const char *doc = "<DOC>\n<DOCNO>S1</DOCNO>\n<title>\tThe Title </title>\nbody\ttext\n</DOC>";
	field_is(trec, &tr, "title", doc, "The Title");
	field_is(trec, &tr, "TITLE", doc, "The Title");
	field_is(trec, &tr, "text", doc, "<title>\tThe Title </title>\nbody\ttext");
	field_is(trec, &tr, "docno", doc, "S1");
	field_is(trec, &tr, "text", "<DOC>\n<DOCNO>2</DOCNO>\n<TEXT>\n x \n</TEXT>\n</DOC>", "x");
	field_is(trec, &tr, "head", doc, NULL);
	all_is(trec, &tr, doc, "*docno=S1|text=<title>\tThe Title </title>\nbody\ttext");
	/* No field named is the text, exactly as "text" selects it: the
	 * <TEXT> element, not the SGML after <DOCNO>. */
	const char *robust = "<DOC><DOCNO>d1</DOCNO><HEADLINE>T1</HEADLINE><TEXT>body one</TEXT></DOC>";
	field_is(trec, &tr, "", robust, "body one");
	field_is(trec, &tr, "text", robust, "body one");
	field_is(trec, &tr, "", doc, "<title>\tThe Title </title>\nbody\ttext");
	field_is(&dx__fmt_tsv, &tsv, "", "D1\thttp://x\tA title\tthe body", "the body");

	/* Where records end: a line before LF, CRLF, a lone CR at the end, or
	 * the end of the file; never with an LF of its own.  TREC from <DOC
	 * to </DOC>. */
	CHECK(dx__line_ends("a\tb", 3, "\nx", 2));
	CHECK(dx__line_ends("a\tb", 3, "\r\n", 2));
	CHECK(dx__line_ends("a\tb", 3, "\r", 1));
	CHECK(dx__line_ends("a\tb", 3, "", 0));
	CHECK(!dx__line_ends("a\tb", 3, "xy", 2));
	CHECK(!dx__line_ends("a\tb", 3, "\rx", 2));
	CHECK(!dx__line_ends("a\n", 2, "b\t", 2));
	CHECK(trec->ends("<DOC>x</DOC>", 12, "", 0));
	CHECK(trec->ends("<DOC id=1></DOC>", 16, "\n", 1));
	CHECK(!trec->ends("<DOC>x</DOC", 11, ">", 1));
	CHECK(!trec->ends("DOC>x</DOC>\n", 12, "", 0));
	CHECK_EQ(dx__fmt_tsv.gap, 1);
	CHECK_EQ(dx__fmt_jsonl.gap, 1);
	CHECK_EQ(trec->gap, 0);
	UNIT_DONE();
}

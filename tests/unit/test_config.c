/* Experiment files: the YAML mapping read into keys and values. */
#include <errno.h>

#include "dxbench.h"
#include "docdex.h"
#include "unit.h"

static const char *write_file(const char *name, const char *text)
{
	const char *p = path(name);
	FILE *f = fopen(p, "wb");
	if (!f || fwrite(text, 1, strlen(text), f) != strlen(text) || fclose(f) != 0) {
		fprintf(stderr, "cannot write %s\n", p);
		unit_failures++;
	}
	return p;
}

static dxb_config *loads(const char *text)
{
	dx_err err = { 0 };
	dxb_config *c = dxb_config_load(write_file("ok.yaml", text), &err);
	if (!c) {
		fprintf(stderr, "refused: %s: %s\n", err.subject, err.what);
		unit_failures++;
	}
	return c;
}

/* Item i is key = value, a list or not, on line. */
static void item(const dxb_config *c, size_t i, const char *key, const char *value, int is_list,
                 unsigned line)
{
	const dxb_config_item *it = dxb_config_item_at(c, i);
	if (!it || strcmp(it->key, key) != 0 || strcmp(it->value, value) != 0 ||
	    it->is_list != is_list || it->line != line) {
		if (it)
			fprintf(stderr, "item %zu: got %s = '%s' (list %d, line %u), want %s = '%s' (list %d, line %u)\n",
			        i, it->key, it->value, it->is_list, it->line, key, value, is_list, line);
		else
			fprintf(stderr, "item %zu: missing, want %s\n", i, key);
		unit_failures++;
	}
}

/* The text is refused with code and what, and the subject is the file's
 * path followed by where ("" for none, else ":LINE" or ":LINE: KEY"). */
static void refuses(const char *text, int code, const char *what, const char *where)
{
	const char *p = write_file("bad.yaml", text);
	dx_err err = { 0 };
	dxb_config *c = dxb_config_load(p, &err);
	char subject[600];
	snprintf(subject, sizeof subject, "%s%s", p, where);
	if (c || err.code != code || strcmp(err.what, what) != 0 || strcmp(err.subject, subject) != 0) {
		fprintf(stderr, "for '%s': got %d '%s' at '%s', want %d '%s' at '%s'\n", text, err.code,
		        err.what, err.subject, code, what, subject);
		unit_failures++;
	}
	dxb_config_free(c);
}

int main(void)
{
	if (!unit_mkdir())
		return 1;
	dxb_config *c;

	c = loads("# an experiment\n"
	          "corpus: data/collection.tsv\n"
	          "name: \"with  spaces: and a colon\"\n"
	          "single: 'it''s'\n"
	          "seed: 42\n"
	          "rate: 0.5\n"
	          "flag: true\n"
	          "\n"
	          "empty:\n"
	          "tilde: ~   # a comment after a value\n"
	          "null_word: null\n"
	          "quoted_tilde: \"~\"\n"
	          "quoted_empty: ''\n"
	          "escaped: \"a\\tb\"\n");
	CHECK_EQ(dxb_config_count(c), 12);
	item(c, 0, "corpus", "data/collection.tsv", 0, 2);
	item(c, 1, "name", "with  spaces: and a colon", 0, 3);
	item(c, 2, "single", "it's", 0, 4);
	item(c, 3, "seed", "42", 0, 5);
	item(c, 4, "rate", "0.5", 0, 6);
	item(c, 5, "flag", "true", 0, 7);
	item(c, 6, "empty", "", 0, 9);
	item(c, 7, "tilde", "", 0, 10);
	item(c, 8, "null_word", "", 0, 11);
	item(c, 9, "quoted_tilde", "~", 0, 12);
	item(c, 10, "quoted_empty", "", 0, 13);
	item(c, 11, "escaped", "a\tb", 0, 14);
	CHECK(dxb_config_item_at(c, 12) == NULL);
	dxb_config_free(c);

	/* Lists, flow and block, keep their items' text and order. */
	c = loads("sizes: [10, 100, \"1000\"]\n"
	          "loaders:\n"
	          "  - mmap\n"
	          "  - pread\n"
	          "same_indent:\n"
	          "- a\n"
	          "after: x\n"
	          "none: []\n"
	          "one: [only]\n"
	          "holes: [a, ~, '', b]\n");
	CHECK_EQ(dxb_config_count(c), 7);
	item(c, 0, "sizes", "10,100,1000", 1, 1);
	item(c, 1, "loaders", "mmap,pread", 1, 2);
	item(c, 2, "same_indent", "a", 1, 5);
	item(c, 3, "after", "x", 0, 7);
	item(c, 4, "none", "", 1, 8);
	item(c, 5, "one", "only", 1, 9);
	item(c, 6, "holes", "a,,,b", 1, 10);
	dxb_config_free(c);

	/* A block scalar keeps its line breaks. */
	c = loads("note: |\n  two\n  lines\nnext: 1\n");
	CHECK_EQ(dxb_config_count(c), 2);
	item(c, 0, "note", "two\nlines\n", 0, 1);
	item(c, 1, "next", "1", 0, 4);
	dxb_config_free(c);

	/* CRLF line endings count one line each and stay out of the values. */
	c = loads("a: 1\r\nb: [x, y]\r\n\r\nc: three\r\n");
	CHECK_EQ(dxb_config_count(c), 3);
	item(c, 0, "a", "1", 0, 1);
	item(c, 1, "b", "x,y", 1, 2);
	item(c, 2, "c", "three", 0, 4);
	dxb_config_free(c);

	/* Nothing in the file is an empty mapping. */
	c = loads("");
	CHECK(c != NULL);
	CHECK_EQ(dxb_config_count(c), 0);
	CHECK(dxb_config_item_at(c, 0) == NULL);
	dxb_config_free(c);
	c = loads("# only\n\n  # comments\n");
	CHECK(c != NULL);
	CHECK_EQ(dxb_config_count(c), 0);
	dxb_config_free(c);
	c = loads("---\n# an explicit document with nothing in it\n");
	CHECK(c != NULL);
	CHECK_EQ(dxb_config_count(c), 0);
	dxb_config_free(c);
	c = loads("---\na: 1\n...\n");
	CHECK_EQ(dxb_config_count(c), 1);
	item(c, 0, "a", "1", 0, 2);
	dxb_config_free(c);
	c = loads("{a: 1, b: [2, 3]}\n");
	CHECK_EQ(dxb_config_count(c), 2);
	item(c, 1, "b", "2,3", 1, 1);
	dxb_config_free(c);

	/* Syntax errors, at the line where libyaml found them. */
	refuses("a: 1\n b: 2\n", DX_EFORMAT,
	        "malformed YAML: mapping values are not allowed in this context", ":2");
	refuses("a: 1\nb: c: d\n", DX_EFORMAT,
	        "malformed YAML: mapping values are not allowed in this context", ":2");
	refuses("a: 1\r\nb: 2\r\n c: 3\r\n", DX_EFORMAT,
	        "malformed YAML: mapping values are not allowed in this context", ":3");
	refuses("a: 1\n- b\n", DX_EFORMAT,
	        "malformed YAML: did not find expected key (while parsing a block mapping on line 1)", ":2");
	/* An unclosed bracket or quote: the line it was opened on is named too. */
	refuses("a: 1\nb: [1, 2\nc: 3\n", DX_EFORMAT,
	        "malformed YAML: did not find expected ',' or ']' (while parsing a flow sequence on line 2)",
	        ":3");
	refuses("a: 1\nb: \"open\nc: 3\n", DX_EFORMAT,
	        "malformed YAML: found unexpected end of stream (while scanning a quoted scalar on line 2)",
	        ":4");
	/* A reader error has an offset and no line: the line is counted. */
	refuses("a: 1\nb: \xff\n", DX_EFORMAT, "malformed YAML: invalid leading UTF-8 octet", ":2");

	/* Structure errors. */
	refuses("- a\n- b\n", DX_EFORMAT, "an experiment must be a mapping of keys to values", ":1");
	refuses("\n\njust text\n", DX_EFORMAT, "an experiment must be a mapping of keys to values", ":3");
	refuses("a: 1\n---\nb: 2\n", DX_EFORMAT, "an experiment must be a single YAML document", ":2");
	refuses("a: 1\nb:\n  c: 2\n", DX_EFORMAT, "a value must be a scalar or a list of scalars", ":3: b");
	refuses("a: 1\nb: {c: 2}\n", DX_EFORMAT, "a value must be a scalar or a list of scalars", ":2: b");
	refuses("a: [1, [2, 3]]\n", DX_EFORMAT, "a value must be a scalar or a list of scalars", ":1: a");
	refuses("a:\n- 1\n- - 2\n", DX_EFORMAT, "a value must be a scalar or a list of scalars", ":3: a");
	refuses("a:\n- x: 1\n", DX_EFORMAT, "a value must be a scalar or a list of scalars", ":2: a");
	refuses("[a, b]: 1\n", DX_EFORMAT, "a key must be a scalar", ":1");
	refuses("seed: 1\nname: x\nseed: 2\n", DX_EFORMAT, "key given twice", ":3: seed");
	refuses("a: &x 1\nb: *x\n", DX_EFORMAT, "aliases are not supported", ":2: b");
	refuses("a: &x 1\nb: [*x]\n", DX_EFORMAT, "aliases are not supported", ":2: b");
	refuses("a: &x 1\n*x : 2\n", DX_EFORMAT, "aliases are not supported", ":2");
	refuses("a: \"x\\0y\"\n", DX_EFORMAT, "a value must not contain a NUL character", ":1: a");

	/* A file is read up to 1 MiB: one larger (a log given by mistake, a
	 * device that never ends) is refused, not read until memory runs out. */
	{
		size_t max = 1 << 20;
		char *big = malloc(max + 2);
		CHECK(big != NULL);
		if (big) {
			memset(big, ' ', max + 1);
			memcpy(big, "a: 1\n#", 6);
			big[max] = '\0';
			c = loads(big);
			CHECK_EQ(dxb_config_count(c), 1);
			dxb_config_free(c);
			big[max] = '\n';
			big[max + 1] = '\0';
			refuses(big, DX_EFORMAT, "experiment file larger than 1 MiB", "");
			free(big);
		}
		dx_err zero = { 0 };
		CHECK(dxb_config_load("/dev/zero", &zero) == NULL);
		CHECK_EQ(zero.code, DX_EFORMAT);
		CHECK(strcmp(zero.what, "experiment file larger than 1 MiB") == 0);
		CHECK(strcmp(zero.subject, "/dev/zero") == 0);
	}

	/* A file that cannot be read is a system error on its path. */
	dx_err err = { 0 };
	CHECK(dxb_config_load(path("missing.yaml"), &err) == NULL);
	CHECK_EQ(err.code, DX_ESYS);
	CHECK_EQ(err.sys, ENOENT);
	CHECK(strcmp(err.subject, path("missing.yaml")) == 0);
	CHECK(strcmp(err.what, "cannot open") == 0);
	memset(&err, 0, sizeof err);
	CHECK(dxb_config_load(unit_dir, &err) == NULL);
	CHECK_EQ(err.code, DX_ESYS);
	CHECK_EQ(err.sys, EISDIR);
	CHECK(dxb_config_load(path("missing.yaml"), NULL) == NULL);

	dxb_config_free(NULL);
	CHECK(unit_rmdir());
	UNIT_DONE();
}

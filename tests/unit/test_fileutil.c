/* Paths relative to the index, and joins. */
#include "fileutil.h"
#include "unit.h"

static void rel(const char *from, const char *to, const char *want)
{
	char *got = dx__relative_path(from, to);
	if (!got || strcmp(got, want) != 0) {
		fprintf(stderr, "relative_path(%s, %s) = '%s', want '%s'\n", from, to, got ? got : "(null)", want);
		unit_failures++;
	}
	free(got);
}

static void is(char *got, const char *want)
{
	if (!got || strcmp(got, want) != 0) {
		fprintf(stderr, "got '%s', want '%s'\n", got ? got : "(null)", want);
		unit_failures++;
	}
	free(got);
}

int main(void)
{
	rel("/a/b", "/a/b/x.tsv", "x.tsv");
	rel("/a/b", "/a/c/x.tsv", "../c/x.tsv");
	rel("/a/b/c", "/x.tsv", "../../../x.tsv");
	rel("/", "/data/x.tsv", "data/x.tsv");
	rel("/ab", "/a/x", "../a/x");          /* a shared prefix that is no component */
	rel("/a/b/", "/a/b/c/d.json", "c/d.json");
	rel("/a/b", "/a/b", ".");
	rel("/a/b/c", "/a", "../..");

	is(dx__dirname("x.tsv"), ".");
	is(dx__dirname("/x.tsv"), "/");
	is(dx__dirname("a/b/x.tsv"), "a/b");
	is(dx__path_join(".", "x.tsv"), "x.tsv");
	is(dx__path_join("a/b", "../x.tsv"), "a/b/../x.tsv");
	is(dx__path_join("a/", "x"), "a/x");
	is(dx__path_join("a", "/abs/x"), "/abs/x");
	UNIT_DONE();
}

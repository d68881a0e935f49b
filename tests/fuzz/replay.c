/*
 * replay.c: a main for a fuzz harness built without libFuzzer, so that
 * make check runs every harness over its seeds and the inputs that once
 * crashed it (tests/fuzz/seeds/NAME, tests/fuzz/regress/NAME) with any
 * compiler.  Each argument is a file, given to LLVMFuzzerTestOneInput.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	size_t r;
	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			uint8_t *more = realloc(buf, cap *= 2);
			if (!more) {
				free(buf);
				buf = NULL;
			}
			buf = more;
		}
	}
	int bad = ferror(f) || !buf;
	fclose(f);
	if (bad) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (replay(argv[i]) < 0)
			return 1;
	return 0;
}

/* unit.h: a minimal harness for the C unit tests of lib/. Each test file
 * is its own program; it exits 1 when a check failed. */
#ifndef DX_UNIT_H
#define DX_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_failures;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			unit_failures++;                                                   \
		}                                                                          \
	} while (0)

#define CHECK_EQ(a, b)                                                                          \
	do {                                                                                    \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                \
		if (a_ != b_) {                                                                 \
			fprintf(stderr, "%s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n", \
			        __FILE__, __LINE__, #a, #b, a_, b_);                            \
			unit_failures++;                                                        \
		}                                                                               \
	} while (0)

/* A byte string equals a C string. */
#define CHECK_MEM(p, n, s)                                                                   \
	do {                                                                                 \
		size_t n_ = (n);                                                             \
		if (n_ != strlen(s) || memcmp((p), (s), n_) != 0) {                          \
			fprintf(stderr, "%s:%d: got '%.*s', want '%s'\n", __FILE__, __LINE__, \
			        (int)n_, (const char *)(p), (s));                             \
			unit_failures++;                                                     \
		}                                                                            \
	} while (0)

/* A directory of the test's own for files, under $TMPDIR, and paths in it. */
static char unit_dir[256];

static inline int unit_mkdir(void)
{
	snprintf(unit_dir, sizeof unit_dir, "%s/dx-unit-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(unit_dir) != NULL;
}

static inline int unit_rmdir(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", unit_dir);
	return system(cmd) == 0;
}

/* unit_dir/name; four results stay valid at a time. */
static inline const char *path(const char *name)
{
	static char p[4][512];
	static int i;
	i = (i + 1) % 4;
	snprintf(p[i], sizeof p[i], "%s/%s", unit_dir, name);
	return p[i];
}

/* Writes n bytes to unit_dir/name. */
static inline void unit_write(const char *name, const void *data, size_t n)
{
	FILE *f = fopen(path(name), "wb");
	CHECK(f && fwrite(data, 1, n, f) == n);
	if (f)
		fclose(f);
}

/* The same for a C string. */
static inline void unit_write_text(const char *name, const char *text)
{
	unit_write(name, text, strlen(text));
}

#define UNIT_DONE()                                                                   \
	do {                                                                          \
		if (unit_failures)                                                    \
			fprintf(stderr, "%s: %d check(s) failed\n", __FILE__, unit_failures); \
		return unit_failures ? 1 : 0;                                         \
	} while (0)

#endif

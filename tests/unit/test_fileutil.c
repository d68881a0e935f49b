/* Paths relative to the index, and joins; files mapped on 2 MiB boundaries. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* Whether an inaccessible anonymous mapping (what dx__map_file reserves
 * before it maps) overlaps [from, to): a reservation left behind.  Counting
 * all mappings would not do: a sanitizer maps shadow memory of its own. */
static int reserved_within(uintptr_t from, uintptr_t to)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi, inode;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu", &lo, &hi, perms, &inode) == 4 &&
		    strcmp(perms, "---p") == 0 && inode == 0 && lo < to && hi > from)
			found = 1;
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * dx__map_file of a file of size bytes at dir/name (unlinked at once, so
 * that a test killed here leaves nothing in /dev/shm): the mapping holds
 * the file's bytes, starts on a 2 MiB boundary when the file has 2 MiB,
 * and no reservation is left beside it.  On tmpfs without huge pages
 * the kernel itself picks addresses on 4 KiB boundaries only: there a
 * plain mmap fails the check.
 */
static void map_file(const char *dir, size_t size)
{
	char name[300];
	snprintf(name, sizeof name, "%s/dx-map-%ld-%zu", dir, (long)getpid(), size);
	int fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(name);
	CHECK(ftruncate(fd, (off_t)size) == 0);
	unsigned char last = 0x5a;
	CHECK(pwrite(fd, &last, 1, (off_t)size - 1) == 1);
	const uintptr_t huge = (uintptr_t)2 << 20, whole = (size + 4095) / 4096 * 4096;
	for (int i = 0; i < 4; i++) {
		/* A page mapped between, so that the next free address moves. */
		void *gap = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		const unsigned char *m = dx__map_file(fd, size);
		CHECK(m != MAP_FAILED);
		if (m != MAP_FAILED) {
			if (size >= huge)
				CHECK_EQ((uintptr_t)m % huge, 0);
			CHECK_EQ(m[0], 0);
			CHECK_EQ(m[size - 1], 0x5a);
			CHECK(!reserved_within((uintptr_t)m - huge, (uintptr_t)m));
			CHECK(!reserved_within((uintptr_t)m + whole, (uintptr_t)m + whole + huge));
			CHECK(munmap((void *)m, size) == 0);
		}
		munmap(gap, 4096);
	}
	close(fd);
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

	CHECK(unit_mkdir());
	map_file(unit_dir, 4096);
	map_file(unit_dir, ((size_t)5 << 20) + 123);
	if (access("/dev/shm", W_OK) == 0)
		map_file("/dev/shm", ((size_t)3 << 20) + 1);
	CHECK(unit_rmdir());
	UNIT_DONE();
}

/*
 * measure.c: what a benchmark reads about processes and the machine:
 * memory from /proc/PID/smaps_rollup, page faults, a monotonic clock, and
 * the machine's cores, memory, kernel and filesystems, and what pinning
 * and RAM placement depend on (the memory-lock limit, transparent huge
 * pages, NUMA nodes, /dev/shm).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "dxbench.h"
#include "err.h"

double dxb_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void dxb_page_faults(uint64_t *minor, uint64_t *major)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) < 0)
		memset(&ru, 0, sizeof ru);
	*minor = (uint64_t)ru.ru_minflt;
	*major = (uint64_t)ru.ru_majflt;
}

/* Adds the "Key:   123 kB" lines of an smaps file into m.  smaps_rollup
 * has one set of them; smaps (kernels before 4.14) one per mapping, which
 * add up to the same figures. */
static void add_smaps(FILE *f, dxb_mem_usage *m)
{
	char line[256];
	while (fgets(line, sizeof line, f)) {
		char key[64];
		unsigned long long kb;
		if (sscanf(line, "%63[^:]: %llu kB", key, &kb) != 2)
			continue;
		uint64_t bytes = (uint64_t)kb * 1024;
		if (strcmp(key, "Rss") == 0)
			m->rss += bytes;
		else if (strcmp(key, "Pss") == 0)
			m->pss += bytes;
		else if (strcmp(key, "Private_Clean") == 0 || strcmp(key, "Private_Dirty") == 0)
			m->uss += bytes;
		else if (strcmp(key, "Anonymous") == 0)
			m->anon += bytes;
		else if (strcmp(key, "Pss_Anon") == 0)
			m->pss_anon += bytes, m->split = 1;
		else if (strcmp(key, "Pss_File") == 0)
			m->pss_file += bytes;
		else if (strcmp(key, "Swap") == 0)
			m->swap += bytes;
	}
}

int dxb_mem_usage_of(int pid, dxb_mem_usage *m, dx_err *err)
{
	char path[64];
	memset(m, 0, sizeof *m);
	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", pid ? pid : (int)getpid());
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(path, sizeof path, "/proc/%d/smaps", pid ? pid : (int)getpid());
		f = fopen(path, "re");
	}
	if (!f)
		return dx__fail_sys(err, path, "cannot read the memory of a process");
	add_smaps(f, m);
	fclose(f);
	/* Kernels before 5.9 do not split PSS: anonymous pages are taken
	 * whole, and the rest of PSS as the files'. */
	if (!m->split) {
		m->pss_anon = m->anon;
		m->pss_file = m->pss > m->anon ? m->pss - m->anon : 0;
	}
	return 0;
}

void dxb_meminfo_read(dxb_meminfo *m)
{
	static const struct { const char *name; size_t off; } fields[] = {
		{ "MemTotal:", offsetof(dxb_meminfo, total) },
		{ "MemAvailable:", offsetof(dxb_meminfo, available) },
		{ "Mlocked:", offsetof(dxb_meminfo, mlocked) },
		{ "Shmem:", offsetof(dxb_meminfo, shmem) },
	};
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	memset(m, 0, sizeof *m);
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		unsigned long long kb;
		for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
			size_t n = strlen(fields[i].name);
			if (strncmp(line, fields[i].name, n) == 0 && sscanf(line + n, "%llu kB", &kb) == 1)
				*(uint64_t *)((char *)m + fields[i].off) = (uint64_t)kb * 1024;
		}
	}
	fclose(f);
}

static void read_cpu_model(dxb_machine *m)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512];
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "model name", 10) != 0 || !colon)
			continue;
		colon += 1 + strspn(colon + 1, " \t");
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(m->cpu, sizeof m->cpu, "%s", colon);
		break;
	}
	fclose(f);
}

/* The setting in brackets of /sys/kernel/mm/transparent_hugepage/enabled,
 * "always [madvise] never". */
static void read_thp(dxb_machine *m)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
	char line[128], *open, *close;
	if (!f)
		return;
	if (fgets(line, sizeof line, f) && (open = strchr(line, '[')) && (close = strchr(open, ']'))) {
		*close = '\0';
		snprintf(m->thp, sizeof m->thp, "%s", open + 1);
	}
	fclose(f);
}

/* Nodes in /sys/devices/system/node/online, as "0" or "0-1,3". */
static void read_numa(dxb_machine *m)
{
	FILE *f = fopen("/sys/devices/system/node/online", "re");
	char line[256];
	if (!f)
		return;
	if (fgets(line, sizeof line, f))
		for (char *p = line; *p && *p != '\n';) {
			char *end;
			unsigned long a = strtoul(p, &end, 10), b = a;
			if (end == p)
				break;
			if (*end == '-')
				b = strtoul(end + 1, &end, 10);
			m->numa_nodes += b >= a ? (unsigned)(b - a + 1) : 0;
			p = end + (*end == ',');
		}
	fclose(f);
}

void dxb_machine_info(dxb_machine *m)
{
	struct statvfs sv;
	struct utsname u;
	memset(m, 0, sizeof *m);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	m->cores = n > 0 ? (unsigned)n : 0;
	dxb_meminfo mi;
	dxb_meminfo_read(&mi);
	m->mem_total = mi.total;
	m->mem_available = mi.available;
	read_cpu_model(m);
	read_thp(m);
	read_numa(m);
	m->memlock_limit = dxb_memlock_limit();
	if (statvfs("/dev/shm", &sv) == 0) {
		m->shm_size = (uint64_t)sv.f_blocks * sv.f_frsize;
		m->shm_free = (uint64_t)sv.f_bavail * sv.f_frsize;
	}
	if (uname(&u) == 0) {
		snprintf(m->kernel, sizeof m->kernel, "%s %s %s", u.sysname, u.release, u.machine);
		snprintf(m->hostname, sizeof m->hostname, "%s", u.nodename);
	}
}

/* Magic numbers of statfs(2)'s f_type, from linux/magic.h. */
static const struct { unsigned long magic; const char *name; } filesystems[] = {
	{ 0xEF53, "ext4" },           /* ext2, ext3 and ext4 share it */
	{ 0x58465342, "xfs" },
	{ 0x9123683E, "btrfs" },
	{ 0x01021994, "tmpfs" },
	{ 0x858458F6, "ramfs" },
	{ 0x794C7630, "overlayfs" },
	{ 0x6969, "nfs" },
	{ 0xFF534D42, "cifs" },
	{ 0x2FC12FC1, "zfs" },
	{ 0x65735546, "fuse" },
	{ 0xF2F52010, "f2fs" },
	{ 0x5346544E, "ntfs" },
	{ 0x4D44, "vfat" },
	{ 0x73717368, "squashfs" },
	{ 0x9FA0, "proc" },
	{ 0x62656572, "sysfs" },
	{ 0x01021997, "9p" },
	{ 0x47504653, "gpfs" },
	{ 0x0BD00BD0, "lustre" },
};

void dxb_fs_type(const char *path, char *out, size_t outsz)
{
	struct statfs st;
	if (statfs(path, &st) < 0) {
		snprintf(out, outsz, "%s", "");
		return;
	}
	unsigned long magic = (unsigned long)st.f_type & 0xFFFFFFFFul;
	for (size_t i = 0; i < sizeof filesystems / sizeof *filesystems; i++)
		if (filesystems[i].magic == magic) {
			snprintf(out, outsz, "%s", filesystems[i].name);
			return;
		}
	snprintf(out, outsz, "0x%lX", magic);
}

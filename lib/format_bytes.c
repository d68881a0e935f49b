/* format_bytes.c: byte counts for people, in powers of 1024. */
#include <stdio.h>

#include "docdex.h"

const char *dx_format_bytes(uint64_t n, char *buf, size_t bufsz)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	if (n < 1024) {
		snprintf(buf, bufsz, "%llu B", (unsigned long long)n);
		return buf;
	}
	double v = (double)n / 1024;
	size_t u = 0;
	/* 1023.95 and above would print as "1024.0": go to the next unit. */
	while (v >= 1023.95 && u + 1 < sizeof units / sizeof *units) {
		v /= 1024;
		u++;
	}
	snprintf(buf, bufsz, "%.1f %s", v, units[u]);
	return buf;
}

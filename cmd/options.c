/* options.c: the options several commands take (see options.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "docdex.h"
#include "options.h"

int opt_bad_value(const char *cmd, const char *name, const char *place, const char *hint,
                  const char *value)
{
	char what[512];
	if (place)
		snprintf(what, sizeof what, "%s: bad %s, give %s", place, name, hint);
	else
		snprintf(what, sizeof what, "bad --%s, give %s", name, hint);
	return cli_usage_error(cmd, what, value);
}

int opt_format(const char *cmd, const char *place, const char *value, const char *const *names,
               int *format)
{
	return opt_choice(cmd, "format", place, value, names, format);
}

int opt_choice(const char *cmd, const char *name, const char *place, const char *value,
               const char *const *names, int *choice)
{
	char hint[128];
	size_t n = 0, len = 0;
	for (; names[n]; n++)
		if (strcmp(value, names[n]) == 0) {
			*choice = (int)n;
			return 0;
		}
	/* "a, b or c" */
	hint[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof hint; i++)
		len += (size_t)snprintf(hint + len, sizeof hint - len, "%s%s",
		                        i == 0 ? "" : i + 1 < n ? ", " : " or ", names[i]);
	return opt_bad_value(cmd, name, place, hint, value);
}

int opt_seed(const char *cmd, const char *place, const char *value, uint64_t *seed)
{
	if (cli_parse_u64(value, seed) < 0)
		return opt_bad_value(cmd, "seed", place, "a non-negative integer", value);
	return 0;
}

int opt_access(const char *cmd, const char *value, int *access)
{
	/* In DX_ACCESS_* order, so that a choice is its access. */
	const char *const names[] = { dx_access_name(DX_ACCESS_AUTO), dx_access_name(DX_ACCESS_MMAP),
	                              dx_access_name(DX_ACCESS_PREAD), NULL };
	return opt_choice(cmd, "access", NULL, value, names, access);
}

int opt_inflate_cache(const char *cmd, const char *value, uint64_t *bytes)
{
	if (cli_parse_size(value, bytes) < 0 || *bytes == 0)
		return opt_bad_value(cmd, "inflate-cache", NULL, "a size such as 512M or 4G", value);
	return 0;
}

int opt_set_inflate_cache(const char *cmd, dx_corpus *c, uint64_t bytes)
{
	if (!bytes)
		return 0;
	dx_err err;
	int rc = dx_corpus_set_inflate_cache(c, bytes, NULL, &err);
	if (rc == DX_EINVAL) {
		cli_lib_error(cmd, &err);
		return EXIT_FAIL;
	}
	if (rc < 0) {
		char line[sizeof err.what + sizeof err.subject + 300];
		dx_describe(&err, line, sizeof line);
		fprintf(stderr, "docdex %s: warning: %s; reading without it\n", cmd, line);
	}
	return 0;
}

/*
 * options.h: the options that several commands take, declared and read in
 * one place, so that each means and says the same everywhere: -o/--output
 * (index, sample, bench, pin-test), -f/--force (index), --format (all
 * five, each with its own names), --seed (get, sample, bench, pin-test),
 * --access (get, sample) and --inflate-cache (get, sample, bench).  A command lists them
 * in its getopt_long table with the OPTION_* entries and reads their
 * values with opt_*; its own options take ids from OPT_OWN.
 */
#ifndef DX_OPTIONS_H
#define DX_OPTIONS_H

#include <getopt.h>
#include <stdint.h>

#include "docdex.h"

enum { OPT_FORMAT = 256, OPT_SEED, OPT_ACCESS, OPT_INFLATE_CACHE, OPT_OWN };

#define OPTION_OUTPUT { "output", required_argument, NULL, 'o' }
#define OPTION_FORMAT { "format", required_argument, NULL, OPT_FORMAT }
#define OPTION_SEED { "seed", required_argument, NULL, OPT_SEED }
#define OPTION_ACCESS { "access", required_argument, NULL, OPT_ACCESS }
#define OPTION_INFLATE_CACHE { "inflate-cache", required_argument, NULL, OPT_INFLATE_CACHE }
/* -f/--force: replace an existing output (see cli_check_replace). */
#define OPTION_FORCE { "force", no_argument, NULL, 'f' }
#define OPTION_HELP { "help", no_argument, NULL, 'h' }
#define OPTION_END { NULL, 0, NULL, 0 }

/* Says that the value of option name is bad and what to give instead:
 * "bad --NAME, give HINT" on the command line (place NULL), "PLACE: bad
 * NAME, give HINT" for a key of an experiment file at place ("FILE:LINE").
 * Returns EXIT_USAGE. */
int opt_bad_value(const char *cmd, const char *name, const char *place, const char *hint,
                  const char *value) __attribute__((cold));

/* --format: *format becomes the place of value among names (ending with
 * NULL).  Another value is a usage error whose hint lists the
 * names ("a, b or c").  Returns 0 or EXIT_USAGE. */
int opt_format(const char *cmd, const char *place, const char *value, const char *const *names,
               int *format);

/* --seed: a non-negative integer.  Returns 0 or EXIT_USAGE. */
/* The same for any option of a few named values: --NAME. */
int opt_choice(const char *cmd, const char *name, const char *place, const char *value,
               const char *const *names, int *choice);
int opt_seed(const char *cmd, const char *place, const char *value, uint64_t *seed);

/* --access: auto, mmap or pread, as DX_ACCESS_*.  Returns 0 or EXIT_USAGE. */
int opt_access(const char *cmd, const char *value, int *access);

/* The help line of --access, the same in every command. */
#define OPT_ACCESS_HELP \
	"      --access HOW         read records with auto, mmap or pread (default:\n" \
	"                           auto: the mapping while they are in memory)\n"

/* --inflate-cache: a size (512M, 4G).  Returns 0 or EXIT_USAGE. */
int opt_inflate_cache(const char *cmd, const char *value, uint64_t *bytes);
/* Gives c the inflate cache of that size (none for 0), in
 * $DOCDEX_CACHE_DIR or /dev/shm.  A size too small for the corpus fails
 * (EXIT_FAIL); a cache that cannot be had (no room, damaged and in use) is
 * a warning, and c reads without it.  Returns 0 or EXIT_FAIL. */
int opt_set_inflate_cache(const char *cmd, dx_corpus *c, uint64_t bytes);

/* The help line of --inflate-cache, the same in every command. */
#define OPT_INFLATE_CACHE_HELP \
	"      --inflate-cache SIZE share what is inflated from a gzip or BGZF corpus\n" \
	"                           with the other processes reading it, in a cache\n" \
	"                           of SIZE in /dev/shm (512M, 4G; default: none)\n"

#endif

/* version.c: what --version says: the version and how this binary was built. */
#include <stdio.h>
#include <yaml.h>
#include <zlib.h>

#include "docdex.h"
#include "version.h"

#ifndef DX_BUILD_CC
#define DX_BUILD_CC "unknown compiler"
#endif
#ifndef DX_BUILD_CFLAGS
#define DX_BUILD_CFLAGS ""
#endif

void print_version(FILE *f)
{
	fprintf(f, "docdex %s\n", dx_version());
	fprintf(f, "build: %s, flags: %s\n", DX_BUILD_CC, DX_BUILD_CFLAGS);
	fprintf(f, "zlib: %s (built with %s)\n", zlibVersion(), ZLIB_VERSION);
	fprintf(f, "libyaml: %s\n", yaml_get_version_string());
	fprintf(f, "codecs: %s\n", dx_codecs());
}

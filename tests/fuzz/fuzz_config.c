/*
 * fuzz_config.c: the YAML experiment file reader (dx_config_load) on
 * arbitrary bytes: it must load them or refuse them, never crash or leak.
 */
#include <string.h>

#include "docdex.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dx_err err = { 0 };
	dx_config *c = dx_config_load(fuzz_file("experiment.yaml", data, size), &err);
	if (c) {
		/* Every item is readable, its strings whole. */
		volatile size_t n = 0;
		for (size_t i = 0; i < dx_config_count(c); i++) {
			const dx_config_item *it = dx_config_item_at(c, i);
			n += strlen(it->key) + strlen(it->value) + it->line;
		}
		dx_config_free(c);
	}
	return 0;
}

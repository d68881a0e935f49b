/*
 * fuzz_config.c: the YAML experiment file reader (dxb_config_load) on
 * arbitrary bytes: it must load them or refuse them, never crash or leak.
 */
#include <string.h>

#include "dxbench.h"
#include "docdex.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dx_err err = { 0 };
	dxb_config *c = dxb_config_load(fuzz_file("experiment.yaml", data, size), &err);
	if (c) {
		/* Every item is readable, its strings whole. */
		volatile size_t n = 0;
		for (size_t i = 0; i < dxb_config_count(c); i++) {
			const dxb_config_item *it = dxb_config_item_at(c, i);
			n += strlen(it->key) + strlen(it->value) + it->line;
		}
		dxb_config_free(c);
	}
	return 0;
}

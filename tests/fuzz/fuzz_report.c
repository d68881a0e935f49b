/*
 * fuzz_report.c: the JSON report reader behind bench and pin-test's --from
 * and --baseline (bench/report_read.c) on arbitrary bytes, and then what
 * --from does with a report it read: the table, CSV, JSON, Markdown and
 * SVG writers (bench/results.c, bench/plot.c) and the baseline comparison.
 * Each must read or refuse, then write, in time and memory bounded by the
 * input (libFuzzer's -timeout and -rss_limit_mb catch a hang or a blow-up),
 * never crash or leak.  The JSON written must read back as a report.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dxbench.h"
#include "docdex.h"
#include "fuzz.h"

/* bench's dimensions and figures (cmd/bench.c, bench/figures.c), and
 * pin-test's (cmd/pin_test.c): the reader takes what the command asks
 * for, so both commands' shapes are read. */
static const dxb_rs_dim bench_dims[] = {
	{ "strategy", "strategy", 0, NULL },
	{ "workers", "j", 1, NULL },
	{ "threads", "t", 1, NULL },
};

static const dxb_rs_dim pin_dims[] = {
	{ "pin", "pin", 0, NULL },
	{ "placement", "placement", 0, NULL },
	{ "cache", "cache", 0, NULL },
	{ "workers", "j", 1, NULL },
	{ "threads", "t", 1, NULL },
};

static const dxb_rs_metric metrics[] = {
	{ "samples_per_s", "samples/s", "1/s", DXB_RS_HIGHER, 1, 1, 0, NULL },
	{ "docs_per_s", "docs/s", "1/s", DXB_RS_HIGHER, 0, 0, 1, NULL },
	{ "mib_per_s", "MiB/s", "MiB/s", DXB_RS_HIGHER, 0, 1, 1, NULL },
	{ "latency_p50_ms", "p50 ms", "ms", DXB_RS_LOWER, 0, 3, 0, NULL },
	{ "latency_p95_ms", "p95 ms", "ms", DXB_RS_LOWER, 0, 3, 1, NULL },
	{ "latency_p99_ms", "p99 ms", "ms", DXB_RS_LOWER, 0, 3, 0, NULL },
	{ "setup_s", "setup s", "s", DXB_RS_LOWER, 0, 2, 0, NULL },
	{ "pss_mib", "PSS MiB", "MiB", DXB_RS_LOWER, 1, 1, 0, NULL },
	{ "uss_per_worker_mib", "USS/w MiB", "MiB", DXB_RS_LOWER, 0, 1, 1, NULL },
	{ "rss_per_worker_mib", "RSS/w MiB", "MiB", DXB_RS_LOWER, 0, 1, 1, NULL },
	{ "minor_faults", "minflt", "", DXB_RS_LOWER, 0, 0, 1, NULL },
	{ "major_faults", "majflt", "", DXB_RS_LOWER, 0, 0, 0, NULL },
	/* pin-test's own */
	{ "pin_s", "pin s", "s", DXB_RS_LOWER, 0, 2, 0, NULL },
	{ "copy_s", "copy s", "s", DXB_RS_LOWER, 0, 2, 0, NULL },
	{ "cached_pct", "cached %", "%", DXB_RS_NEITHER, 0, 0, 0, NULL },
	{ "mlocked_mib", "locked MiB", "MiB", DXB_RS_LOWER, 0, 1, 0, NULL },
	{ "shmem_mib", "Shmem MiB", "MiB", DXB_RS_LOWER, 0, 1, 0, NULL },
	{ "h2d_gb_s", "H2D GB/s", "GB/s", DXB_RS_HIGHER, 0, 2, 0, NULL },
};

enum { BENCH_METRICS = 12, PIN_METRICS = sizeof metrics / sizeof *metrics };

static FILE *devnull(void)
{
	static FILE *f;
	if (!f && !(f = fopen("/dev/null", "w")))
		abort();
	return f;
}

/* Everything --from does with the report at path, as command cmd. */
static void report_as(const char *path, int pin)
{
	dxb_rs_matrix m = {
		.command = pin ? "pin-test" : "bench",
		.dims = pin ? pin_dims : bench_dims,
		.ndims = pin ? 5 : 3,
		.metrics = metrics,
		.nmetrics = pin ? PIN_METRICS : BENCH_METRICS,
		.primary = 0,
		.group_dim = pin ? 3 : 1,
		.x_dim = pin ? 3 : 1,
		.plot_metrics = { 0, 7 },
		.preamble = pin ? "environment\n" : NULL,
		.epilogue = pin ? "summary\n" : NULL,
	};
	dx_err err = { 0 };
	FILE *null = devnull();
	if (dxb_rs_read_report(&m, path, &err) == 0) {
		/* The header from the report's params and machine, and the
		 * table in both widths, as matrix_report writes them. */
		char *header = dxb_rs_header(&m);
		if (!header)
			abort();
		m.header = header;
		dxb_rs_write_table(&m, null);
		m.wide = 1;
		dxb_rs_write_table(&m, null);
		m.wide = 0;
		dxb_rs_write_csv(&m, null);
		dxb_rs_write_markdown(&m, null);
		dxb_rs_write_svg(&m, null);
		char buf[64];
		dxb_rs_json_get(m.environment_json, "kernel", buf, sizeof buf);
		dxb_rs_json_get(m.params_json, "workers", buf, sizeof buf);

		/* What dxb_rs_write_json writes is a report again, of the same
		 * cells: it must read back. */
		const char *again = fuzz_path("again.json");
		FILE *f = fopen(again, "w");
		if (!f || dxb_rs_write_json(&m, f) < 0 || fclose(f) != 0)
			abort();
		dxb_rs_matrix back = m;
		back.cells = NULL;
		back.ncells = 0;
		back.loaded = NULL;
		dx_err berr = { 0 };
		if (dxb_rs_read_report(&back, again, &berr) < 0 || back.ncells != m.ncells) {
			fprintf(stderr, "the JSON written does not read back: %s: %s\n", berr.what,
			        berr.subject);
			abort();
		}
		dxb_rs_compare_baseline(&m, again, 10, null, &berr);
		dxb_rs_free_report(&back);
		free(header);
		m.header = NULL;
	}
	/* The input as a baseline, whether or not it read as a report. */
	dxb_rs_compare_baseline(&m, path, 10, null, &err);
	dxb_rs_free_report(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("report.json", data, size);
	report_as(path, 0);
	report_as(path, 1);
	return 0;
}

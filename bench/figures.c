/*
 * figures.c: a repetition's common figures, summed or taken over its
 * workers.
 */
#include <string.h>

#include "dxbench.h"

/* What bench's table shows by default fits 100 columns; the rest is in
 * --wide, CSV and JSON.  pin-test picks its own (make_metrics). */
const dxb_rs_metric dxb_figures_metrics[FG_COUNT] = {
	[FG_SAMPLES] = { "samples_per_s", "samples/s", "1/s", DXB_RS_HIGHER, 1, 1, DXB_RS_SHOW,
	                 "training samples a second, all workers together" },
	[FG_DOCS] = { "docs_per_s", "docs/s", "1/s", DXB_RS_HIGHER, 0, 0, DXB_RS_WIDE,
	              "documents a second (a triple holds 1 + negatives)" },
	[FG_MB] = { "mib_per_s", "MiB/s", "MiB/s", DXB_RS_HIGHER, 0, 1, DXB_RS_SHOW,
	            "text read a second" },
	[FG_P50] = { "latency_p50_ms", "p50 ms", "ms", DXB_RS_LOWER, 0, 3, DXB_RS_SHOW,
	             "median time to a batch" },
	[FG_P95] = { "latency_p95_ms", "p95 ms", "ms", DXB_RS_LOWER, 0, 3, DXB_RS_WIDE, NULL },
	[FG_P99] = { "latency_p99_ms", "p99 ms", "ms", DXB_RS_LOWER, 0, 3, DXB_RS_SHOW,
	             "99th percentile of it" },
	[FG_SETUP] = { "setup_s", "setup s", "s", DXB_RS_LOWER, 0, 2, DXB_RS_SHOW,
	               "a worker's time to open or load the corpus" },
	[FG_PSS] = { "pss_mib", "PSS MiB", "MiB", DXB_RS_LOWER, 1, 1, DXB_RS_WIDE,
	             "proportional set size: what the workers own plus their shares of the page cache they map" },
	/* RSS and USS count a mapping's page-cache pages as a process's own:
	 * kept for the CSV and JSON, left out of the table for the two below. */
	[FG_USS] = { "uss_per_worker_mib", "USS/w MiB", "MiB", DXB_RS_LOWER, 0, 1, DXB_RS_HIDE, NULL },
	[FG_RSS] = { "rss_per_worker_mib", "RSS/w MiB", "MiB", DXB_RS_LOWER, 0, 1, DXB_RS_HIDE, NULL },
	[FG_MINFLT] = { "minor_faults", "minflt", "", DXB_RS_LOWER, 0, 0, DXB_RS_WIDE,
	                "page faults met in memory" },
	[FG_MAJFLT] = { "major_faults", "majflt", "", DXB_RS_LOWER, 0, 0, DXB_RS_WIDE,
	                "page faults that read the disk" },
	/* PSS split: memory the workers own (what runs a machine out of it),
	 * and the corpus's page-cache pages they map, counted once. */
	[FG_PRIVATE] = { "private_mib", "private MiB", "MiB", DXB_RS_LOWER, 0, 1, DXB_RS_SHOW,
	                 "memory the workers own (what runs out)" },
	[FG_FILE] = { "file_mib", "file MiB", "MiB", DXB_RS_NEITHER, 0, 1, DXB_RS_SHOW,
	              "page cache they map, counted once (reclaimable)" },
	/* Decompression work: what an inflate cache saves. */
	[FG_INFLATE] = { "inflate_mib_per_s", "inflate MiB/s", "MiB/s", DXB_RS_LOWER, 0, 1, DXB_RS_WIDE,
	                 "bytes inflated a second, all workers together (gzip, BGZF)" },
};

void dxb_figures_of(const dxb_workers_result *res, double *row)
{
	uint64_t hist[HIST_BUCKETS] = { 0 };
	double mib = 1024.0 * 1024.0;
	memset(row, 0, FG_COUNT * sizeof *row);
	for (unsigned i = 0; i < res->n; i++) {
		const dxb_worker_result *w = &res->w[i];
		double secs = w->elapsed_s > 0 ? w->elapsed_s : 1e-9;
		row[FG_SAMPLES] += (double)w->samples / secs;
		row[FG_DOCS] += (double)w->docs / secs;
		row[FG_MB] += (double)w->bytes / secs / mib;
		if (w->setup_s > row[FG_SETUP])
			row[FG_SETUP] = w->setup_s;
		row[FG_PSS] += (double)res->mem[i].pss / mib;
		row[FG_USS] += (double)res->mem[i].uss / mib / res->n;
		row[FG_RSS] += (double)res->mem[i].rss / mib / res->n;
		row[FG_PRIVATE] += (double)res->mem[i].pss_anon / mib;
		row[FG_FILE] += (double)res->mem[i].pss_file / mib;
		row[FG_MINFLT] += (double)w->minor_faults;
		row[FG_MAJFLT] += (double)w->major_faults;
		row[FG_INFLATE] += (double)w->inflated / secs / mib;
		for (unsigned k = 0; k < HIST_BUCKETS; k++)
			hist[k] += w->hist[k];
	}
	row[FG_P50] = dxb_hist_quantile(hist, 0.50) * 1e3;
	row[FG_P95] = dxb_hist_quantile(hist, 0.95) * 1e3;
	row[FG_P99] = dxb_hist_quantile(hist, 0.99) * 1e3;
}

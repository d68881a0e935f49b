#!/usr/bin/env python3
"""make bench: docdex index and get on generated ~1 GB corpora, plain and gzipped.

Every figure is measured in this run, against a reference measured in the
same run on the same file (wc -l for a scan, a Python dict holding every
document for lookups), warm page cache, median of --repeat runs.

  index build       seconds, and speed as a ratio to `wc -l` (goal >= 0.5)
  get, 1M ids       lookups/s from stdin to /dev/null (goal >= 1M/s, and
                    faster than the Python dict)
  index size        bytes per record, and without the id bytes (goal <= 16)
  get memory        peak private (anonymous) memory as a fraction of the
                    corpus (goal < 5%); file pages are the shared page cache

and for the corpora compressed with gzip -6 and rewritten with --bgzf:

  index build       as a ratio to `gzip -dc FILE > /dev/null` (goal <= 0.5),
                    and to the fastest of the other decompressors installed,
                    each timed the same way in the same run: pigz -dc,
                    igzip -dc (ISA-L), bgzip -dc (goal <= 1.0); the BGZF
                    file's index build against bgzip -dc of it
  get latency       per document, ids one at a time (--batch 1) and in
                    batches of 1,000, process start-up subtracted (goals:
                    <= 0.6 ms on gzip at the default span, <= 0.05 ms on BGZF);
                    2,000 random ids a run for gzip, 20,000 for BGZF (runs
                    of about a second each), and BGZF's first 2,000 alone:
                    a fresh process's first reads of the compressed file
                    map its pages, which a long-lived reader has mapped
  index size        access points and windows as a share of the compressed
                    file (goal <= 1% for gzip), and the whole index
  --bgzf size       relative to gzip -6 (goal <= 1.02), and the time to write
                    it (the index of the output included) with -@ 1 and -@ 2
  spans             build, size and latency at other spans than the default

and for docdex sample on the passages, with 100k generated queries, their
qrels and a 100-deep run (--sample-queries, --sample-depth):

  triples/s         to /dev/null, one process: --count N less the set-up
                    (the same command with --count 1) (goal >= 300k/s)
  memory            peak private memory with the inputs loaded and nothing
                    drawn, and while drawing (goal: the inputs plus < 64 MB),
                    on this corpus and on one a quarter of its size
  2 processes       --world-size 2, both at once: total triples/s and the
                    peak of their summed PSS (smaps_rollup)

and for docdex bench (--study-size, default 2G of documents, with 10k
generated queries, their qrels and a 100-deep run):

  the study         docdex bench -j 1,2,4,8, strategies memory, stdio, pread
                    and mmap, triples: its table, and for each worker count
                    the fastest strategy and its lead over the next
  harness overhead  docdex bench's samples/s for mmap (1 worker, batches of
                    1024) against docdex sample writing the same triples to
                    /dev/null, less its set-up (goal: within 10%)
  pin-test          docdex pin-test --pin none,buffers,corpus -j 1,2
                    --placement disk,ramdisk --cache warm,cold on the same
                    corpus: its table and summary (--no-pin-study to skip it,
                    --only-pin-study for it alone)

Corpora are generated once under --dir and kept for later runs.
"""
import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time

MiB = 1 << 20


def run(cmd, **kw):
    """Runs a command; returns its wall time in seconds."""
    t = time.perf_counter()
    subprocess.run(cmd, check=True, **kw)
    return time.perf_counter() - t


def median_time(cmd, repeat, **kw):
    run(cmd, **kw)  # warm the page cache and the binary
    return statistics.median(run(cmd, **kw) for _ in range(repeat))


def peak_memory(cmd, stdin_path):
    """Runs cmd with stdin from a file, output to /dev/null, polling
    /proc/PID/status; returns peak RssAnon and VmHWM in bytes, and seconds."""
    peak = {"RssAnon": 0, "RssFile": 0, "VmHWM": 0}
    t = time.perf_counter()
    with open(stdin_path, "rb") as f:
        p = subprocess.Popen(cmd, stdin=f, stdout=subprocess.DEVNULL)
        status = f"/proc/{p.pid}/status"
        while p.poll() is None:
            try:
                for line in open(status):
                    key, _, value = line.partition(":")
                    if key in peak:
                        peak[key] = max(peak[key], int(value.split()[0]) * 1024)
            except (FileNotFoundError, ProcessLookupError, ValueError):
                pass
            time.sleep(0.002)
    if p.returncode != 0:
        sys.exit(f"bench: {cmd} exited with {p.returncode}")
    return peak, time.perf_counter() - t


def pss_of(pid):
    """PSS and anonymous bytes of a live process (smaps_rollup)."""
    out = {}
    try:
        for line in open(f"/proc/{pid}/smaps_rollup"):
            key, _, value = line.partition(":")
            if key in ("Pss", "Anonymous"):
                out[key] = int(value.split()[0]) * 1024
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass
    return out


def run_together(cmds, poll_pss=False):
    """Runs the commands at once, output to /dev/null; returns the wall time
    and, with poll_pss, the peak of their summed PSS (reading smaps_rollup
    walks the page tables, so timed runs do not poll)."""
    t = time.perf_counter()
    ps = [subprocess.Popen(c, stdout=subprocess.DEVNULL) for c in cmds]
    peak = 0
    while poll_pss and any(p.poll() is None for p in ps):
        peak = max(peak, sum(pss_of(p.pid).get("Pss", 0) for p in ps))
        time.sleep(0.1)
    for p in ps:
        p.wait()
    wall = time.perf_counter() - t
    if any(p.returncode for p in ps):
        sys.exit(f"bench: {cmds[0]} failed")
    return wall, peak


PY_DICT = r"""
import statistics, sys, time, resource
d = {}
with open(sys.argv[1], "rb") as f:
    for line in f:
        d[line.split(b"\t", 1)[0]] = line
ids = open(sys.argv[2], "rb").read().split(b"\n")[:-1]
out = open("/dev/null", "wb")
w = out.write
times = []
for _ in range(int(sys.argv[3])):
    t = time.perf_counter()
    for i in ids:
        w(d[i])
    times.append(time.perf_counter() - t)
print(statistics.median(times), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def recache(path):
    """Reads path into the page cache afresh, in large reads, as copying
    or indexing a file leaves it: the kernel then holds it in large folios,
    which a mapping maps 2 MiB at a time.  A file that came into the cache
    page by page (faults, small reads) stays in 4 KiB pages, and a fresh
    docdex get spends longer mapping them (1M ids on the 1 GiB passages:
    0.68-0.82 s against 0.50-0.56 s; README, Real sizes), so the figures
    would hang on how the file happened to come in."""
    with open(path, "rb") as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        while f.read(1 << 20):
            pass


def bench_corpus(args, kind, path):
    dx = args.docdex
    size = os.path.getsize(path)
    r = {"kind": kind, "corpus": os.path.basename(path), "corpus_bytes": size}

    # Index build, interleaved with wc -l so both see the same machine state.
    run([dx, "index", "-q", path])
    run(["wc", "-l", path], stdout=subprocess.DEVNULL)
    idx, wc = [], []
    for _ in range(args.repeat):
        wc.append(run(["wc", "-l", path], stdout=subprocess.DEVNULL))
        idx.append(run([dx, "index", "-q", path]))
    r["index_s"] = statistics.median(idx)
    r["wc_s"] = statistics.median(wc)
    r["index_speed_vs_wc"] = r["wc_s"] / r["index_s"]

    stats = dict(
        line.split("\t", 1)
        for line in subprocess.run([dx, "index", "--stats", path], check=True, capture_output=True,
                                   text=True).stdout.splitlines()
        if line.count("\t") == 1)
    n = int(stats["records"])
    r["records"] = n
    r["id_kind"] = stats["id-kind"]
    r["index_bytes"] = int(stats["bytes"])
    # The id bytes: what the pool holds beyond one length byte per id.
    ids = [line.split(b"\t", 1)[0] for line in open(path, "rb")]
    id_bytes = sum(len(i) for i in ids) if r["id_kind"] == "hash" else 0
    r["index_bytes_per_record"] = r["index_bytes"] / n
    r["index_bytes_per_record_less_ids"] = (r["index_bytes"] - id_bytes) / n

    # 1M random ids, the same for docdex and the dict.
    rng = random.Random(7)
    ids_path = path + ".ids"
    with open(ids_path, "wb") as f:
        f.write(b"".join(ids[rng.randrange(n)] + b"\n" for _ in range(args.lookups)))
    del ids
    get = [dx, "get", path]
    recache(path)
    with open(ids_path, "rb") as f:
        times = []
        for _ in range(args.repeat + 1):
            f.seek(0)
            times.append(run(get, stdin=f, stdout=subprocess.DEVNULL))
    r["get_s"] = statistics.median(times[1:])
    r["get_lookups_per_s"] = args.lookups / r["get_s"]
    # Through a pipe the kernel copies every document once.
    with open(ids_path, "rb") as f:
        times = []
        for _ in range(args.repeat):
            f.seek(0)
            times.append(run(f"'{dx}' get '{path}' | cat > /dev/null", shell=True, stdin=f))
    r["get_pipe_lookups_per_s"] = args.lookups / statistics.median(times)

    peak, _ = peak_memory(get, ids_path)
    r["get_peak_rss_anon_bytes"] = peak["RssAnon"]
    r["get_peak_rss_file_bytes"] = peak["RssFile"]
    r["get_peak_vmhwm_bytes"] = peak["VmHWM"]
    r["get_private_fraction_of_corpus"] = peak["RssAnon"] / size

    if not args.no_python:
        out = subprocess.run([sys.executable, "-c", PY_DICT, path, ids_path, str(args.repeat)],
                             check=True, capture_output=True, text=True).stdout.split()
        r["dict_lookups_per_s"] = args.lookups / float(out[0])
        r["dict_peak_rss_bytes"] = int(out[1])
        r["get_vs_dict"] = r["get_lookups_per_s"] / r["dict_lookups_per_s"]
    os.unlink(ids_path)
    return r


def sample_inputs(args, path, size):
    """The corpus and its generated queries, qrels and run; the corpus is
    indexed.  Returns the sample command without --count."""
    base = path[:-len(".tsv")]
    files = [base + ext for ext in (".queries.tsv", ".qrels", ".run")]
    if not all(os.path.exists(f) for f in files + [path]):
        print(f"bench: generating {path} and its topics", file=sys.stderr)
        run([args.synth, "--kind", "passages", "--size", size, "-o", path + ".tmp",
             "--queries", files[0], "--qrels", files[1], "--run", files[2] + ".tmp",
             "--nqueries", str(args.sample_queries), "--depth", str(args.sample_depth)])
        os.rename(files[2] + ".tmp", files[2])
        os.rename(path + ".tmp", path)
    if not os.path.exists(path + ".ddx"):
        run([args.docdex, "index", "-q", path])
    return [args.docdex, "sample", "--queries", files[0], "--qrels", files[1], "--run", files[2],
            "--depth", str(args.sample_depth)], files


def bench_sample(args, path):
    n = args.triples
    cmd, files = sample_inputs(args, path, args.size)
    r = {"corpus_bytes": os.path.getsize(path), "triples": n,
         "input_bytes": sum(os.path.getsize(f) for f in files)}
    setup = median_time(cmd + [path, "--count", "1"], args.repeat, stdout=subprocess.DEVNULL)
    full = median_time(cmd + [path, "--count", str(n)], args.repeat, stdout=subprocess.DEVNULL)
    r["setup_s"] = setup
    r["full_s"] = full
    r["triples_per_s"] = n / (full - setup)
    r["triples_per_s_with_setup"] = n / full

    def memory(corpus, count):
        peak, _ = peak_memory(cmd + [corpus, "--count", str(count)], "/dev/null")
        return peak
    loaded, drawing = memory(path, 1), memory(path, n)
    r["loaded_rss_anon_bytes"] = loaded["RssAnon"]
    r["drawing_rss_anon_bytes"] = drawing["RssAnon"]
    r["drawing_vmhwm_bytes"] = drawing["VmHWM"]
    # The same inputs' shape over a corpus a quarter of the size.
    small = os.path.join(args.dir, f"passages-sample-{args.size}-quarter.tsv")
    small_cmd, _ = sample_inputs(args, small, str(max(1, r["corpus_bytes"] // 4)))
    peak, _ = peak_memory(small_cmd + [small, "--count", str(n)], "/dev/null")
    r["small_corpus_bytes"] = os.path.getsize(small)
    r["small_drawing_rss_anon_bytes"] = peak["RssAnon"]
    peak, _ = peak_memory(small_cmd + [small, "--count", "1"], "/dev/null")
    r["small_loaded_rss_anon_bytes"] = peak["RssAnon"]

    two = [cmd + [path, "--count", str(n), "--world-size", "2", "--rank", str(k)] for k in (0, 1)]
    r["two_wall_s"] = statistics.median(run_together(two)[0] for _ in range(args.repeat))
    r["two_triples_per_s"] = n / r["two_wall_s"]
    r["two_triples_per_s_less_setup"] = n / (r["two_wall_s"] - setup)
    r["two_peak_pss_bytes"] = run_together(two, poll_pss=True)[1]
    return r


def report_sample(r):
    rows = [
        ("corpus, MiB", f"{r['corpus_bytes'] / MiB:.0f}"),
        ("queries + qrels + run files, MiB", f"{r['input_bytes'] / MiB:.0f}"),
        ("set-up (read inputs, --count 1), s", f"{r['setup_s']:.2f}"),
        (f"{r['triples']:,} triples, s", f"{r['full_s']:.2f}"),
        ("triples/s less set-up (goal >= 300k)", f"{r['triples_per_s'] / 1e3:.0f}k"),
        ("triples/s with set-up", f"{r['triples_per_s_with_setup'] / 1e3:.0f}k"),
        ("peak private memory, inputs loaded, MiB", f"{r['loaded_rss_anon_bytes'] / MiB:.1f}"),
        ("peak private memory, drawing, MiB", f"{r['drawing_rss_anon_bytes'] / MiB:.1f}"),
        ("  drawing less loaded (goal < 64)", f"{(r['drawing_rss_anon_bytes'] - r['loaded_rss_anon_bytes']) / MiB:.1f}"),
        ("peak RSS incl. page cache, MiB", f"{r['drawing_vmhwm_bytes'] / MiB:.0f}"),
        (f"corpus of {r['small_corpus_bytes'] / MiB:.0f} MiB: loaded / drawing, MiB",
         f"{r['small_loaded_rss_anon_bytes'] / MiB:.1f} / {r['small_drawing_rss_anon_bytes'] / MiB:.1f}"),
        ("2 processes (--world-size 2): triples/s", f"{r['two_triples_per_s'] / 1e3:.0f}k"),
        ("  less the set-up of one", f"{r['two_triples_per_s_less_setup'] / 1e3:.0f}k"),
        ("2 processes: peak total PSS, MiB", f"{r['two_peak_pss_bytes'] / MiB:.0f}"),
    ]
    width = max(len(name) for name, _ in rows)
    print("\ndocdex sample, passages: medians, warm cache, output to /dev/null")
    for name, value in rows:
        print(f"{name:<{width}}  {value:>14}")


def study_corpus(args):
    """The study's corpus of documents, indexed, and its triples' inputs."""
    path = os.path.join(args.dir, f"documents-study-{args.study_size}.tsv")
    base = path[:-len(".tsv")]
    q, qrels, run_file = base + ".queries.tsv", base + ".qrels", base + ".run"
    if not os.path.exists(path):
        print(f"bench: generating {path} and its topics", file=sys.stderr)
        run([args.synth, "--kind", "documents", "--size", args.study_size, "-o", path + ".tmp",
             "--queries", q, "--qrels", qrels, "--run", run_file, "--nqueries", "10000",
             "--depth", "100"])
        os.rename(path + ".tmp", path)
    if not os.path.exists(path + ".ddx"):
        run([args.docdex, "index", "-q", path])
    return path, ["--queries", q, "--qrels", qrels, "--run", run_file]


def bench_pin_study(args):
    """docdex pin-test's matrix on the study's corpus: pinning, workers, a
    RAM disk, warm and cold; its report is pin-study.json."""
    path, inputs = study_corpus(args)
    out = os.path.join(args.dir, "pin-study.json")
    print("bench: docdex pin-test on the study's corpus", file=sys.stderr)
    subprocess.run([args.docdex, "pin-test", "--pin", "none,buffers,corpus", "-j", "1,2",
                    "--placement", "disk,ramdisk", "--cache", "warm,cold", "--duration", "3",
                    "--warmup", "1", "--repeat", str(min(args.repeat, 3)), "-q", "-f", "-o", out,
                    "--plot", os.path.join(args.dir, "pin-study.svg"), *inputs, path], check=True)
    return out


def report_pin_study(out):
    print("\ndocdex pin-test on the study's corpus (the table is docdex pin-test's)")
    subprocess.run([ARGS.docdex, "pin-test", "--from", out], check=True)


def bench_study(args):
    """The study's matrix with docdex bench, and its harness overhead."""
    path, inputs = study_corpus(args)
    out = os.path.join(args.dir, "study.json")
    print("bench: docdex bench, the study", file=sys.stderr)
    subprocess.run([args.docdex, "bench", "-j", args.study_workers, "--strategies",
                    "memory,stdio,pread,mmap", "--duration", "3", "--warmup", "1",
                    "--repeat", str(min(args.repeat, 3)), "-q", "-f", "-o", out,
                    "--plot", os.path.join(args.dir, "study.svg"), *inputs, path], check=True)
    with open(out) as f:
        study = json.load(f)

    # The harness against docdex sample: the same triples, one process.
    print("bench: docdex bench against docdex sample", file=sys.stderr)
    hout = os.path.join(args.dir, "harness.json")
    subprocess.run([args.docdex, "bench", "--strategies", "mmap", "--batch", "1024",
                    "--duration", "5", "--warmup", "1", "--repeat", str(args.repeat), "-q",
                    "-f", "-o", hout, *inputs, path], check=True)
    with open(hout) as f:
        harness = json.load(f)["cells"][0]["summary"]["samples_per_s"]["median"]
    n = 2_000_000
    cmd = [args.docdex, "sample", *inputs, path, "--count"]
    setup = median_time(cmd + ["1"], args.repeat, stdout=subprocess.DEVNULL)
    full = median_time(cmd + [str(n)], args.repeat, stdout=subprocess.DEVNULL)
    return {"corpus_bytes": os.path.getsize(path), "study": study,
            "bench_mmap_samples_per_s": harness, "sample_triples_per_s": n / (full - setup),
            "sample_setup_s": setup}


def report_study(r):
    print(f"\ndocdex bench, the study: {r['corpus_bytes'] / MiB:.0f} MiB of documents, triples; "
          "medians (the table is docdex bench's)")
    subprocess.run([ARGS.docdex, "bench", "--from", os.path.join(ARGS.dir, "study.json")],
                   check=True)
    by_workers = {}
    for c in r["study"]["cells"]:
        if c["status"] == "ok":
            by_workers.setdefault(c["workers"], []).append(
                (c["summary"]["samples_per_s"]["median"], c["strategy"], c["summary"]["pss_mib"]["median"]))
    print("\nworkers  fastest   samples/s  lead over the next  PSS MiB of each strategy")
    for w, cells in sorted(by_workers.items()):
        cells.sort(reverse=True)
        lead = f"{cells[0][0] / cells[1][0]:.2f}x {cells[1][1]}" if len(cells) > 1 else "-"
        pss = ", ".join(f"{s} {p:.0f}" for _, s, p in sorted(cells, key=lambda x: x[1]))
        print(f"{w:>7}  {cells[0][1]:<8} {cells[0][0]:>10.0f}  {lead:<18}  {pss}")
    ratio = r["bench_mmap_samples_per_s"] / r["sample_triples_per_s"]
    print(f"\nharness: docdex bench mmap {r['bench_mmap_samples_per_s'] / 1e3:.0f}k samples/s, "
          f"docdex sample {r['sample_triples_per_s'] / 1e3:.0f}k triples/s less set-up: "
          f"ratio {ratio:.2f} (goal within 10%: {'MET' if abs(ratio - 1) <= 0.10 else 'NOT MET'})")


def stats_of(dx, path):
    """The --stats lines of an index: keys, and the source rows."""
    out = subprocess.run([dx, "index", "--stats", path], check=True, capture_output=True,
                         text=True).stdout.splitlines()
    keys = dict(line.split("\t", 1) for line in out if line.count("\t") == 1)
    sources = [line.split("\t")[1:] for line in out if line.startswith("source\t")]
    return keys, sources


def per_doc(args, dx, path, ids_path, batch, n):
    """Median seconds per document for get of n ids, start-up subtracted."""
    empty = path + ".none"
    open(empty, "w").close()
    def timed(ids):
        with open(ids, "rb") as f:
            return run([dx, "get", "--batch", str(batch), path], stdin=f, stdout=subprocess.DEVNULL)
    timed(ids_path)
    startup = statistics.median(timed(empty) for _ in range(args.repeat))
    total = statistics.median(timed(ids_path) for _ in range(args.repeat))
    os.unlink(empty)
    return (total - startup) / n


# The decompressors a gzip index build is held against, each where it is
# installed (gzip always is): pigz, igzip (Debian's isal) and bgzip
# (tabix) read a plain gzip file too, each as it runs by default.
REFERENCE_DECOMPRESSORS = ["gzip", "pigz", "igzip", "bgzip"]


def bench_gzip(args, kind, path):
    dx = args.docdex
    gz, bgz = path + ".gz", path + ".bgz"
    if not os.path.exists(gz):
        print(f"bench: gzip -6 {path}", file=sys.stderr)
        with open(gz + ".tmp", "wb") as f:
            run(["gzip", "-6", "-c", path], stdout=f)
        os.rename(gz + ".tmp", gz)
    r = {"kind": kind, "gzip_bytes": os.path.getsize(gz)}

    run([dx, "index", "-q", gz])
    # Each reference in turn with the build, so that a drift of the
    # machine's speed meets them all.
    refs = [t for t in REFERENCE_DECOMPRESSORS if shutil.which(t)]
    idx, dc = [], {t: [] for t in refs}
    for _ in range(args.repeat):
        for t in refs:
            dc[t].append(run(f"{t} -dc '{gz}' > /dev/null", shell=True))
        idx.append(run([dx, "index", "-q", gz]))
    r["gz_index_s"] = statistics.median(idx)
    r["refs_dc_s"] = {t: statistics.median(v) for t, v in dc.items()}
    r["gzip_dc_s"] = r["refs_dc_s"]["gzip"]
    r["gz_index_vs_gzip_dc"] = r["gz_index_s"] / r["gzip_dc_s"]
    fastest = min((v, t) for t, v in r["refs_dc_s"].items())
    r["fastest_ref"], r["gz_index_vs_fastest"] = fastest[1], r["gz_index_s"] / fastest[0]
    keys, src = stats_of(dx, gz)
    n = int(keys["records"])
    r["gz_points"], r["gz_window_bytes"] = int(src[0][7]), int(src[0][8])
    r["gz_index_bytes"] = int(keys["bytes"])
    records_bytes = 8 * n
    r["gz_points_pct_of_gzip"] = 100 * (32 * r["gz_points"] + r["gz_window_bytes"]) / r["gzip_bytes"]
    r["gz_index_pct_of_gzip"] = 100 * r["gz_index_bytes"] / r["gzip_bytes"]
    r["gz_index_less_records_pct"] = 100 * (r["gz_index_bytes"] - records_bytes) / r["gzip_bytes"]

    # One draw of ids: the gzip figures read its first --latency-ids, the
    # BGZF figures all --bgzf-latency-ids (some ten times as many, for
    # runs of about the same length), and its first --latency-ids too.
    rng = random.Random(11)
    ids = [line.split(b"\t", 1)[0] for line in open(path, "rb")]
    drawn = [ids[rng.randrange(n)] + b"\n" for _ in range(max(args.latency_ids, args.bgzf_latency_ids))]
    del ids
    ids_path, bgzf_ids_path = path + ".lat", path + ".bgzf.lat"
    with open(ids_path, "wb") as f:
        f.write(b"".join(drawn[:args.latency_ids]))
    with open(bgzf_ids_path, "wb") as f:
        f.write(b"".join(drawn[:args.bgzf_latency_ids]))
    del drawn
    r["latency_ids"], r["bgzf_latency_ids"] = args.latency_ids, args.bgzf_latency_ids
    r["gz_single_ms"] = 1e3 * per_doc(args, dx, gz, ids_path, 1, args.latency_ids)
    r["gz_batch_ms"] = 1e3 * per_doc(args, dx, gz, ids_path, 1000, args.latency_ids)

    # The writer with one thread and two (the file is the same for any
    # number); once each, at its default level.
    for threads in (1, 2):
        print(f"bench: docdex index --bgzf {bgz} -@ {threads}", file=sys.stderr)
        r[f"bgzf_write_t{threads}_s"] = run([dx, "index", "-q", "-f", "--bgzf", bgz,
                                              "-@", str(threads), path])
    bidx, bdc = [], []
    for _ in range(args.repeat):
        if shutil.which("bgzip"):
            bdc.append(run(f"bgzip -dc '{bgz}' > /dev/null", shell=True))
        bidx.append(run([dx, "index", "-q", bgz]))
    r["bgzf_index_s"] = statistics.median(bidx)
    r["bgzip_dc_bgzf_s"] = statistics.median(bdc) if bdc else None
    r["bgzf_bytes"] = os.path.getsize(bgz)
    r["bgzf_vs_gzip"] = r["bgzf_bytes"] / r["gzip_bytes"]
    keys, src = stats_of(dx, bgz)
    r["bgzf_points"] = int(src[0][7])
    r["bgzf_index_bytes"] = int(keys["bytes"])
    r["bgzf_points_pct_of_file"] = 100 * 32 * r["bgzf_points"] / r["bgzf_bytes"]
    r["bgzf_single_ms"] = 1e3 * per_doc(args, dx, bgz, bgzf_ids_path, 1, args.bgzf_latency_ids)
    r["bgzf_single_first_ms"] = 1e3 * per_doc(args, dx, bgz, ids_path, 1, args.latency_ids)
    r["bgzf_batch_ms"] = 1e3 * per_doc(args, dx, bgz, bgzf_ids_path, 1000, args.bgzf_latency_ids)
    os.unlink(bgzf_ids_path)

    # Other spans, for the choice of the default.
    r["spans"] = []
    for span in args.spans:
        t = run([dx, "index", "-q", "--span", span, "-o", gz + ".span.ddx", gz])
        keys, src = stats_of(dx, gz + ".span.ddx")
        r["spans"].append({
            "span": span, "index_s": t,
            "points_pct_of_gzip": 100 * (32 * int(src[0][7]) + int(src[0][8])) / r["gzip_bytes"],
            "single_ms": 1e3 * per_doc(args, dx, gz + ".span.ddx", ids_path, 1, args.latency_ids)})
        os.unlink(gz + ".span.ddx")
    os.unlink(ids_path)
    return r


def report_gzip(results):
    refs = [t for t in REFERENCE_DECOMPRESSORS if all(t in r["refs_dc_s"] for r in results)]
    rows = [
        ("gzip -6 file, MiB", lambda r: f"{r['gzip_bytes'] / MiB:.0f}"),
        ("index build on .gz, s", lambda r: f"{r['gz_index_s']:.2f}"),
        *((f"{t} -dc > /dev/null, s", lambda r, t=t: f"{r['refs_dc_s'][t]:.2f}") for t in refs),
        ("build / gzip -dc (goal <= 0.5)", lambda r: f"{r['gz_index_vs_gzip_dc']:.2f}"),
        ("build / fastest of them (goal <= 1.0)",
         lambda r: f"{r['gz_index_vs_fastest']:.2f} {r['fastest_ref']}"),
        ("gzip: get, one id at a time, ms/doc (goal <= 0.6)", lambda r: f"{r['gz_single_ms']:.2f}"),
        ("gzip: get, batches of 1000, ms/doc", lambda r: f"{r['gz_batch_ms']:.2f}"),
        ("gzip: access points", lambda r: f"{r['gz_points']:,}"),
        ("gzip: points+windows / .gz (goal <= 1%)", lambda r: f"{r['gz_points_pct_of_gzip']:.2f}%"),
        ("gzip: whole index / .gz", lambda r: f"{r['gz_index_pct_of_gzip']:.2f}%"),
        ("--bgzf file / gzip -6 (goal <= 1.02)", lambda r: f"{r['bgzf_vs_gzip']:.3f}"),
        ("--bgzf write, -@ 1, s", lambda r: f"{r['bgzf_write_t1_s']:.1f}"),
        ("--bgzf write, -@ 2, s", lambda r: f"{r['bgzf_write_t2_s']:.1f}"),
        ("BGZF: index build, s", lambda r: f"{r['bgzf_index_s']:.2f}"),
        ("BGZF: bgzip -dc > /dev/null, s",
         lambda r: f"{r['bgzip_dc_bgzf_s']:.2f}" if r["bgzip_dc_bgzf_s"] else "-"),
        ("BGZF: get, one id at a time, ms/doc (goal <= 0.05)", lambda r: f"{r['bgzf_single_ms']:.3f}"),
        (f"BGZF: the same, its first {results[0]['latency_ids']:,} ids alone",
         lambda r: f"{r['bgzf_single_first_ms']:.3f}"),
        ("BGZF: get, batches of 1000, ms/doc", lambda r: f"{r['bgzf_batch_ms']:.3f}"),
        ("BGZF: block table / file", lambda r: f"{r['bgzf_points_pct_of_file']:.3f}%"),
    ]
    head = [f"{r['kind']}" for r in results]
    width = max(len(name) for name, _ in rows)
    print(f"\n{'':<{width}}  " + "  ".join(f"{h:>12}" for h in head))
    for name, fmt in rows:
        print(f"{name:<{width}}  " + "  ".join(f"{fmt(r):>12}" for r in results))
    for r in results:
        print(f"\n{r['kind']}, other spans: span, build s, points+windows / .gz, ms/doc one at a time")
        for sp in r["spans"]:
            print(f"  {sp['span']:>6}  {sp['index_s']:6.2f}  {sp['points_pct_of_gzip']:6.2f}%  {sp['single_ms']:6.2f}")


def report(results):
    rows = [
        ("records", lambda r: f"{r['records']:,}"),
        ("id kind", lambda r: r["id_kind"]),
        ("index build, s", lambda r: f"{r['index_s']:.3f}"),
        ("wc -l, s", lambda r: f"{r['wc_s']:.3f}"),
        ("build speed / wc -l (goal >= 0.5)", lambda r: f"{r['index_speed_vs_wc']:.2f}"),
        ("get 1M ids to /dev/null, lookups/s", lambda r: f"{r['get_lookups_per_s'] / 1e6:.2f}M"),
        ("get 1M ids through a pipe, lookups/s", lambda r: f"{r['get_pipe_lookups_per_s'] / 1e6:.2f}M"),
        ("Python dict, lookups/s", lambda r: f"{r['dict_lookups_per_s'] / 1e6:.2f}M" if "dict_lookups_per_s" in r else "-"),
        ("get / dict", lambda r: f"{r['get_vs_dict']:.2f}x" if "get_vs_dict" in r else "-"),
        ("index bytes per record", lambda r: f"{r['index_bytes_per_record']:.2f}"),
        ("  less the id bytes (goal <= 16)", lambda r: f"{r['index_bytes_per_record_less_ids']:.2f}"),
        ("get peak private memory, MiB", lambda r: f"{r['get_peak_rss_anon_bytes'] / MiB:.1f}"),
        ("  / corpus size (goal < 5%)", lambda r: f"{100 * r['get_private_fraction_of_corpus']:.2f}%"),
        ("get peak RSS incl. page cache, MiB", lambda r: f"{r['get_peak_vmhwm_bytes'] / MiB:.0f}"),
        ("Python dict peak RSS, MiB", lambda r: f"{r['dict_peak_rss_bytes'] / MiB:.0f}" if "dict_peak_rss_bytes" in r else "-"),
    ]
    head = [""] + [f"{r['kind']} ({r['corpus_bytes'] / MiB:.0f} MiB)" for r in results]
    width = max(len(name) for name, _ in rows)
    print(f"{head[0]:<{width}}  " + "  ".join(f"{h:>22}" for h in head[1:]))
    for name, fmt in rows:
        print(f"{name:<{width}}  " + "  ".join(f"{fmt(r):>22}" for r in results))


PARTS = {
    "corpus": "the passages and documents figures (index, get, the dict)",
    "gzip": "the gzip and BGZF figures",
    "sample": "the docdex sample figures",
    "study": "the docdex bench study",
    "pin-study": "the docdex pin-test study",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docdex", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--dir", default="build/bench")
    ap.add_argument("--size", default="1G", help="corpus size for dx-synth --size (default 1G)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--lookups", type=int, default=1_000_000)
    ap.add_argument("--no-python", action="store_true", help="skip the Python dict reference")
    ap.add_argument("--latency-ids", type=int, default=2000, help="ids for the gzip latency figures")
    ap.add_argument("--bgzf-latency-ids", type=int, default=20000, help="ids for the BGZF latency figures")
    ap.add_argument("--spans", default="512K,2M", help="other spans to measure, comma-separated")
    ap.add_argument("--json", default=None, help="write every figure here (default DIR/results.json)")
    ap.add_argument("--sample-queries", type=int, default=100_000)
    ap.add_argument("--sample-depth", type=int, default=100)
    ap.add_argument("--triples", type=int, default=5_000_000, help="triples a sample run draws")
    ap.add_argument("--study-size", default="2G", help="documents for the study (default 2G)")
    ap.add_argument("--study-workers", default="1,2,4,8", help="-j of the study")
    # The parts of the run: --only-X runs X alone (several --only-X, those
    # alone), --no-X skips X.
    for part, what in PARTS.items():
        ap.add_argument(f"--no-{part}", action="append_const", dest="no", const=part, default=[],
                        help=f"skip {what}")
        ap.add_argument(f"--only-{part}", action="append_const", dest="only", const=part,
                        default=[], help=f"only {what}")
    args = ap.parse_args()
    run_parts = set(args.only or PARTS) - set(args.no)
    args.spans = [x for x in args.spans.split(",") if x]
    os.makedirs(args.dir, exist_ok=True)

    global ARGS
    ARGS = args
    results, gz_results, sample, study, pin_study = [], [], None, None, None
    if "study" in run_parts:
        study = bench_study(args)
    if "pin-study" in run_parts:
        pin_study = bench_pin_study(args)
    if "sample" in run_parts:
        print("bench: sample", file=sys.stderr)
        sample = bench_sample(args, os.path.join(args.dir, f"passages-sample-{args.size}.tsv"))
    for kind in ("passages", "documents") if run_parts & {"corpus", "gzip"} else ():
        path = os.path.join(args.dir, f"{kind}-{args.size}.tsv")
        if not os.path.exists(path):
            print(f"bench: generating {path}", file=sys.stderr)
            run([args.synth, "--kind", kind, "--size", args.size, "-o", path + ".tmp"])
            os.rename(path + ".tmp", path)
        if "corpus" in run_parts:
            print(f"bench: {kind}", file=sys.stderr)
            results.append(bench_corpus(args, kind, path))
        if "gzip" in run_parts:
            print(f"bench: {kind}, gzip and BGZF", file=sys.stderr)
            gz_results.append(bench_gzip(args, kind, path))

    version = subprocess.run([args.docdex, "--version"], capture_output=True, text=True).stdout
    doc = {"machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
                       "memory_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")},
           "docdex": version.strip(), "repeat": args.repeat, "lookups": args.lookups,
           "results": results, "gzip": gz_results, "sample": sample, "study": study}
    with open(args.json or os.path.join(args.dir, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(f"docdex bench: medians of {args.repeat} runs, warm cache, {os.cpu_count()} CPUs\n")
    if results:
        report(results)
    if gz_results:
        report_gzip(gz_results)
    if sample:
        report_sample(sample)
    if study:
        report_study(study)
    if pin_study:
        report_pin_study(pin_study)


ARGS = None
main()

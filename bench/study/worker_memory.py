#!/usr/bin/env python3
"""The memory of N DataLoader workers reading a corpus, a dict of every
passage against docdex.Corpus.

    worker_memory.py (--corpus C.tsv | --size 1G) [--workers 1,2,4,8]
                     [--loaders dict,docdex] [--mem-limit 18G] [--json out.json]

Each configuration runs in a process of its own: a map-style Dataset over
the corpus's positions (dict: {docid: text} and the list of its ids, read
in __init__; docdex: docdex.Corpus), a DataLoader with num_workers workers
and shuffle=True, and one full pass that reads every passage once in a
random order. The parent and every worker are sampled from /proc
(procmem.py) during the pass, and once more after the last batch while the
workers are still there: private memory (USS, anonymous) of all workers
together and of the parent, and the total PSS.

A worker reading a dict's strings writes their reference counts, so
copy-on-write copies every page it reads into it: the workers' private
memory grows with the corpus and with their number. docdex's workers hold
no Python object per passage.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
if os.path.isdir(os.path.join(TOP, "python", "docdex")):
    sys.path.insert(1, os.path.join(TOP, "python"))

import procmem  # noqa: E402
import studydata  # noqa: E402
from procmem import mib  # noqa: E402

LOADERS = ("dict", "docdex")


class DictPassages:
    """Passage i of the corpus from a dict of all of them."""

    def __init__(self, path):
        from loaders import read_tsv_dict
        self.docs = read_tsv_dict(path)
        self.ids = list(self.docs)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return self.docs[self.ids[i]]


class DocdexPassages:
    def __init__(self, path):
        import docdex
        self.corpus = docdex.Corpus(path, field="text")

    def __len__(self):
        return len(self.corpus)

    def __getitem__(self, i):
        return self.corpus[i]


def total_length(batch):
    """What a worker hands back: the batch's characters, not the texts, so
    that the parent holds nothing of what the workers read."""
    return sum(len(t) for t in batch)


def one(argv):
    p = argparse.ArgumentParser(prog="worker_memory.py one")
    p.add_argument("--loader", choices=LOADERS, required=True)
    p.add_argument("--workers", type=int, required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--interval", type=float, default=0.25)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)

    import torch
    from torch.utils.data import DataLoader

    t0 = time.time()
    sampler = procmem.Sampler(a.out + ".mem.jsonl", a.interval).start()
    ds = DictPassages(a.corpus) if a.loader == "dict" else DocdexPassages(a.corpus)
    t_loaded = time.time() - t0
    before = procmem.snapshot(os.getpid())[os.getpid()]
    g = torch.Generator()
    g.manual_seed(a.seed)
    dl = DataLoader(ds, batch_size=a.batch_size, shuffle=True, generator=g, num_workers=a.workers,
                    collate_fn=total_length)
    t1 = time.time()
    it = iter(dl)
    chars = 0
    for _ in range(len(dl)):
        chars += next(it)
    t_pass = time.time() - t1
    # After the last batch the workers have read everything and wait, still
    # there, for more: this is the memory the pass left them.
    end = sampler.sample(tag="end")
    sampler.stop()
    del it
    me = os.getpid()
    workers = {p: m for p, m in end.items() if p != me}
    peak_workers = {p: m for p, m in sampler.peak.items() if p != me}
    res = {
        "loader": a.loader, "workers": a.workers, "passages": len(ds), "chars": chars,
        "batch_size": a.batch_size, "load_seconds": round(t_loaded, 2),
        "pass_seconds": round(t_pass, 2), "passages_per_s": round(len(ds) / t_pass, 1),
        "workers_seen_at_end": len(workers),
        "parent_before_mib": {k: mib(before[k]) for k in ("pss", "uss", "dirty", "anon", "rss")},
        "parent_mib": {k: mib(end[me][k]) for k in ("pss", "uss", "dirty", "anon", "rss")},
        "workers_uss_mib": mib(procmem.total(workers, "uss")),
        "workers_dirty_mib": mib(procmem.total(workers, "dirty")),
        "workers_anon_mib": mib(procmem.total(workers, "anon")),
        "workers_pss_mib": mib(procmem.total(workers, "pss")),
        "pss_total_mib": mib(procmem.total(end, "pss")),
        "private_total_mib": mib(procmem.total(end, "uss")),
        "peak": {
            "workers_uss_mib": mib(procmem.total(peak_workers, "uss")),
            "workers_dirty_mib": mib(procmem.total(peak_workers, "dirty")),
            "parent_uss_mib": mib(sampler.peak[me]["uss"]),
            "pss_total_mib": mib(procmem.total(sampler.peak, "pss")),
        },
        "per_worker_mib": [{k: mib(m[k]) for k in ("pss", "uss", "dirty", "anon")} for _, m in sorted(workers.items())],
    }
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    return 0


def run_config(a, loader, n, limit):
    out = os.path.join(a.workdir, f"wm-{loader}-{n}.json")
    for f in (out, out + ".mem.jsonl"):
        if os.path.exists(f):
            os.remove(f)
    cmd = [sys.executable, os.path.abspath(__file__), "one", "--loader", loader, "--workers", str(n),
           "--corpus", a.corpus, "--batch-size", str(a.batch_size), "--interval", str(a.interval),
           "--out", out]
    group = None
    if limit:
        import memgroup
        group = memgroup.MemGroup(f"docdex-wm-{os.getpid()}-{loader}-{n}", limit)
    print(f"== {loader}, {n} workers", flush=True)
    t = time.time()
    try:
        p = subprocess.run(cmd, preexec_fn=group.join if group else None, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=a.timeout, check=False)
        rc, log = p.returncode, p.stdout.decode(errors="replace")[-2000:]
    except subprocess.TimeoutExpired:
        rc, log = "timeout", ""
    finally:
        cg = None
        if group:
            cg = group.stats()
            group.remove()
    if rc == 0:
        with open(out) as f:
            res = json.load(f)
        res["status"] = "ok"
    else:
        # What the samples saw before the end, for a configuration killed.
        recs = procmem.read_samples(out + ".mem.jsonl")
        res = {"loader": loader, "workers": n,
               "status": "oom" if cg and cg.get("oom_kill", 0) > 0 else "failed",
               "returncode": rc, "log_tail": log}
        if recs:
            res["peak_seen"] = {"pss_total_mib": mib(max(sum(m["pss"] for m in r["procs"].values())
                                                         for r in recs)),
                                "private_total_mib": mib(max(sum(m["uss"] for m in r["procs"].values())
                                                             for r in recs))}
    res["wall_seconds"] = round(time.time() - t, 1)
    if cg:
        res["cgroup"] = cg
    return res


def table(results):
    hdr = ("loader", "workers", "status", "pass s", "parent USS", "parent dirty", "workers' USS",
           "workers' dirty", "workers' anon", "per worker USS", "PSS total")
    rows = [hdr]
    for r in results:
        if r["status"] == "ok":
            rows.append((r["loader"], str(r["workers"]), "ok", f"{r['pass_seconds']:.1f}",
                         f"{r['parent_mib']['uss']:.0f}", f"{r['parent_mib']['dirty']:.0f}",
                         f"{r['workers_uss_mib']:.0f}", f"{r['workers_dirty_mib']:.0f}",
                         f"{r['workers_anon_mib']:.0f}",
                         f"{r['workers_uss_mib'] / max(1, r['workers']):.0f}", f"{r['pss_total_mib']:.0f}"))
        else:
            rows.append((r["loader"], str(r["workers"]), r["status"]) + ("-",) * (len(hdr) - 3))
    w = [max(len(row[i]) for row in rows) for i in range(len(hdr))]
    return "\n".join("  ".join(v.rjust(w[i]) for i, v in enumerate(row)) for row in rows) + \
        ("\n(MiB, after one full pass in random order, workers still alive; dirty: Private_Dirty, "
         "the private anonymous memory; USS adds the file pages only one process touched)")


def main():
    if sys.argv[1:2] == ["one"]:
        sys.exit(one(sys.argv[2:]))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", help="an indexed two-column TSV corpus (else --size generates one)")
    p.add_argument("--size", default="64M")
    p.add_argument("--workdir", default=os.path.join(TOP, "build", "study"))
    p.add_argument("--docdex", default=os.environ.get("DOCDEX") or os.path.join(TOP, "docdex"))
    p.add_argument("--synth")
    p.add_argument("--workers", default="1,2,4,8")
    p.add_argument("--loaders", default=",".join(LOADERS))
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--interval", type=float, default=0.25)
    p.add_argument("--mem-limit", help="run each configuration in a cgroup memory group of SIZE")
    p.add_argument("--timeout", type=float, default=900, help="s per configuration (default 900)")
    p.add_argument("--json", help="report (default WORKDIR/worker_memory.json)")
    a = p.parse_args()
    a.docdex = os.path.abspath(a.docdex)
    a.synth = a.synth or os.path.join(os.path.dirname(a.docdex), "tests", "dx-synth")
    os.makedirs(a.workdir, exist_ok=True)
    if not a.corpus:
        a.corpus = studydata.synth_corpus(a.workdir, a.size, a.synth, a.docdex)[0]
    if not os.path.exists(a.corpus + ".ddx"):
        sys.exit(f"worker_memory: {a.corpus} is not indexed: docdex index {a.corpus}")
    import memgroup
    limit = memgroup.limit_from_option(a.mem_limit, "worker_memory")
    loaders = [x for x in a.loaders.split(",") if x]
    studydata.stop_on_signals()
    results = []
    for n in [int(x) for x in a.workers.split(",")]:
        for loader in loaders:
            r = run_config(a, loader, n, limit)
            results.append(r)
            if r["status"] == "ok":
                print(f"   workers' USS {r['workers_uss_mib']:.0f} MiB, parent USS "
                      f"{r['parent_mib']['uss']:.0f} MiB, PSS {r['pss_total_mib']:.0f} MiB, "
                      f"pass {r['pass_seconds']:.1f} s", flush=True)
            else:
                print(f"   {r['status']}", flush=True)
    summary = {}
    for n in sorted({r["workers"] for r in results}):
        by = {r["loader"]: r for r in results if r["workers"] == n and r["status"] == "ok"}
        if "dict" in by and "docdex" in by and by["dict"]["workers_uss_mib"] > 0:
            summary[str(n)] = {f"docdex_over_dict_workers_{k}": round(
                by["docdex"][f"workers_{k}_mib"] / max(0.1, by["dict"][f"workers_{k}_mib"]), 4)
                for k in ("uss", "dirty")}
    report = {"what": "private memory of DataLoader workers after one random pass over a corpus",
              "corpus": a.corpus, "corpus_bytes": os.path.getsize(a.corpus),
              "mem_limit_bytes": limit, "results": results, "summary": summary}
    a.json = a.json or os.path.join(a.workdir, "worker_memory.json")
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(report, f, indent=1)
    print(table(results))
    for n, s in summary.items():
        print(f"{n} workers: docdex's workers hold {100 * s['docdex_over_dict_workers_uss']:.1f}% "
              f"of the dict's workers' USS, {100 * s['docdex_over_dict_workers_dirty']:.1f}% of their "
              f"private dirty memory")
    print(f"report: {a.json}")


if __name__ == "__main__":
    main()

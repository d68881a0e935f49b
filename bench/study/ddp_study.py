#!/usr/bin/env python3
"""The study behind docdex, run again: what each way of getting at the
documents costs a DistributedDataParallel training job in memory and in
speed, with DataLoader workers in every rank.

    ddp_study.py [--corpus C.tsv --queries Q --qrels R --run RUN | --size 1G]
                 [--ranks 1,2,4] [--loaders dict,offsets,docdex] [--workers 2]
                 [--seconds 45 | --steps N] [--mem-limit 18G]
                 [--json study.json] [--svg study.svg]

A small cross-encoder-shaped model (loaders.PairScorer) trains on the same
triples, drawn once by `docdex sample --format ids`, from three loaders
(loaders.py: dict, offsets, docdex), on 1, 2 and 4 ranks over gloo. Each
configuration reports samples per second across the ranks after a warm-up,
the time from a rank's start to its first batch (loading the dict or
scanning the offsets included), and the memory of every rank and DataLoader
worker, sampled from /proc (procmem.py): peak and final total PSS, USS
(private) and anonymous memory.

The ranks are started here as processes with MASTER_ADDR, MASTER_PORT,
RANK, WORLD_SIZE and LOCAL_RANK set; `ddp_study.py rank --loader L ...`
is one rank, and runs as well under torchrun, which sets the same.

With --mem-limit the ranks run in a cgroup v1 memory group with that limit
(memgroup.py): a configuration that passes it is killed by the kernel and
reported as OOM, and the next one goes on.
"""
import argparse
import datetime
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
if os.path.isdir(os.path.join(TOP, "python", "docdex")):
    sys.path.insert(1, os.path.join(TOP, "python"))

import procmem  # noqa: E402
import studydata  # noqa: E402
from procmem import mib  # noqa: E402
from studydata import sh  # noqa: E402

LOADERS = ("dict", "offsets", "docdex")
# Asked for by name: docdex over a gzip copy of the corpus, without and with
# the inflate cache that every rank and worker shares (--inflate-cache).
GZIP_LOADERS = ("docdex-gzip", "docdex-gzip-cache")


def add_model_options(p):
    p.add_argument("--workers", type=int, default=2, help="DataLoader workers per rank (default 2)")
    p.add_argument("--batch-size", type=int, default=32, help="triples per rank and step (default 32)")
    p.add_argument("--warmup", type=int, default=10,
                   help="steps left out of the speed, as the study did (default 10)")
    p.add_argument("--steps", type=int, default=0, help="measured steps per configuration")
    p.add_argument("--seconds", type=float, default=45.0,
                   help="measured seconds per configuration, when --steps is not given (default 45)")
    p.add_argument("--interval", type=float, default=0.5,
                   help="memory sampling period in s (default 0.5; a sample of a process mapping "
                        "GBs takes tens of ms of CPU)")
    p.add_argument("--buckets", type=int, default=1 << 16, help="hashed vocabulary (default 65536)")
    p.add_argument("--dim", type=int, default=48, help="embedding size (default 48)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch threads per rank (default 1)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"),
                   help="where the model trains: cpu (default), cuda (GPU LOCAL_RANK modulo "
                        "the GPUs there are, batches pinned by the DataLoader), or auto "
                        "(cuda when torch sees a GPU)")
    p.add_argument("--dist-timeout", type=float, default=300.0,
                   help="gloo's timeout in s, for a rank whose peer died (default 300)")


# ---------------------------------------------------------------- one rank

def rank_main(argv):
    p = argparse.ArgumentParser(prog="ddp_study.py rank", description="One rank of a configuration.")
    p.add_argument("--loader", choices=LOADERS + GZIP_LOADERS, required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--corpus-gzip", help="the corpus's indexed gzip copy (docdex-gzip*)")
    p.add_argument("--inflate-cache", type=int, default=0, help="bytes (docdex-gzip-cache)")
    p.add_argument("--queries", required=True, help="queries TSV (dict, offsets)")
    p.add_argument("--queries-index", help="the queries' docdex index (docdex; default QUERIES)")
    p.add_argument("--triples", required=True, help="docdex sample --format ids output")
    p.add_argument("--out", required=True, help="folder for rankR.json and rankR.mem.jsonl")
    add_model_options(p)
    a = p.parse_args(argv)

    t_start = procmem.start_time()
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    os.makedirs(a.out, exist_ok=True)
    sampler = procmem.Sampler(os.path.join(a.out, f"rank{rank}.mem.jsonl"), a.interval,
                              extra={"rank": rank}).start()
    res = {"rank": rank, "world_size": world, "local_rank": int(os.environ.get("LOCAL_RANK", rank)),
           "loader": a.loader, "pid": os.getpid(), "process_start": t_start}
    status = 0
    try:
        train(a, rank, world, t_start, sampler, res)
    except BaseException as e:  # noqa: B902 (the report says what stopped the rank)
        res["error"] = f"{type(e).__name__}: {e}"
        res["traceback"] = traceback.format_exc()
        status = 1
    sampler.stop()
    with open(os.path.join(a.out, f"rank{rank}.json"), "w") as f:
        json.dump(res, f, indent=1)
    if status:
        sys.stderr.write(res["traceback"])
    sys.stdout.flush()
    sys.stderr.flush()
    # Everything is written: the interpreter's teardown of torch would only
    # add to the configuration's time.
    os._exit(status)


def train(a, rank, world, t_start, sampler, res):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler

    import loaders

    res["torch"] = torch.__version__
    device = pick_device(torch, a.device)
    res["device"] = str(device) if device.type == "cpu" else \
        f"{device} ({torch.cuda.get_device_name(device)})"
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    # gloo on a GPU too: several ranks may share one GPU here, which NCCL
    # refuses; gloo reduces CUDA tensors through the host.
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=a.dist_timeout))
    res["t_init"] = time.time() - t_start
    ds = loaders.make_dataset(a.loader, a.corpus, a.queries, a.queries_index or a.queries, a.triples,
                              corpus_gzip=a.corpus_gzip, inflate_cache=a.inflate_cache)
    res["t_dataset"] = time.time() - t_start
    res["triples"] = len(ds)
    dsampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=a.seed)
    dl = DataLoader(ds, batch_size=a.batch_size, sampler=dsampler, num_workers=a.workers,
                    collate_fn=loaders.Collate(a.buckets), drop_last=True,
                    pin_memory=device.type == "cuda")
    if len(dl) == 0:
        raise RuntimeError(f"{len(ds)} triples make no batch of {a.batch_size} on {world} ranks")
    model = DistributedDataParallel(loaders.PairScorer(a.buckets, a.dim).to(device))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    step = measured = 0
    t_meas = None
    losses = []
    stop = False
    epoch = 0
    flag = torch.zeros(1)
    while not stop:
        dsampler.set_epoch(epoch)
        for q_ids, q_off, d_ids, d_off, ncand in dl:
            if step == 0:
                res["t_first_batch"] = time.time() - t_start
            if device.type == "cuda":
                q_ids, q_off, d_ids, d_off = (t.to(device, non_blocking=True)
                                              for t in (q_ids, q_off, d_ids, d_off))
            scores = model(q_ids, q_off, d_ids, d_off, ncand)
            loss = loss_fn(scores, torch.zeros(scores.shape[0], dtype=torch.long, device=device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step == a.warmup or (a.warmup == 0 and step == 1 and t_meas is None):
                t_meas = time.time()
                cpu0 = procmem.cpu_tree(os.getpid())
                sampler_cpu0 = sampler.cpu_s
                res["loss_at_warmup"] = float(loss)
            elif t_meas is not None:
                measured += 1
            if len(losses) < 1 or step % 50 == 0:
                losses.append([step, round(float(loss), 4)])
            done = t_meas is not None and (
                (a.steps and measured >= a.steps) or
                (not a.steps and time.time() - t_meas >= a.seconds))
            # Every rank stops at the same step, whichever saw the end first.
            flag[0] = 1.0 if done else 0.0
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
            if flag[0] > 0:
                stop = True
                res["measured_seconds"] = time.time() - t_meas
                # CPU time is what the other users of a shared machine do
                # not change: the rank's (model, gloo) and its workers'
                # (reading the texts, hashing the words).
                cpu1 = procmem.cpu_tree(os.getpid())
                me = os.getpid()
                # The memory samples' own CPU time is left out of the rank's.
                res["cpu_sampler_s"] = round(sampler.cpu_s - sampler_cpu0, 2)
                res["cpu_rank_s"] = round(cpu1[me] - cpu0[me] - res["cpu_sampler_s"], 2)
                res["cpu_workers_s"] = round(sum(c - cpu0.get(p, 0.0) for p, c in cpu1.items() if p != me), 2)
                # The last sample while the workers are still there.
                sampler.sample(tag="final")
                break
        epoch += 1
    res.update(steps=step, warmup_steps=a.warmup, measured_steps=measured,
               samples_measured=measured * a.batch_size, batch_size=a.batch_size,
               workers=a.workers, epochs_started=epoch, loss_last=float(loss), losses=losses)
    dist.barrier()
    dist.destroy_process_group()


def pick_device(torch, want):
    if want == "cpu" or (want == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise RuntimeError("--device cuda: torch sees no GPU")
    local = int(os.environ.get("LOCAL_RANK", os.environ.get("RANK", "0")))
    device = torch.device("cuda", local % torch.cuda.device_count())
    torch.cuda.set_device(device)
    return device


# ------------------------------------------------------------- the study

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fresh(out, *inputs):
    return os.path.exists(out) and all(os.path.getmtime(out) >= os.path.getmtime(i) for i in inputs)


def prepare(a):
    """The corpus (generated with --size), its index, the queries' index and
    the triples, in --workdir; what is there already is kept."""
    os.makedirs(a.workdir, exist_ok=True)
    if not a.corpus:
        a.corpus, a.queries, a.qrels, a.run = studydata.synth_corpus(
            a.workdir, a.size, a.synth, a.docdex, a.nqueries, a.depth, a.seed)
    for need in ("queries", "qrels", "run"):
        if not getattr(a, need):
            sys.exit(f"ddp_study: --corpus needs --{need}")
    if not os.path.exists(a.corpus + ".ddx"):
        sys.exit(f"ddp_study: {a.corpus} is not indexed: docdex index {a.corpus}")
    a.corpus_gzip = None
    if any(x in GZIP_LOADERS for x in a.loaders.split(",")):
        # gzip -6 of the corpus, indexed at the default span, in the workdir.
        key = hashlib.sha1(os.path.abspath(a.corpus).encode()).hexdigest()[:10]
        a.corpus_gzip = os.path.join(a.workdir, f"corpus-{key}.tsv.gz")
        if not fresh(a.corpus_gzip + ".ddx", a.corpus):
            with open(a.corpus, "rb") as f, open(a.corpus_gzip, "wb") as g:
                subprocess.run(["gzip", "-6", "-c"], stdin=f, stdout=g, check=True)
            sh([a.docdex, "index", "-q", "-f", a.corpus_gzip])
    # The queries' index goes to the workdir: the inputs are only read.
    key = hashlib.sha1(os.path.abspath(a.queries).encode()).hexdigest()[:10]
    a.queries_index = os.path.join(a.workdir, f"queries-{key}.ddx")
    if not fresh(a.queries_index, a.queries):
        sh([a.docdex, "index", "-q", "-o", a.queries_index, a.queries])
    if not a.triples:
        spec = json.dumps([os.path.abspath(x) for x in (a.corpus, a.queries, a.qrels, a.run)] +
                          [os.path.getsize(a.corpus), a.depth, a.negatives, a.seed, a.epochs])
        a.triples = os.path.join(a.workdir, f"triples-{hashlib.sha1(spec.encode()).hexdigest()[:10]}.ids")
        if not fresh(a.triples, a.corpus, a.queries, a.qrels, a.run):
            sh([a.docdex, "sample", "--format", "ids", "--queries", a.queries, "--qrels", a.qrels,
                "--run", a.run, "--depth", str(a.depth), "--negatives", str(a.negatives),
                "--epochs", str(a.epochs), "--seed", str(a.seed), "-f", "-o", a.triples, a.corpus])


def kill_group(p, sig):
    try:
        os.killpg(p.pid, sig)  # the rank and its DataLoader workers
    except (ProcessLookupError, PermissionError):
        pass


def run_cell(a, loader, world, limit):
    name = f"{loader}-r{world}"
    run_name = os.path.splitext(os.path.basename(a.json))[0]
    cell_dir = os.path.join(a.workdir, "cells", run_name, name)
    shutil.rmtree(cell_dir, ignore_errors=True)
    os.makedirs(cell_dir)
    group = None
    if limit:
        import memgroup
        group = memgroup.MemGroup(f"docdex-study-{os.getpid()}-{name}", limit)
    port = free_port()
    pythonpath = os.pathsep.join(x for x in (os.path.join(TOP, "python"), os.environ.get("PYTHONPATH")) if x)
    cmd = [sys.executable, os.path.abspath(__file__), "rank", "--loader", loader, "--corpus", a.corpus,
           "--queries", a.queries, "--queries-index", a.queries_index, "--triples", a.triples,
           "--out", cell_dir, "--workers", str(a.workers), "--batch-size", str(a.batch_size),
           "--warmup", str(a.warmup), "--steps", str(a.steps), "--seconds", str(a.seconds),
           "--interval", str(a.interval), "--buckets", str(a.buckets), "--dim", str(a.dim),
           "--seed", str(a.seed), "--threads", str(a.threads), "--dist-timeout", str(a.dist_timeout),
           "--device", a.device]
    if loader in GZIP_LOADERS:
        cmd += ["--corpus-gzip", a.corpus_gzip,
                "--inflate-cache", str(a.inflate_cache if loader.endswith("-cache") else 0)]
    print(f"== {name}" + (f" (memory limit {mib(limit):.0f} MiB)" if limit else ""), flush=True)
    procs, logs = [], []
    t_spawn = time.time()
    try:
        for r in range(world):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r),
                       WORLD_SIZE=str(world), LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(world),
                       PYTHONPATH=pythonpath)
            log = open(os.path.join(cell_dir, f"rank{r}.log"), "w")
            logs.append(log)
            procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True,
                                          preexec_fn=group.join if group else None))
        deadline = t_spawn + a.cell_timeout
        first_failure = None
        timed_out = False
        while True:
            codes = [p.poll() for p in procs]
            if all(c is not None for c in codes):
                break
            if first_failure is None and any(c not in (None, 0) for c in codes):
                first_failure = time.time()
                # One rank is gone: the others would wait for it in gloo.
                for p, c in zip(procs, codes):
                    if c is None:
                        kill_group(p, signal.SIGTERM)
            if first_failure is not None and time.time() - first_failure > 5:
                for p in procs:
                    kill_group(p, signal.SIGKILL)
            if not timed_out and time.time() > deadline:
                timed_out = True
                first_failure = first_failure or time.time()
                for p in procs:
                    kill_group(p, signal.SIGTERM)
            time.sleep(0.2)
    finally:
        for p in procs:
            if p.poll() is None:
                kill_group(p, signal.SIGKILL)
                p.wait()
        for log in logs:
            log.close()
        cg = None
        if group:
            cg = group.stats()
            group.remove()
    wall = time.time() - t_spawn
    return summarize(a, loader, world, cell_dir, procs, cg, timed_out, wall)


def merge_memory(cell_dir, world, interval):
    """Totals over every rank and worker: per sample time (each rank's
    latest sample at that time), their peaks, the final totals (each rank's
    sample at the end of training), and each process's figures."""
    series = [procmem.read_samples(os.path.join(cell_dir, f"rank{r}.mem.jsonl")) for r in range(world)]
    allt = [s["t"] for recs in series for s in recs]
    if not allt:
        return None
    t0 = min(allt)
    keys = ("pss", "pss_anon", "uss", "dirty", "anon")
    per_proc = {}
    buckets = []  # per rank: {bucket: {key: total, key_workers: ...}}
    for r, recs in enumerate(series):
        b = {}
        for s in recs:
            tot = {}
            for pid, m in s["procs"].items():
                role = "rank" if m["role"] == "main" else "worker"
                pp = per_proc.setdefault(pid, {"pid": int(pid), "rank": r, "role": role,
                                               **{f"peak_{k}_mib": 0 for k in keys}})
                for k in keys:
                    pp[f"peak_{k}_mib"] = max(pp[f"peak_{k}_mib"], mib(m.get(k, 0)))
                    if s.get("tag") == "final":
                        pp[f"final_{k}_mib"] = mib(m.get(k, 0))
                    tot[k] = tot.get(k, 0) + m.get(k, 0)
                    tot[f"{k}_{role}s"] = tot.get(f"{k}_{role}s", 0) + m.get(k, 0)
            b[int((s["t"] - t0) / interval)] = tot
        buckets.append(b)
    every = sorted(set(k for b in buckets for k in b))
    last = [None] * world
    totals = []
    for k in every:
        row = {}
        for r, b in enumerate(buckets):
            if k in b:
                last[r] = b[k]
            if last[r] is not None and (not b or k <= max(b)):  # a rank's own span only
                for name, v in last[r].items():
                    row[name] = row.get(name, 0) + v
        totals.append((k, row))
    out = {}
    for name in ("pss", "pss_anon", "uss", "dirty", "anon", "uss_ranks", "uss_workers", "dirty_ranks",
                 "dirty_workers", "pss_ranks", "pss_workers", "pss_anon_ranks", "pss_anon_workers"):
        out[f"peak_{name}_mib"] = mib(max((row.get(name, 0) for _, row in totals), default=0))
    finals = [next((s for s in recs if s.get("tag") == "final"), None) for recs in series]
    if all(finals):
        for k in keys:
            out[f"final_{k}_mib"] = mib(sum(m.get(k, 0) for f in finals for m in f["procs"].values()))
        for k in ("uss", "dirty"):
            out[f"final_{k}_workers_mib"] = mib(sum(m[k] for f in finals for m in f["procs"].values()
                                                    if m["role"] != "main"))
    out["series_columns"] = ["t_s"] + [f"{k}_mib" for k in keys]
    out["series"] = [[round(k * interval, 2)] + [mib(row.get(x, 0)) for x in keys] for k, row in totals]
    out["processes"] = sorted(per_proc.values(), key=lambda x: (x["rank"], x["role"] != "rank", x["pid"]))
    return out


def summarize(a, loader, world, cell_dir, procs, cg, timed_out, wall):
    ranks = []
    for r, p in enumerate(procs):
        try:
            with open(os.path.join(cell_dir, f"rank{r}.json")) as f:
                res = json.load(f)
        except (OSError, ValueError):
            res = {"rank": r}
        res["returncode"] = p.returncode
        if p.returncode is not None and p.returncode < 0:
            res["signal"] = signal.Signals(-p.returncode).name
        if p.returncode:
            try:
                with open(os.path.join(cell_dir, f"rank{r}.log"), errors="replace") as f:
                    res["log_tail"] = f.read()[-2000:]
            except OSError:
                pass
        res.pop("traceback", None)
        ranks.append(res)
    cell = {"loader": loader, "ranks": world, "workers": a.workers, "batch_size": a.batch_size,
            "wall_seconds": round(wall, 1), "cell_dir": cell_dir, "rank_results": ranks}
    ok = all(p.returncode == 0 for p in procs)
    oom_signs = [r for r in ranks if r.get("signal") == "SIGKILL" or "killed by signal" in r.get("error", "")
                 or "Killed" in r.get("error", "")]
    if cg is not None:
        cell["cgroup"] = cg
    if ok:
        cell["status"] = "ok"
    elif cg is not None and (cg.get("oom_kill", 0) > 0 or
                             (cg.get("failcnt", 0) + cg.get("memsw_failcnt", 0) > 0 and oom_signs)):
        cell["status"] = "oom"
    elif timed_out:
        cell["status"] = "timeout"
    else:
        cell["status"] = "failed"
    r0 = ranks[0]
    if ok and r0.get("measured_seconds"):
        samples = sum(r.get("samples_measured", 0) for r in ranks)
        cell["samples_per_s"] = round(samples / r0["measured_seconds"], 1)
        if samples:
            cpu_r = sum(r.get("cpu_rank_s", 0) for r in ranks)
            cpu_w = sum(r.get("cpu_workers_s", 0) for r in ranks)
            cell["cpu_ms_per_sample"] = round(1000 * (cpu_r + cpu_w) / samples, 3)
            cell["cpu_ms_per_sample_workers"] = round(1000 * cpu_w / samples, 3)
            cell["cpu_ms_per_sample_ranks"] = round(1000 * cpu_r / samples, 3)
            cell["cpu_sampler_s"] = round(sum(r.get("cpu_sampler_s", 0) for r in ranks), 2)
        cell["measured_seconds"] = round(r0["measured_seconds"], 2)
        cell["measured_steps"] = r0.get("measured_steps")
    firsts = [r["t_first_batch"] for r in ranks if "t_first_batch" in r]
    if firsts:
        cell["t_first_batch_s"] = round(max(firsts), 2)
    datasets = [r["t_dataset"] for r in ranks if "t_dataset" in r]
    if datasets:
        cell["t_dataset_s"] = round(max(datasets), 2)
    mem = merge_memory(cell_dir, world, a.interval)
    if mem:
        cell["memory"] = mem
    return cell


def table(cells):
    hdr = ("loader", "ranks", "status", "samples/s", "CPU ms", "workers' ms", "1st batch s", "peak PSS",
           "PSS anon", "peak USS",
           "peak dirty", "peak anon", "final USS", "workers' USS", "workers' dirty")
    rows = [hdr]
    for c in cells:
        m = c.get("memory") or {}
        rows.append((c["loader"], str(c["ranks"]), c["status"],
                     f"{c['samples_per_s']:.0f}" if "samples_per_s" in c else "-",
                     *(f"{c[k]:.2f}" if k in c else "-" for k in
                       ("cpu_ms_per_sample", "cpu_ms_per_sample_workers")),
                     f"{c['t_first_batch_s']:.1f}" if "t_first_batch_s" in c else "-",
                     *(f"{m[k]:.0f}" if k in m else "-" for k in
                       ("peak_pss_mib", "peak_pss_anon_mib", "peak_uss_mib", "peak_dirty_mib", "peak_anon_mib",
                        "final_uss_mib", "peak_uss_workers_mib", "peak_dirty_workers_mib"))))
    w = [max(len(r[i]) for r in rows) for i in range(len(hdr))]
    lines = ["  ".join(v.rjust(w[i]) for i, v in enumerate(r)) for r in rows]
    return "\n".join(lines) + ("\n(CPU ms: CPU time of ranks and workers per sample, workers' ms: theirs "
                               "alone;\n memory in MiB, peaks of the totals over every rank and DataLoader "
                               "worker; PSS anon: Pss_Anon, the anonymous memory the job holds, page "
                               "cache left out; dirty: Private_Dirty, the private anonymous memory)")


def plot(path, cells, title, note):
    import svg
    order = LOADERS + GZIP_LOADERS
    loaders = sorted({c["loader"] for c in cells}, key=lambda x: order.index(x) if x in order else 9)
    groups = sorted({c["ranks"] for c in cells})
    speed, cpu, uss, dirty, first = {}, {}, {}, {}, {}
    for c in cells:
        s, g = c["loader"], c["ranks"]
        bad = c["status"].upper() if c["status"] != "ok" else None
        m = c.get("memory") or {}
        speed.setdefault(s, {})[g] = c.get("samples_per_s", bad)
        cpu.setdefault(s, {})[g] = c.get("cpu_ms_per_sample_workers", bad)
        for out, key in ((uss, "peak_pss_anon_mib"), (dirty, "peak_dirty_mib")):
            out.setdefault(s, {})[g] = m[key] / 1024 if not bad and key in m else bad
        first.setdefault(s, {})[g] = c.get("t_first_batch_s", bad) if not bad else bad
    svg.figure(path, title, [
        svg.Panel("training speed", "samples/s (all ranks)", groups, loaders, speed),
        svg.Panel("workers' CPU per sample", "ms (read, tokenize)", groups, loaders, cpu),
        svg.Panel("private anonymous memory, peak", "GiB Private_Dirty (ranks + workers)",
                  groups, loaders, dirty),
        svg.Panel("anonymous memory (PSS), peak", "GiB Pss_Anon (ranks + workers)", groups, loaders, uss),
        svg.Panel("time to first batch", "s from process start", groups, loaders, first),
    ], loaders, note=note)


def main():
    if sys.argv[1:2] == ["rank"]:
        sys.exit(rank_main(sys.argv[2:]))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", help="an indexed two-column TSV corpus (else --size generates one)")
    p.add_argument("--queries"), p.add_argument("--qrels"), p.add_argument("--run")
    p.add_argument("--triples", help="ids triples to use instead of drawing them")
    p.add_argument("--size", default="64M", help="dx-synth --size of a generated corpus (default 64M)")
    p.add_argument("--nqueries", type=int, default=100000)
    p.add_argument("--depth", type=int, default=100, help="run depth for the negatives (default 100)")
    p.add_argument("--negatives", type=int, default=1)
    p.add_argument("--epochs", type=int, default=1, help="docdex sample --epochs (default 1)")
    p.add_argument("--workdir", default=os.path.join(TOP, "build", "study"))
    p.add_argument("--docdex", default=os.environ.get("DOCDEX") or os.path.join(TOP, "docdex"))
    p.add_argument("--synth", help="dx-synth (default: tests/dx-synth beside docdex's top)")
    p.add_argument("--ranks", default="1,2,4")
    p.add_argument("--loaders", default=",".join(LOADERS),
                   help="of dict, offsets, docdex, docdex-gzip, docdex-gzip-cache (default: the first three)")
    p.add_argument("--inflate-cache", default="2G",
                   help="the inflate cache of docdex-gzip-cache (default 2G)")
    p.add_argument("--mem-limit", help="run the ranks in a cgroup memory group of SIZE (e.g. 18G)")
    p.add_argument("--cell-timeout", type=float, default=0,
                   help="s before a configuration is stopped (default: 300 + 3 x --seconds)")
    p.add_argument("--json", help="report file (default WORKDIR/study.json)")
    p.add_argument("--svg", help="plot file (default WORKDIR/study.svg)")
    p.add_argument("--title", default="docdex study: DDP training, DataLoader workers in every rank")
    add_model_options(p)
    a = p.parse_args()
    a.docdex = os.path.abspath(a.docdex)
    if not a.synth:
        a.synth = os.path.join(os.path.dirname(a.docdex), "tests", "dx-synth")
    loaders = [x for x in a.loaders.split(",") if x]
    for x in loaders:
        if x not in LOADERS + GZIP_LOADERS:
            p.error(f"unknown loader {x!r}")
    import memgroup
    try:
        a.inflate_cache = memgroup.parse_size(a.inflate_cache)
    except ValueError:
        p.error(f"bad --inflate-cache {a.inflate_cache!r}: give a size such as 2G")
    ranks = [int(x) for x in a.ranks.split(",") if x]
    import memgroup
    limit = memgroup.limit_from_option(a.mem_limit, "ddp_study")
    if not a.cell_timeout:
        a.cell_timeout = 300 + 3 * (a.seconds if not a.steps else 60)
    studydata.stop_on_signals()
    a.json = a.json or os.path.join(a.workdir, "study.json")
    a.svg = a.svg or os.path.join(a.workdir, "study.svg")
    prepare(a)
    cells = []
    for w in ranks:
        for loader in loaders:
            cell = run_cell(a, loader, w, limit)
            cells.append(cell)
            m = cell.get("memory") or {}
            print(f"   {cell['status']}: {cell.get('samples_per_s', '-')} samples/s, first batch "
                  f"{cell.get('t_first_batch_s', '-')} s, peak USS {m.get('peak_uss_mib', '-')} MiB, "
                  f"peak PSS {m.get('peak_pss_mib', '-')} MiB", flush=True)
    report = {
        "what": "DDP training (gloo) over the same triples from three loaders",
        "corpus": a.corpus, "corpus_bytes": os.path.getsize(a.corpus), "queries": a.queries,
        "triples_file": a.triples, "mem_limit_bytes": limit,
        "config": {k: getattr(a, k) for k in ("workers", "batch_size", "warmup", "steps", "seconds",
                                              "interval", "buckets", "dim", "seed", "threads",
                                              "negatives", "depth", "device")},
        "host": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "cells": cells,
    }
    # The ranks say which torch they ran (importing it here would cost a
    # second or two).
    for key in ("torch", "device"):
        report["host"][key] = next((r[key] for c in cells for r in c["rank_results"] if key in r), None)
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(report, f, indent=1)
    note = (f"{os.path.basename(a.corpus)} ({mib(os.path.getsize(a.corpus)):.0f} MiB); {a.workers} workers "
            f"per rank, batch {a.batch_size}; model on {report['host']['device'] or a.device}" + (f"; memory limit {mib(limit) / 1024:.1f} GiB" if limit else ""))
    plot(a.svg, cells, a.title, note)
    print(table(cells))
    print(f"report: {a.json}\nplot: {a.svg}")


if __name__ == "__main__":
    main()

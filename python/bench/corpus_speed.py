#!/usr/bin/env python3
"""How fast docdex.Corpus serves documents, next to a Python dict.

In one process and one thread, times random reads from an indexed corpus:

    c[pos]                    one document by position
    c.get(id)                 one document by id
    c.get_many(ids)           1,024 ids a call
    c.get_many(ids, view=True)  the same as memoryviews (of the file's
                              pages, without a copy, for a plain file)
    c.get_many_positions(ps)  1,024 positions a call
    c.position(id)            the position of one id
    c.positions(ids)          1,024 ids a call

and the same reads from a dict {id: text} built from the same file in the
same run (and a list of its texts for the positions), with the time and
the memory (growth of VmRSS) that building it took; the positions
against a dict {id: position}, which a program without docdex builds to
map judged ids to a map-style dataset's indices.  Each figure is the
median of --runs runs of --n reads, in documents per second; the ids and
positions are drawn with a fixed seed.

For a plain TSV corpus read whole it also times the floor of a random
read on this machine: the same positions' bytes sliced out of Python's
own mmap of the file at offsets found beforehand (no lookup, no check, no
decoding), against c[pos] with bytes=True; and, where every id is its
record's position (the generated passages, MS MARCO's), the same ids'
bytes sliced at offsets read from a table of every record's by the id's
number (the study's offset table: a lookup, no check, no decoding),
against c.get(id) with bytes=True.  Where the two are close, a read
waits on memory, not on docdex.  docdex's mappings start on a 2 MiB
boundary, Python's where the kernel puts them (on one for a large ext4
file, not through overlayfs); the report says how much of the corpus and
of its index docdex mapped in 2 MiB pages (/proc/self/smaps).

    python3 python/bench/corpus_speed.py --corpus collection.tsv --json out.json

The corpus must be indexed (docdex index).  A TSV corpus read whole
(--field not given) is loaded into the dict from its lines, as a program
without docdex would; any other corpus is loaded through docdex.  Run it
from the source tree after `make python`, or with docdex installed.
"""
import argparse
import array
import gc
import gzip
import json
import mmap
import os
import platform
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the package built in place

import docdex  # noqa: E402

BATCH = 1024


def rss_bytes():
    """This process's resident memory (VmRSS), or 0 where /proc has none."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def huge_mappings(prefix):
    """Each mapping of a file whose path starts with prefix (the corpus and
    its index), as (path, resident bytes, bytes of them mapped in 2 MiB
    pages), from /proc/self/smaps; [] where there is none.  A random read
    through a 2 MiB page misses the TLB less: the figures move with it."""
    out, path, rss = [], None, 0
    try:
        with open("/proc/self/smaps", encoding="utf-8", errors="replace") as f:
            for line in f:
                head = line.split(None, 5)
                if "-" in head[0]:  # a mapping's first line: its range, ..., its path
                    path = head[5].strip() if len(head) > 5 else ""
                    path = path if path.startswith(prefix) else None
                elif path and head[0] == "Rss:":
                    rss = int(head[1]) * 1024
                elif path and head[0] == "FilePmdMapped:":
                    out.append((path, rss, int(head[1]) * 1024))
    except OSError:
        pass
    return out


def is_plain_tsv(path):
    name = path[:-3] if path.endswith(".gz") else path
    return name.endswith(".tsv")


def load_dict(path, corpus, field):
    """{id: text} as get(id) gives it.  A TSV read whole comes from its
    lines; other corpora through the corpus (ids, then texts in batches)."""
    d = {}
    if field is None and is_plain_tsv(path):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
            for line in f:
                line = line.rstrip("\n").rstrip("\r")
                d[line.split("\t", 1)[0]] = line
        return d, "file"
    ids = list(corpus.ids())
    for i in range(0, len(ids), 65536):
        chunk = ids[i:i + 65536]
        d.update(zip(chunk, corpus.get_many_positions(range(i, i + len(chunk)))))
    return d, "docdex"


def line_spans(path):
    """Where each line of a plain file starts and ends (without its line
    end, as c[pos] gives the record): two arrays, which hold no int object
    of their own that a read would have to fetch from the heap."""
    starts, ends, at = array.array("q"), array.array("q"), 0
    with open(path, "rb") as f:
        for line in f:
            starts.append(at)
            ends.append(at + len(line.rstrip(b"\n").rstrip(b"\r")))
            at += len(line)
    return starts, ends


def mmap_floor(path, c, ids, pos, n, runs, check):
    """The floors of a random read, each as (docdex's runs, the floor's
    runs) in documents per second: {"position": c[pos] as bytes against an
    mmap slice at offsets found beforehand; "id": c.get(id) as bytes
    against the same slice at offsets looked up in a table of every
    record's by the id's number, which is its position (the study's offset
    table; only where every id is its record's position)}."""
    starts, ends = line_spans(path)
    if len(starts) != len(c):
        return None
    cb = docdex.Corpus(path, bytes=True)
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    at = array.array("q", (starts[p] for p in pos))
    to = array.array("q", (ends[p] for p in pos))
    if any(m[at[k]:to[k]] != cb[pos[k]] for k in check):
        sys.exit("corpus_speed: docdex and the mapping disagree on a document")

    def c_bytes():
        for p in pos:
            cb[p]

    def m_slice():
        for a, b in zip(at, to):
            m[a:b]

    floors = {"position": (timed(c_bytes, n, runs), timed(m_slice, n, runs))}
    if all(ids[k] == str(pos[k]) for k in check):
        get = cb.get

        def c_get():
            for i in ids:
                get(i)

        def table():
            for i in ids:
                k = int(i)
                m[starts[k]:ends[k]]

        floors["id"] = (timed(c_get, n, runs), timed(table, n, runs))
    return floors


def timed(fn, n, runs):
    """Documents per second of fn (which reads n documents), each run."""
    rates = []
    for _ in range(runs):
        gc.collect()
        t = time.perf_counter()
        fn()
        rates.append(n / (time.perf_counter() - t))
    return rates


def readers(c, d, values, pos_of, ids, pos):
    """Pairs (docdex, dict) of functions that read the same documents."""
    batches = [ids[i:i + BATCH] for i in range(0, len(ids), BATCH)]
    pbatches = [pos[i:i + BATCH] for i in range(0, len(pos), BATCH)]

    def c_item():
        for p in pos:
            c[p]

    def d_item():
        for p in pos:
            values[p]

    def c_get():
        get = c.get
        for i in ids:
            get(i)

    def d_get():
        for i in ids:
            d[i]

    def c_many():
        for b in batches:
            c.get_many(b)

    def d_many():
        for b in batches:
            [d[i] for i in b]

    def c_many_view():
        for b in batches:
            c.get_many(b, view=True)

    def c_many_pos():
        for b in pbatches:
            c.get_many_positions(b)

    def d_many_pos():
        for b in pbatches:
            [values[p] for p in b]

    def c_position():
        position = c.position
        for i in ids:
            position(i)

    def d_position():
        for i in ids:
            pos_of[i]

    def c_positions():
        for b in batches:
            c.positions(b)

    def d_positions():
        for b in batches:
            [pos_of[i] for i in b]

    return {
        "c[pos]": (c_item, d_item),
        "c.get(id)": (c_get, d_get),
        f"c.get_many({BATCH} ids)": (c_many, d_many),
        f"c.get_many({BATCH} ids, view=True)": (c_many_view, d_many),
        f"c.get_many_positions({BATCH})": (c_many_pos, d_many_pos),
        "c.position(id)": (c_position, d_position),
        f"c.positions({BATCH} ids)": (c_positions, d_positions),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="an indexed corpus (or its .ddx)")
    ap.add_argument("--field", default=None, help="as Corpus(field=...)")
    ap.add_argument("--runs", type=int, default=5, help="runs of each reader (median)")
    ap.add_argument("--n", type=int, default=1000000, help="documents read a run")
    ap.add_argument("--seed", type=int, default=1, help="seed of the ids and positions drawn")
    ap.add_argument("--json", metavar="OUT", help="write the figures here as JSON")
    a = ap.parse_args()

    load_before = os.getloadavg()
    c = docdex.Corpus(a.corpus, field=a.field)
    count = len(c)
    rng = random.Random(a.seed)
    pos = [rng.randrange(count) for _ in range(a.n)]
    all_ids = list(c.ids())
    ids = [all_ids[p] for p in pos]
    del all_ids

    gc.collect()
    rss0 = rss_bytes()
    t = time.perf_counter()
    d, source = load_dict(a.corpus, c, a.field)
    build_s = time.perf_counter() - t
    values = list(d.values())  # for positions (a corpus without duplicate ids)
    gc.collect()
    dict_bytes = rss_bytes() - rss0
    if len(d) != count:
        sys.exit(f"corpus_speed: the dict holds {len(d)} ids, the corpus {count} records")
    rss1 = rss_bytes()
    t = time.perf_counter()
    pos_of = {i: n for n, i in enumerate(c.ids())}
    pos_build_s = time.perf_counter() - t
    gc.collect()
    pos_bytes = rss_bytes() - rss1
    check = rng.sample(range(a.n), min(1000, a.n))
    if any(c.get(ids[k]) != d[ids[k]] or c[pos[k]] != values[pos[k]] or
           c.position(ids[k]) != pos_of[ids[k]] for k in check):
        sys.exit("corpus_speed: docdex and the dict disagree on a document")

    results = {}
    for name, (cf, df) in readers(c, d, values, pos_of, ids, pos).items():
        cr, dr = timed(cf, a.n, a.runs), timed(df, a.n, a.runs)
        results[name] = {"docdex_per_s": statistics.median(cr), "dict_per_s": statistics.median(dr),
                         "docdex_runs": cr, "dict_runs": dr}
    base = os.path.realpath(a.corpus)
    mapped = huge_mappings(base[:-4] if base.endswith(".ddx") else base)
    floor = None
    if source == "file" and not a.corpus.endswith(".gz"):
        floor = mmap_floor(a.corpus, c, ids, pos, a.n, a.runs, check)
    load_after = os.getloadavg()

    print(f"{a.corpus}: {count} records; {a.n} reads a run, median of {a.runs}, one thread")
    print(f"dict from the {source}: {build_s:.1f} s, {dict_bytes / 2**20:.0f} MiB (VmRSS growth); "
          f"dict of positions: {pos_build_s:.1f} s, {pos_bytes / 2**20:.0f} MiB")
    print(f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    for path, rss, pmd in mapped:
        print(f"mapped: {path}: {rss / 2**20:,.0f} MiB resident, {pmd / max(rss, 1):.0%} in 2 MiB pages")
    print(f"{'':34s} {'docdex/s':>12s} {'dict/s':>12s} {'ratio':>7s}")
    for name, r in results.items():
        ratio = r["docdex_per_s"] / r["dict_per_s"]
        print(f"{name:34s} {r['docdex_per_s']:12,.0f} {r['dict_per_s']:12,.0f} {ratio:7.3f}")
    floor_names = {"position": "c[pos], bytes, against an mmap slice",
                   "id": "c.get(id), bytes, against an offset table"}
    if floor:
        print(f"{'':41s} {'docdex/s':>12s} {'floor/s':>12s} {'ratio':>7s}")
        for key, (dr, mr) in floor.items():
            cr, mr = statistics.median(dr), statistics.median(mr)
            print(f"{floor_names[key]:41s} {cr:12,.0f} {mr:12,.0f} {cr / mr:7.3f}")

    if a.json:
        out = {
            "corpus": a.corpus, "field": a.field, "records": count, "n": a.n, "runs": a.runs,
            "seed": a.seed, "batch": BATCH, "docdex_version": docdex.__version__,
            "python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "load_before": load_before, "load_after": load_after,
            "dict": {"source": source, "build_s": build_s, "rss_bytes": dict_bytes},
            "positions_dict": {"build_s": pos_build_s, "rss_bytes": pos_bytes},
            "mapped": [{"path": p, "rss_bytes": r, "huge_bytes": h} for p, r, h in mapped],
            "results": results,
            "mmap_floor": floor and {"docdex_bytes_per_s": statistics.median(floor["position"][0]),
                                     "mmap_slice_per_s": statistics.median(floor["position"][1]),
                                     "docdex_runs": floor["position"][0],
                                     "mmap_runs": floor["position"][1]},
            "id_floor": floor and "id" in floor and {
                "docdex_bytes_per_s": statistics.median(floor["id"][0]),
                "offset_table_per_s": statistics.median(floor["id"][1]),
                "docdex_runs": floor["id"][0], "offset_table_runs": floor["id"][1]},
        }
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()

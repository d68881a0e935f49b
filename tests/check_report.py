#!/usr/bin/env python3
"""Checks a docdex bench or pin-test JSON report (and its CSV twin) field by
field.

usage: check_report.py REPORT.json [--csv REPORT.csv] [--man PAGE]
                       [--repeat R] [--expect KEY=STATUS ...]

Every field listed below must be in the report and no other; with --man,
every one of them must be documented in the man page; with --csv, the CSV
must have the documented columns and the JSON's figures.  Exits 1 with a
message naming what is wrong.
"""
import csv
import json
import math
import re
import sys

TOP = ["report", "format_version", "build", "machine", "params", "metrics", "cells"]
BUILD = ["version", "text"]
MACHINE = ["cores", "memory_bytes", "available_bytes", "kernel", "cpu", "hostname",
           "corpus_filesystem"]
PARAMS = ["corpus", "records", "corpus_bytes", "index_bytes", "workload", "batch", "negatives",
          "queries", "qrels", "run", "depth", "seed", "workers", "threads", "duration_s",
          "samples", "warmup_s", "repeat", "mem_limit_bytes", "mem_limit_by"]
METRIC_FIELDS = ["key", "label", "unit", "better", "gate"]
METRICS = ["samples_per_s", "docs_per_s", "mib_per_s", "latency_p50_ms", "latency_p95_ms",
           "latency_p99_ms", "setup_s", "pss_mib", "uss_per_worker_mib", "rss_per_worker_mib",
           "minor_faults", "major_faults", "private_mib", "file_mib", "inflate_mib_per_s"]
CELL = ["key", "strategy", "workers", "threads", "status", "reason", "projected_bytes",
        "fastest", "summary", "repetitions"]
STATUSES = {"ok", "oom", "failed", "skipped"}
ENVIRONMENT = []
SUMMARY = []
DIMS = ["strategy", "workers", "threads"]

# pin-test: bench's report with pin-test's dimensions, its own parameters
# and figures, the environment, and the summary of the techniques.
PIN_TOP = ["report", "format_version", "build", "machine", "environment", "params", "metrics",
           "cells", "summary"]
PIN_ENVIRONMENT = ["memlock_limit_bytes", "memlock_limit", "transparent_hugepages", "dev_shm",
                   "ramdisk", "numa_nodes", "kernel", "cuda", "cuda_device", "cuda_driver",
                   "cuda_runtime"]
PIN_PARAMS = ["pin", "placement", "cache", "ramdisk", "strategy"]
PIN_METRICS = ["pin_s", "copy_s", "cached_pct", "mlocked_mib", "shmem_mib", "h2d_gb_s"]
PIN_DIMS = ["pin", "placement", "cache", "workers", "threads"]
PIN_SUMMARY = ["technique", "dimension", "value", "reference", "pairs", "gain_pct",
               "gain_min_pct", "gain_max_pct", "pss_mib", "mlocked_mib", "shmem_mib", "setup_s",
               "h2d_gb_s", "h2d_reference_gb_s"]
# Machine-wide changes, which other processes can make negative.
SIGNED = {"mlocked_mib", "shmem_mib"}


def for_command(report):
    """Sets the lists above for the command that wrote the report."""
    global TOP, ENVIRONMENT, PARAMS, METRICS, CELL, DIMS, SUMMARY
    if report == "docdex pin-test":
        TOP, ENVIRONMENT, SUMMARY, DIMS = PIN_TOP, PIN_ENVIRONMENT, PIN_SUMMARY, PIN_DIMS
        PARAMS = PARAMS + PIN_PARAMS
        METRICS = METRICS + PIN_METRICS
        CELL = ["key"] + DIMS + CELL[4:]
    elif report != "docdex bench":
        fail(f"not a docdex bench or pin-test report: {report!r}")


def cell_key(c):
    if DIMS == PIN_DIMS:
        return f'{c["pin"]}/{c["placement"]}/{c["cache"]}/j{c["workers"]}/t{c["threads"]}'
    return f'{c["strategy"]}/j{c["workers"]}/t{c["threads"]}'


def applies(c, k):
    """Whether metric k has a figure in cell c: the copies to the GPU only in
    the CUDA modes."""
    return k != "h2d_gb_s" or c.get("pin", "").startswith("cuda")


def fail(msg):
    sys.exit("check_report: " + msg)


def same_keys(what, obj, want):
    if not isinstance(obj, dict):
        fail(f"{what} is not an object")
    if list(obj) != want:
        fail(f"{what}: keys {list(obj)}, expected {want}")


def check_json(rep, repeat):
    same_keys("report", rep, TOP)
    if rep["format_version"] != 1:
        fail("not a report of format 1")
    if ENVIRONMENT:
        same_keys("environment", rep["environment"], ENVIRONMENT)
    for t in rep.get("summary", []):
        same_keys("summary " + t.get("technique", "?"), t, SUMMARY)
        if not (t["pairs"] > 0 and t["gain_min_pct"] <= t["gain_pct"] <= t["gain_max_pct"]):
            fail(f"summary {t['technique']}: figures that cannot be: {t}")
    same_keys("build", rep["build"], BUILD)
    same_keys("machine", rep["machine"], MACHINE)
    same_keys("params", rep["params"], PARAMS)
    if rep["machine"]["cores"] < 1 or rep["machine"]["memory_bytes"] <= 0:
        fail("machine: no cores or memory")
    keys = [m["key"] for m in rep["metrics"]]
    if keys != METRICS:
        fail(f"metrics {keys}, expected {METRICS}")
    for m in rep["metrics"]:
        same_keys("metric " + m["key"], m, METRIC_FIELDS)
    for c in rep["cells"]:
        same_keys("cell " + c.get("key", "?"), c, CELL)
        key = cell_key(c)
        if c["key"] != key:
            fail(f"cell key {c['key']}, expected {key}")
        if c["status"] not in STATUSES:
            fail(f"{key}: status {c['status']}")
        if c["status"] != "ok":
            if c["summary"] or c["repetitions"] or not c["reason"] or c["fastest"]:
                fail(f"{key}: a cell that is {c['status']} has figures, or no reason")
            continue
        if repeat is not None and len(c["repetitions"]) != repeat:
            fail(f"{key}: {len(c['repetitions'])} repetitions, expected {repeat}")
        same_keys(key + " summary", c["summary"], METRICS)
        for r in c["repetitions"]:
            same_keys(key + " repetition", r, METRICS)
            for k in METRICS:
                if not applies(c, k):
                    if r[k] is not None:
                        fail(f"{key}: {k} = {r[k]!r}, expected null")
                    continue
                if (not isinstance(r[k], (int, float)) or not math.isfinite(r[k])
                        or (r[k] < 0 and k not in SIGNED)):
                    fail(f"{key}: {k} = {r[k]!r}")
            if not (r["samples_per_s"] > 0 and r["docs_per_s"] >= r["samples_per_s"] * 0.999
                    and r["mib_per_s"] > 0 and r["pss_mib"] > 0 and r["rss_per_worker_mib"] > 0
                    and r["latency_p50_ms"] <= r["latency_p95_ms"] <= r["latency_p99_ms"]
                    and r["minor_faults"] > 0):
                fail(f"{key}: figures that cannot be: {r}")
        for k in METRICS:
            s = c["summary"][k]
            if not applies(c, k):
                if s["median"] is not None:
                    fail(f"{key}: summary of {k} {s}, expected null")
                continue
            vals = sorted(r[k] for r in c["repetitions"])
            if not (math.isclose(s["min"], vals[0], rel_tol=1e-6, abs_tol=1e-9)
                    and math.isclose(s["max"], vals[-1], rel_tol=1e-6, abs_tol=1e-9)
                    and s["min"] <= s["median"] <= s["max"]):
                fail(f"{key}: summary of {k} {s} does not fit {vals}")
    # The fastest of each worker count: the best by median, measured more
    # than once, whose range of repetitions is clear of every other's.
    groups = {}
    for c in rep["cells"]:
        if c["status"] == "ok":
            groups.setdefault(c["workers"], []).append(c)
    for w, cells in groups.items():
        med = lambda c: c["summary"]["samples_per_s"]["median"]
        best = max(cells, key=med)
        clear = (len(cells) > 1 and len(best["repetitions"]) > 1
                 and all(o is best or best["summary"]["samples_per_s"]["min"]
                         > o["summary"]["samples_per_s"]["max"] for o in cells))
        marked = [c["key"] for c in cells if c["fastest"]]
        if marked != ([best["key"]] if clear else []):
            fail(f"{w} workers: marked fastest {marked}, expected {[best['key']] if clear else []}")
    for c in rep["cells"]:
        if c["status"] != "ok" and c["fastest"]:
            fail(f"{c['key']}: marked fastest without figures")


def check_man(page):
    text = open(page, encoding="utf-8").read().replace("\\-", "-").replace("\\_", "_")
    text = re.sub(r"\\f[BIRP]", "", text)
    names = TOP + BUILD + MACHINE + ENVIRONMENT + PARAMS + METRIC_FIELDS + METRICS + CELL
    for name in names + SUMMARY + ["median", "min", "max"]:
        if not re.search(r"\b" + re.escape(name) + r"\b", text):
            fail(f"the man page does not document the field {name}")


def check_csv(path, rep):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    want = ["key"] + DIMS + ["status", "reason", "repetitions", "projected_bytes"]
    for k in METRICS:
        want += [k, k + "_min", k + "_max"]
    if rows[0] != want:
        fail(f"CSV header {rows[0]}, expected {want}")
    if len(rows) - 1 != len(rep["cells"]):
        fail("CSV rows and JSON cells differ in number")
    for row, c in zip(rows[1:], rep["cells"]):
        d = dict(zip(want, row))
        if d["key"] != c["key"] or d["status"] != c["status"] or int(d["repetitions"]) != len(c["repetitions"]):
            fail(f"CSV row {row[:7]} is not cell {c['key']}")
        for k in METRICS:
            if c["status"] != "ok" or not applies(c, k):
                if d[k] != "":
                    fail(f"CSV: {c['key']} is {c['status']} but has {k}")
                continue
            for suffix, field in (("", "median"), ("_min", "min"), ("_max", "max")):
                if not math.isclose(float(d[k + suffix]), c["summary"][k][field], rel_tol=1e-6,
                                    abs_tol=1e-9):
                    fail(f"CSV: {c['key']} {k}{suffix} {d[k + suffix]} != {c['summary'][k][field]}")


def main():
    args = sys.argv[1:]
    if not args:
        fail("usage: check_report.py REPORT.json [--csv F] [--man F] [--repeat R] [--expect K=S]")
    rep = json.load(open(args.pop(0)))
    for_command(rep.get("report"))
    repeat, expect = None, []
    while args:
        opt, val = args.pop(0), args.pop(0)
        if opt == "--csv":
            check_csv(val, rep)
        elif opt == "--man":
            check_man(val)
        elif opt == "--repeat":
            repeat = int(val)
        elif opt == "--expect":
            expect.append(val.split("="))
        else:
            fail("unknown option " + opt)
    check_json(rep, repeat)
    status = {c["key"]: c["status"] for c in rep["cells"]}
    for key, want in expect:
        if status.get(key) != want:
            fail(f"{key}: status {status.get(key)}, expected {want}")


main()

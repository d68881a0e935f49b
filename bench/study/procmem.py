"""Memory of a process and of its children, from /proc.

/proc/PID/smaps_rollup sums the process's mappings the way the kernel
counts them: Pss splits each shared page among the processes that map it,
so the Pss of a group of processes adds up to the memory they hold
together; Private_Clean + Private_Dirty (USS) is what only this process
holds, which is where pages copied on write after a fork end up;
Anonymous is the memory not backed by a file (the Python heap).
"""
import json
import os
import threading
import time

FIELDS = {"Rss": "rss", "Pss": "pss", "Pss_Anon": "pss_anon", "Private_Clean": "priv_clean",
          "Private_Dirty": "dirty", "Anonymous": "anon", "Swap": "swap"}


def rollup(pid):
    """{rss, pss, pss_anon, uss, dirty, anon, swap} of pid in bytes, or None
    once it is gone. uss counts the file pages that only this process has
    touched (a library's code first run in a worker after the fork) as well;
    dirty (Private_Dirty) is, near enough, the private anonymous memory:
    the heap of its own and the pages copied on write."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            text = f.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    m = {}
    for line in text.splitlines()[1:]:
        name, _, rest = line.partition(":")
        key = FIELDS.get(name)
        if key:
            m[key] = int(rest.split()[0]) * 1024
    if "pss" not in m:
        return None  # a process that exited while we read it shows no mappings
    m.setdefault("dirty", 0)
    m["uss"] = m.pop("priv_clean", 0) + m["dirty"]
    return m


def children(pid):
    """The pids of pid's children (every thread's), oldest first."""
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return sorted(set(out))


def descendants(pid):
    """pid's children, their children and so on."""
    out, todo = [], children(pid)
    while todo:
        c = todo.pop(0)
        out.append(c)
        todo.extend(children(c))
    return out


def _stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        # The command name may hold spaces and parentheses: fields follow
        # the last ')', the first of them field 3 of proc(5).
        return f.read().rpartition(")")[2].split()


def cpu_seconds(pid):
    """User + system CPU time pid has used, or None once it is gone."""
    try:
        fields = _stat_fields(pid)
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_tree(pid):
    """{pid: CPU seconds} of pid and its descendants."""
    out = {}
    for p in [pid] + descendants(pid):
        c = cpu_seconds(p)
        if c is not None:
            out[p] = c
    return out


def start_time(pid="self"):
    """When pid started, as time.time() would have said then (10 ms steps)."""
    ticks = int(_stat_fields(pid)[19])  # field 22 of proc(5)
    with open("/proc/stat") as f:
        btime = next(int(line.split()[1]) for line in f if line.startswith("btime "))
    return btime + ticks / os.sysconf("SC_CLK_TCK")


def snapshot(pid, roles=None):
    """{pid: figures} of pid (role "main") and of its descendants ("child")."""
    out = {}
    for p in [pid] + descendants(pid):
        m = rollup(p)
        if m is not None:
            m["cpu"] = cpu_seconds(p) or 0.0
            m["role"] = (roles or {}).get(p, "main" if p == pid else "child")
            out[p] = m
    return out


def total(snap, key, role=None):
    return sum(m[key] for m in snap.values() if role is None or m["role"] == role)


class Sampler:
    """Samples a process and its descendants every interval seconds in a
    thread, appending one JSON line per sample to path (flushed at once, so
    that what was seen survives the process being killed)."""

    def __init__(self, path, interval=0.5, pid=None, extra=None):
        self.pid = pid or os.getpid()
        self.interval = interval
        self.extra = extra or {}
        self.f = open(path, "a")
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.peak = {}
        self.cpu_s = 0.0  # CPU time the samples took, the page-table walks included
        self.thread = threading.Thread(target=self._run, name="procmem", daemon=True)

    def start(self):
        self.sample()
        self.thread.start()
        return self

    def sample(self, tag=None):
        # Reading smaps_rollup walks the process's page tables: tens of ms
        # for a process that maps a few GB, which the report subtracts.
        c0 = time.thread_time()
        snap = snapshot(self.pid)
        rec = {"t": time.time(), "procs": {str(p): m for p, m in snap.items()}, **self.extra}
        if tag:
            rec["tag"] = tag
        with self.lock:
            for p, m in snap.items():
                pk = self.peak.setdefault(p, dict(m))
                for k in ("pss", "uss", "dirty", "anon", "rss"):
                    pk[k] = max(pk[k], m[k])
            if not self.f.closed:
                self.f.write(json.dumps(rec) + "\n")
                self.f.flush()
            self.cpu_s += time.thread_time() - c0
        return snap

    def _run(self):
        while not self.stop_event.wait(self.interval):
            self.sample()

    def stop(self):
        self.stop_event.set()
        if self.thread.is_alive():
            self.thread.join()
        with self.lock:
            self.f.close()


def read_samples(path):
    """The records a Sampler wrote (a line cut short by a kill is left out)."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except FileNotFoundError:
        pass
    return out


MiB = 1 << 20


def mib(n):
    return round(n / MiB, 1)

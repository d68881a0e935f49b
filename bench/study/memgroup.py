"""A cgroup v1 memory group with a limit, for processes that must not take
the machine's memory: the kernel kills one of them (OOM) when the group's
memory passes the limit, and the group's counters say that it did.

The group is made below the cgroup of this process, so that whatever
limit holds for this process holds for the group as well.
"""
import os
import signal
import sys
import time

ROOT = "/sys/fs/cgroup/memory"


def parse_size(s):
    """'18G', '512M', '3.5G' or a count of bytes."""
    s = str(s).strip()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(s[-1:].upper())
    return int(float(s[:-1]) * mult) if mult else int(s)


def available():
    """Why no group can be made here, or None when one can."""
    if not os.path.isfile(os.path.join(ROOT, "memory.limit_in_bytes")):
        return f"no cgroup v1 memory controller at {ROOT}"
    if not os.access(ROOT, os.W_OK):
        return f"{ROOT} is not writable (root needed)"
    return None


def limit_from_option(value, prog):
    """--mem-limit's bytes, None without one; exits with prog's message
    where no group can be made."""
    if not value:
        return None
    why = available()
    if why:
        sys.exit(f"{prog}: --mem-limit: {why}")
    return parse_size(value)


def _own_dir():
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, ctrls, path = line.rstrip("\n").split(":", 2)
                if "memory" in ctrls.split(","):
                    d = os.path.join(ROOT, path.lstrip("/"))
                    if os.path.isdir(d) and os.access(d, os.W_OK):
                        return d
    except OSError:
        pass
    return ROOT


class MemGroup:
    def __init__(self, name, limit):
        self.limit = limit
        self.dir = os.path.join(_own_dir(), name)
        os.mkdir(self.dir)
        self._write("memory.limit_in_bytes", limit)
        # Where swap is accounted, memory + swap gets the same limit: the
        # group cannot go on by swapping out.
        self.memsw = os.path.exists(self._path("memory.memsw.limit_in_bytes"))
        if self.memsw:
            self._write("memory.memsw.limit_in_bytes", limit)
        try:
            self._write("memory.swappiness", 0)
        except OSError:
            pass  # not settable on the root group or some kernels

    def _path(self, name):
        return os.path.join(self.dir, name)

    def _write(self, name, value):
        with open(self._path(name), "w") as f:
            f.write(str(value))

    def _read(self, name):
        with open(self._path(name)) as f:
            return f.read()

    def join(self):
        """Puts the calling process in the group (as Popen's preexec_fn: the
        child is in it before it runs anything, and so are its own children)."""
        with open(self._path("cgroup.procs"), "w") as f:
            f.write("0")

    def pids(self):
        try:
            return [int(p) for p in self._read("cgroup.procs").split()]
        except OSError:
            return []

    def stats(self):
        """The group's counters: limit, peak usage, how often the limit was
        hit (failcnt) and how many processes the OOM killer killed."""
        out = {"limit": self.limit, "memsw": self.memsw}
        for key, name in (("usage_max", "memory.max_usage_in_bytes"),
                          ("failcnt", "memory.failcnt"),
                          ("memsw_failcnt", "memory.memsw.failcnt")):
            try:
                out[key] = int(self._read(name))
            except (OSError, ValueError):
                pass
        try:
            for line in self._read("memory.oom_control").splitlines():
                k, _, v = line.partition(" ")
                out[k] = int(v)  # oom_kill_disable, under_oom, oom_kill
        except (OSError, ValueError):
            pass
        try:
            for line in self._read("memory.stat").splitlines():
                k, _, v = line.partition(" ")
                if k in ("rss", "cache", "mapped_file"):
                    out["stat_" + k] = int(v)
        except (OSError, ValueError):
            pass
        return out

    def oom_kills(self):
        return self.stats().get("oom_kill", 0)

    def remove(self):
        """Kills what is left in the group (only processes this study
        started are there) and removes it."""
        for _ in range(50):
            pids = self.pids()
            if not pids:
                break
            for p in pids:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        for _ in range(50):
            try:
                os.rmdir(self.dir)
                return
            except OSError:
                time.sleep(0.1)

"""The study's generated data: a passage corpus of a given size with its
queries, qrels and run (dx-synth), indexed, made once in a folder and kept
there between runs."""
import os
import signal
import subprocess


def sh(cmd):
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def synth_corpus(workdir, size, synth, docdex, nqueries=100000, depth=100, seed=1):
    """(corpus, queries, qrels, run) under workdir/synth-SIZE."""
    d = os.path.join(workdir, f"synth-{size}")
    os.makedirs(d, exist_ok=True)
    paths = tuple(os.path.join(d, n) for n in ("corpus.tsv", "queries.tsv", "qrels.tsv", "run.trec"))
    # The marker names what was asked: other options make other topics.
    done = os.path.join(d, f"done-{nqueries}-{depth}-{seed}")
    if not os.path.exists(done):
        for f in os.listdir(d):
            if f.startswith("done-"):
                os.remove(os.path.join(d, f))
        corpus, queries, qrels, run = paths
        sh([synth, "--kind", "passages", "--layout", "tsv", "--size", size, "-o", corpus,
            "--queries", queries, "--qrels", qrels, "--run", run,
            "--nqueries", str(nqueries), "--depth", str(depth), "--seed", str(seed)])
        sh([docdex, "index", "-q", corpus])
        open(done, "w").close()
    return paths


def stop_on_signals():
    """SIGTERM and SIGINT raise KeyboardInterrupt, so that the launcher's
    clean-up (killing the ranks it started, removing its cgroup) runs even
    where it was started in the background with SIGINT ignored."""
    def stop(signum, frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

"""docdex: documents by id out of indexed IR corpora.

A corpus (TSV, JSONL or TREC; plain, gzip or BGZF) indexed with
``docdex index CORPUS`` is opened as a :class:`Corpus`, which serves its
records by id or by position::

    import docdex
    with docdex.Corpus("collection.tsv", field="text") as c:
        print(len(c), c.get("7"), c[0], c.get_many(["3", "1"]))

Training triples drawn from one, as ``docdex sample`` draws them, come
from a :class:`Sampler`.  Errors of the library raise :class:`Error`.  The work is done by the C
extension ``docdex._docdex`` over the docdex core library.
"""
import builtins
import collections
import math
import operator
import os

from ._docdex import (
    _Sampler,
    Corpus,
    Error,
    ERR_CANCELED,
    ERR_CORRUPT,
    ERR_DUPID,
    ERR_FORMAT,
    ERR_INVAL,
    ERR_LIMIT,
    ERR_MISMATCH,
    ERR_NOID,
    ERR_NOMEM,
    ERR_STALE,
    ERR_SYS,
    ERR_VERSION,
    __version__,
    library_version,
)
# Errors of failed system calls, each a docdex.Error and the OSError that
# open() would raise.  Here so that they pickle by name; left out of
# __all__, where `import *` would hide the builtins they are named after.
from ._docdex import (  # noqa: F401
    FileNotFoundError,
    IsADirectoryError,
    NotADirectoryError,
    OSError,
    PermissionError,
)


def _reduce_os_error(e):
    """An OSError made from a message alone pickles its args only; its
    errno goes with the rest of its state here."""
    return type(e), e.args, dict(e.__dict__, errno=e.errno)


OSError.__reduce__ = _reduce_os_error
# An Error made again from its message alone (as a DataLoader re-raises a
# worker's) has no code nor errno of its own: None, rather than no
# attribute.  docdex.OSError keeps OSError's own errno, which Error's
# default would otherwise hide.
Error.code = None
Error.errno = None
OSError.errno = builtins.OSError.__dict__["errno"]

__all__ = [
    "Corpus",
    "Error",
    "Sampler",
    "Triple",
    "ERR_CANCELED",
    "ERR_CORRUPT",
    "ERR_DUPID",
    "ERR_FORMAT",
    "ERR_INVAL",
    "ERR_LIMIT",
    "ERR_MISMATCH",
    "ERR_NOID",
    "ERR_NOMEM",
    "ERR_STALE",
    "ERR_SYS",
    "ERR_VERSION",
    "__version__",
    "library_version",
]


Triple = collections.namedtuple(
    "Triple", ["n", "epoch", "qid", "query", "pos_id", "pos", "neg_ids", "negs"])
Triple.__doc__ = """A training triple of a Sampler.

n is its number in the whole (unsharded) sequence, epoch the pass over the
pairs it belongs to; qid and query the query; pos_id and pos the positive's
id and text; neg_ids and negs lists of the negatives' ids and texts.  The
texts are None for a Sampler with ids_only=True."""

_PAIRS = {"all": 0, "query": 1}
_WEIGHTS = {"uniform": 0, "rank": 1}


_U64 = 2**64 - 1


def _whole(name, value, lo=0, hi=_U64):
    """value, an integer from lo to hi, as an int: TypeError for what is no
    integer (a float, a str), ValueError out of range, where the C
    conversion would wrap round (seed=2**64 was seed=0)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} is an integer, not bool")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} is an integer, not {type(value).__name__}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{name} is {lo} to {hi if hi < _U64 else '2**64 - 1'}, not {v}")
    return v


def _env_int(name, default):
    text = os.environ.get(name) or default
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"${name} is not a number: {text!r}") from None


def _shard(rank, world_size):
    """rank and world_size: given, else torch.distributed's when it is
    initialised, else $RANK and $WORLD_SIZE, else 0 and 1."""
    if rank is None or world_size is None:
        dist_rank = dist_world = None
        try:
            import torch.distributed as dist
            if dist.is_available() and dist.is_initialized():
                dist_rank, dist_world = dist.get_rank(), dist.get_world_size()
        except ImportError:
            pass
        if rank is None:
            rank = dist_rank if dist_rank is not None else _env_int("RANK", "0")
        if world_size is None:
            world_size = dist_world if dist_world is not None else _env_int("WORLD_SIZE", "1")
    world_size = _whole("world_size", world_size, 1)
    rank = _whole("rank", rank)
    if not rank < world_size:
        raise ValueError(f"rank {rank} must be from 0 to world_size - 1 ({world_size})")
    return rank, world_size


def _margin(margin):
    """(kind, value) of margin=: None, a score difference, or "P%"."""
    if margin is None:
        return 0, 0.0
    if isinstance(margin, str):
        text = margin.strip()
        if text.endswith("%"):
            value = float(text[:-1])
            if not 0 <= value <= 100:
                raise ValueError(f"bad margin {margin!r}: a percentage is 0 to 100")
            return 2, value
        margin = float(text)
    value = float(margin)
    if not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"bad margin {margin!r}: give a score difference >= 0")
    return 1, value


def _depth(depth):
    """(depth, depth_from) of depth=: None, K or (A, B)."""
    if depth is None:
        return 0, 0
    if not isinstance(depth, (tuple, list)):
        return _whole("depth", depth, 1, 2**32 - 1), 1
    if len(depth) != 2:
        raise ValueError(f"bad depth {depth!r}: give K, or places (A, B)")
    a, b = (_whole("depth", x, 1, 2**32 - 1) for x in depth)
    if not a <= b:
        raise ValueError(f"bad depth {depth!r}: give places (A, B), 1 <= A <= B")
    return b, a


class Sampler:
    """Training triples drawn from an indexed corpus, as ``docdex sample``
    draws them: the same options and seed give the same triples.

    Sampler(corpus, *, queries=None, qrels=None, run=None, triples=None,
    min_rel=1, depth=None, exclude_judged=False, random=False,
    run_ratio=0.5, negatives=1, seed=0, count=None, epochs=None, rank=None,
    world_size=None, start=0, drop_last=False, pairs="all", margin=None,
    weights="uniform", field=None, ids_only=False, strict=False, access=None)

    corpus is a Corpus (its path is opened again, for the sampler alone) or
    a path; None with ids_only=True, which gives ids without texts and
    checks no id.  The options are those of ``docdex sample``: depth is K
    or places (A, B); margin a score difference or a str "P%"; pairs "all"
    or "query"; weights "uniform" or "rank"; field the document fields
    that make a text (default: the text, as docdex sample prints it);
    access how the corpus is read, as Corpus's (default: the Corpus's,
    else "auto").  They are checked as docdex sample checks its options:
    ValueError for a value out of range (a seed past 2**64 - 1, count=0)
    or for inputs that do not go together (a triples file with qrels),
    TypeError for a float or a str where an integer is asked.

    Iterating yields :class:`Triple` objects of this shard: rank and
    world_size default to torch.distributed's when it is initialised, else
    to $RANK and $WORLD_SIZE, else to 0 and 1.  len(s) is the number of
    triples of this shard from start (0 for a triples file without count,
    whose length is not known in advance).

    state_dict() says where to resume: start is the global triple number
    after the triples yielded so far, start + k * world_size after k
    triples here; that holds when every rank took the same number of steps,
    as in DDP.  load_state_dict(d) opens the sampler again from there,
    with any world size.
    """

    def __init__(self, corpus=None, *, queries=None, qrels=None, run=None, triples=None,
                 min_rel=1, depth=None, exclude_judged=False, random=False, run_ratio=0.5,
                 negatives=1, seed=0, count=None, epochs=None, rank=None, world_size=None,
                 start=0, drop_last=False, pairs="all", margin=None, weights="uniform",
                 field=None, ids_only=False, strict=False, batch_size=256, access=None):
        if isinstance(corpus, Corpus):
            if field is None and not ids_only:
                field = corpus.field
            if access is None:
                access = corpus.access
            corpus = corpus.path
        if corpus is None and not ids_only:
            raise ValueError("a corpus is needed for texts: give one, or ids_only=True")
        if corpus is None and random:
            raise ValueError("random draws from a corpus: give one")
        if pairs not in _PAIRS:
            raise ValueError(f"pairs is 'all' or 'query', not {pairs!r}")
        if weights not in _WEIGHTS:
            raise ValueError(f"weights is 'uniform' or 'rank', not {weights!r}")
        if count is not None and epochs is not None:
            raise ValueError("give count or epochs, not both")
        # Which inputs go together, as docdex sample has them.
        if queries is None and not ids_only:
            raise ValueError("no queries given: the triples' query texts come from queries= "
                             "(only ids_only=True needs none)")
        if triples is not None:
            given = [name for name, value, default in (
                ("qrels", qrels, None), ("run", run, None), ("random", random, False),
                ("min_rel", min_rel, 1), ("depth", depth, None),
                ("exclude_judged", exclude_judged, False), ("run_ratio", run_ratio, 0.5),
                ("margin", margin, None), ("weights", weights, "uniform"),
                ("pairs", pairs, "all")) if value != default]
            if given:
                raise ValueError(f"a triples file is read as it is: it takes no {', '.join(given)}")
        min_rel, run_ratio = float(min_rel), float(run_ratio)
        if not math.isfinite(min_rel):
            raise ValueError(f"min_rel is a relevance, not {min_rel!r}")
        if not 0 <= run_ratio <= 1:
            raise ValueError(f"run_ratio is from 0 to 1, not {run_ratio!r}")
        rank, world_size = _shard(rank, world_size)
        depth_to, depth_from = _depth(depth)
        margin_kind, margin_value = _margin(margin)
        self.ids_only = bool(ids_only)
        self.batch_size = _whole("batch_size", batch_size, 1, 2**31 - 1)
        self._opts = dict(
            corpus=corpus, queries=queries, qrels=qrels, run=run, triples=triples,
            field=field, min_rel=min_rel, depth=depth_to, depth_from=depth_from,
            exclude_judged=bool(exclude_judged), random=bool(random), run_ratio=run_ratio,
            negatives=_whole("negatives", negatives, 1, 1024), seed=_whole("seed", seed),
            count=0 if count is None else _whole("count", count, 1),
            epochs=0 if epochs is None else _whole("epochs", epochs, 1),
            rank=rank, world_size=world_size, strict=bool(strict), pairs=_PAIRS[pairs],
            drop_last=bool(drop_last), margin_kind=margin_kind, margin=margin_value,
            weights=_WEIGHTS[weights], access="auto" if access is None else access)
        self._open(_whole("start", start))

    def _open(self, start, **changed):
        """(Re)opens the C sampler at global triple start, with the options
        changed; as it was when that fails."""
        opts = dict(self._opts, start=start, **changed)
        s = _Sampler(**opts)
        old = getattr(self, "_s", None)
        self._s, self._opts = s, opts
        if old is not None:
            old.close()
        self._start = start
        self._yielded = 0
        self._buf = collections.deque()
        self._report = self._s.report()

    @property
    def rank(self):
        return self._opts["rank"]

    @property
    def world_size(self):
        return self._opts["world_size"]

    @property
    def seed(self):
        return self._opts["seed"]

    def __iter__(self):
        return self

    def __next__(self):
        if not self._buf:
            batch = self._s.next_batch(self.batch_size)
            if not batch:
                raise StopIteration
            self._buf.extend(batch)
        self._yielded += 1
        return Triple._make(self._buf.popleft())

    def __len__(self):
        return self._report["shard"]

    @property
    def total(self):
        """Triples in all shards from number 0 (0 for a triples file
        without count, whose length is not known in advance)."""
        return self._report["total"]

    def __getitem__(self, n):
        """Triple n of the unsharded sequence, whatever this shard and its
        start: s[n] is the triple that the shard owning n yields.  Not for
        a triples file, which is read in order."""
        return self.get_many((n,))[0]

    def get_many(self, ns):
        """The triples numbered ns, in that order, read in one call."""
        total = self.total
        numbers = []
        for n in ns:
            n = operator.index(n)
            if n < 0:
                if n + total < 0:
                    raise IndexError(f"triple number {n} out of range ({total} triples)")
                n += total
            numbers.append(n)
        return [Triple._make(t) for t in self._s.at(numbers)]

    def __getstate__(self):
        # A pickled sampler (a DataLoader worker's, under spawn) opens its
        # inputs again, from the start this one was opened at.
        return {"opts": dict(self._opts), "start": self._start,
                "ids_only": self.ids_only, "batch_size": self.batch_size}

    def __setstate__(self, state):
        self._opts = state["opts"]
        self.ids_only = state["ids_only"]
        self.batch_size = state["batch_size"]
        self._open(state["start"])

    def report(self):
        """What was read and counted: queries, positives, pairs,
        no_negative, run_entries, total, shard, per_epoch, and problems
        (skipped input lines by kind)."""
        return self._s.report()

    def state_dict(self):
        """{"start": the global triple number to resume at, "seed": ...,
        "yielded": triples yielded here since start}.  Valid when every
        rank took as many steps as this one."""
        return {"start": self._start + self._yielded * self.world_size,
                "seed": self.seed, "yielded": self._yielded}

    def load_state_dict(self, state):
        """Opens the sampler again at state["start"] (and its seed); on
        failure it stays as it was."""
        changed = {"seed": _whole("seed", state["seed"])} if "seed" in state else {}
        self._open(_whole("start", state["start"]), **changed)

    def close(self):
        self._s.close()
        self._buf.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

"""Type stubs of docdex: documents by id out of indexed IR corpora."""
import builtins
import os
from typing import (Any, Dict, Iterable, Iterator, List, Literal, NamedTuple, Optional, Sequence,
                    SupportsIndex, Tuple, Union, overload)

__version__: str
"""The version of the docdex library this package was built with."""
library_version: str
"""The version of the library that runs (linked in statically: the same)."""

ERR_SYS: int
ERR_NOMEM: int
ERR_INVAL: int
ERR_FORMAT: int
ERR_CORRUPT: int
ERR_STALE: int
ERR_DUPID: int
ERR_NOID: int
ERR_CANCELED: int
ERR_LIMIT: int
ERR_VERSION: int
ERR_MISMATCH: int

_Id = Union[str, bytes]
_Doc = Union[str, bytes, memoryview]
_Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

class Error(Exception):
    """An error of the docdex library: str(e) is its one-line description."""

    code: Optional[int]
    """The library's DX_E* code: one of the ERR_* constants (None for an
    Error made again from its message alone, as a DataLoader re-raises a
    worker's)."""
    errno: Optional[int]
    """errno of the system call that failed, or 0 (None as code is)."""

# A failed system call (code ERR_SYS): a docdex.Error that is also the
# OSError open() raises for its errno.  Not in __all__: they bear the
# builtins' names.
class OSError(Error, builtins.OSError):
    """A system call of docdex failed (its errno in e.errno)."""

class FileNotFoundError(OSError, builtins.FileNotFoundError):
    """A file docdex needs does not exist (ENOENT)."""

class PermissionError(OSError, builtins.PermissionError):
    """docdex may not read or write a file (EACCES, EPERM)."""

class IsADirectoryError(OSError, builtins.IsADirectoryError):
    """A file docdex was given is a directory (EISDIR)."""

class NotADirectoryError(OSError, builtins.NotADirectoryError):
    """A path docdex was given goes through a file (ENOTDIR)."""

class Corpus:
    """Documents served out of an indexed corpus, by id or by position.

    Corpus(path, field=None, *, bytes=False, view=False, access="auto",
    inflate_cache=0) opens CORPUS (with CORPUS.ddx beside it) or the index
    itself.  field selects fields as ``docdex get --field`` does
    ("title,body"); documents come as str (UTF-8,
    errors='surrogateescape'), with bytes=True as bytes, with view=True as
    read-only memoryviews: of the file's own pages where the text lies in a
    plain file's mapping as it is (no copy), else of a bytes copy.
    inflate_cache, a size in bytes, shares what is inflated from a gzip or
    BGZF corpus with the other processes that read it with one (see
    ``docdex get --inflate-cache``).
    """

    path: Union[str, bytes]
    """The path it was opened with, as os.fspath gave it."""
    field: Optional[str]
    """The field selection, or None for the whole record."""
    @property
    def closed(self) -> bool:
        """Whether the corpus is closed."""
    @property
    def bytes(self) -> bool:
        """Whether documents and ids come as bytes by default."""
    @property
    def view(self) -> bool:
        """Whether documents come as memoryviews by default."""
    @property
    def access(self) -> Literal["auto", "mmap", "pread"]:
        """How records, or a compressed corpus's compressed bytes, are read
        (see ``docdex get --access``)."""
    @property
    def inflate_cache(self) -> int:
        """The size of the inflate cache it was opened with (0: none)."""
    @property
    def inflated(self) -> int:
        """Bytes this handle has inflated since it was opened (not counting
        what came from the inflate cache)."""
    def __init__(self, path: _Path, field: Optional[str] = None, *, bytes: bool = False,
                 view: bool = False, access: Literal["auto", "mmap", "pread"] = "auto",
                 inflate_cache: int = 0) -> None: ...
    def __len__(self) -> int:
        """The number of records."""
    @overload
    def __getitem__(self, pos: SupportsIndex) -> _Doc:
        """The record at a 0-based position (negative from the end); IndexError out of range."""
    @overload
    def __getitem__(self, pos: slice) -> List[_Doc]:
        """The records of a slice of positions, as a list."""
    def __contains__(self, id: object) -> bool:
        """Whether a record has this id."""
    def __iter__(self) -> Iterator[Union[str, bytes]]:
        """The ids in corpus order."""
    def __reversed__(self) -> Iterator[Union[str, bytes]]:
        """The ids from the last record to the first (the reverse of iter)."""
    def id(self, position: int) -> Union[str, bytes]:
        """The id of the record at this position (negative: from the end)."""
    def ids(self) -> Iterator[Union[str, bytes]]:
        """The ids in corpus order (bytes for a corpus opened with bytes=True)."""
    @overload
    def get(self, id: _Id, *, bytes: Optional[bool] = None, view: Literal[True]) -> memoryview: ...
    @overload
    def get(self, id: _Id, *, bytes: Literal[True], view: Literal[False, None] = None) -> bytes: ...
    @overload
    def get(self, id: _Id, *, bytes: Literal[False], view: Literal[False, None] = None) -> str: ...
    @overload
    def get(self, id: _Id, *, bytes: Optional[bool] = None, view: Optional[bool] = None) -> _Doc:
        """The document with this id; KeyError when none has it.  view=True
        gives a memoryview; else bytes= as given; else the corpus's kind."""
    def get_many(self, ids: Iterable[_Id], *, bytes: Optional[bool] = None,
                 view: Optional[bool] = None) -> List[_Doc]:
        """The documents of these ids, in order, read in one call; KeyError for an unknown id."""
    def get_many_positions(
        self, positions: Sequence[SupportsIndex], *, bytes: Optional[bool] = None,
        view: Optional[bool] = None
    ) -> List[_Doc]:
        """The documents at these positions, in order, read in one call; IndexError out of range."""
    def position(self, id: _Id) -> int:
        """The position of the record with this id; KeyError when none has it."""
    def positions(self, ids: Iterable[_Id]) -> List[int]:
        """The positions of these ids, in order, found in one call; KeyError for an unknown id."""
    def close(self) -> None:
        """Closes the corpus; later calls raise ValueError."""
    def __enter__(self) -> "Corpus": ...
    def __exit__(self, *args: object) -> None: ...
    def __reduce__(self) -> tuple:
        """Pickled as the arguments that open it again."""

class Triple(NamedTuple):
    """A training triple of a Sampler; the texts are None with ids_only."""

    n: int
    epoch: int
    qid: str
    query: str
    pos_id: str
    pos: Optional[str]
    neg_ids: List[str]
    negs: Optional[List[str]]

class Sampler(Iterator[Triple]):
    """Training triples drawn from an indexed corpus as ``docdex sample``
    draws them: the same options and seed give the same triples."""

    batch_size: int
    ids_only: bool
    def __init__(
        self,
        corpus: Union[Corpus, _Path, None] = ...,
        *,
        queries: Optional[_Path] = ...,
        qrels: Optional[_Path] = ...,
        run: Optional[_Path] = ...,
        triples: Optional[_Path] = ...,
        min_rel: float = ...,
        depth: Union[int, Tuple[int, int], None] = ...,
        exclude_judged: bool = ...,
        random: bool = ...,
        run_ratio: float = ...,
        negatives: int = ...,
        seed: int = ...,
        count: Optional[int] = ...,
        epochs: Optional[int] = ...,
        rank: Optional[int] = ...,
        world_size: Optional[int] = ...,
        start: int = ...,
        drop_last: bool = ...,
        pairs: Literal["all", "query"] = ...,
        margin: Union[float, str, None] = ...,
        weights: Literal["uniform", "rank"] = ...,
        field: Optional[str] = ...,
        ids_only: bool = ...,
        access: Optional[Literal["auto", "mmap", "pread"]] = ...,
        strict: bool = ...,
        batch_size: int = ...,
    ) -> None: ...
    @property
    def rank(self) -> int: ...
    @property
    def world_size(self) -> int: ...
    @property
    def seed(self) -> int: ...
    def __iter__(self) -> "Sampler": ...
    def __next__(self) -> Triple: ...
    def __len__(self) -> int:
        """Triples of this shard from start (0 when not known in advance)."""
    @property
    def total(self) -> int:
        """Triples in all shards from number 0 (0 when not known in advance)."""
    def __getitem__(self, n: int) -> Triple:
        """Triple n of the unsharded sequence (not for a triples file)."""
    def get_many(self, ns: Iterable[int]) -> List[Triple]:
        """The triples numbered ns, in that order, read in one call."""
    def report(self) -> Dict[str, Any]:
        """What was read and counted: queries, positives, pairs, no_negative,
        run_entries, total, shard, per_epoch, problems."""
    def state_dict(self) -> Dict[str, int]:
        """{"start", "seed", "yielded"}: start is the global triple number
        to resume at (start + yielded * world_size; every rank must have
        taken as many steps, as in DDP)."""
    def load_state_dict(self, state: Dict[str, int]) -> None:
        """Opens the sampler again at state["start"], on any world size."""
    def close(self) -> None: ...
    def __enter__(self) -> "Sampler": ...
    def __exit__(self, *exc: object) -> None: ...

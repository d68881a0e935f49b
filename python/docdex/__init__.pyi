"""Type stubs of docdex: documents by id out of indexed IR corpora."""
import os
from typing import Iterable, Iterator, List, Literal, Optional, Sequence, SupportsIndex, Union, overload

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
_Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

class Error(Exception):
    """An error of the docdex library: str(e) is its one-line description."""

    code: int
    """The library's DX_E* code: one of the ERR_* constants."""
    errno: int
    """errno of the system call that failed, or 0."""

class Corpus:
    """Documents served out of an indexed corpus, by id or by position.

    Corpus(path, field=None, *, bytes=False) opens CORPUS (with CORPUS.ddx
    beside it) or the index itself.  field selects fields as
    ``docdex get --field`` does ("title,body"); documents come as str
    (UTF-8, errors='surrogateescape') or, with bytes=True, as bytes.
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
    def __init__(self, path: _Path, field: Optional[str] = None, *, bytes: bool = False) -> None: ...
    def __len__(self) -> int:
        """The number of records."""
    def __getitem__(self, pos: SupportsIndex) -> Union[str, bytes]:
        """The record at a 0-based position (negative from the end); IndexError out of range."""
    def __contains__(self, id: object) -> bool:
        """Whether a record has this id."""
    def __iter__(self) -> Iterator[Union[str, bytes]]:
        """The ids in corpus order."""
    def ids(self) -> Iterator[Union[str, bytes]]:
        """The ids in corpus order (bytes for a corpus opened with bytes=True)."""
    @overload
    def get(self, id: _Id, *, bytes: Literal[True]) -> bytes: ...
    @overload
    def get(self, id: _Id, *, bytes: Literal[False]) -> str: ...
    @overload
    def get(self, id: _Id, *, bytes: Optional[bool] = None) -> Union[str, bytes]:
        """The document with this id; KeyError when none has it."""
    def get_many(self, ids: Iterable[_Id], *, bytes: Optional[bool] = None) -> List[Union[str, bytes]]:
        """The documents of these ids, in order, read in one call; KeyError for an unknown id."""
    def get_many_positions(
        self, positions: Sequence[SupportsIndex], *, bytes: Optional[bool] = None
    ) -> List[Union[str, bytes]]:
        """The documents at these positions, in order, read in one call; IndexError out of range."""
    def close(self) -> None:
        """Closes the corpus; later calls raise ValueError."""
    def __enter__(self) -> "Corpus": ...
    def __exit__(self, *args: object) -> None: ...
    def __reduce__(self) -> tuple:
        """Pickled as the arguments that open it again."""

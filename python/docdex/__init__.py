"""docdex: documents by id out of indexed IR corpora.

A corpus (TSV, JSONL or TREC; plain, gzip or BGZF) indexed with
``docdex index CORPUS`` is opened as a :class:`Corpus`, which serves its
records by id or by position::

    import docdex
    with docdex.Corpus("collection.tsv", field="text") as c:
        print(len(c), c.get("7"), c[0], c.get_many(["3", "1"]))

Errors of the library raise :class:`Error`.  The work is done by the C
extension ``docdex._docdex`` over the docdex core library.
"""
from ._docdex import (
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

__all__ = [
    "Corpus",
    "Error",
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

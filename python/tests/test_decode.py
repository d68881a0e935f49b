"""Documents come back as the str Python's own decoder makes of their bytes,
bytes.decode("utf-8", "surrogateescape"), whichever way they are read:
equal, and of the same kind (PEP 393: ASCII, Latin-1, BMP or beyond), so
that the size and the speed of each str are those of Python's.  The
package decodes them itself, without the GIL (python/src/utf8.c); its
fuzz harness (tests/fuzz/fuzz_utf8.c) checks it against a reference, and
this against Python."""
import random
import sys

import docdex
from conftest import run

# Pieces of text whose borders the decoder must find: ASCII, each width of
# str, every kind of broken or forbidden sequence (overlong, surrogate,
# above U+10FFFF, cut short, a stray continuation), and Latin-1 bytes
# that are not UTF-8 (the mojibake of real corpora).
PIECES = [
    b"plain", b" ", b"0123456789abcdef" * 3, "é".encode(), "ÿ".encode(), "Ā".encode(),
    "€".encode(), "’".encode(), "日本".encode(), "\ufffd".encode(), "\uffff".encode(),
    "😀".encode(), "\U0010ffff".encode(), b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\x80",
    b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf0\x80\x80\x80", b"\xf4\x90\x80\x80",
    b"\xf5\x80\x80\x80", b"\xff", b"\xfe", b"\x80", b"\xbf", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98",
    b"caf\xe9", b"\xc3\xa2\xe2\x82\xac\xe2\x84\xa2", b"\x00", b"\x7f",
]


def documents(n, seed):
    """n documents of the pieces, short and long, each with at most one
    kind of piece beyond ASCII in some (so that every kind of str is
    made), and none with a tab, a newline or a carriage return."""
    rng = random.Random(seed)
    docs = [b"", b"ascii only", "é".encode(), "€".encode(), "😀".encode(), b"\xff", b"\xe2\x82",
            b"a" * 31 + "é".encode(), b"a" * 47 + b"\xed\xa0\x80" + b"b" * 9]
    for k in range(64):
        docs.append(b"x" * k + "€".encode() + b"y" * (70 - k))
    while len(docs) < n:
        pieces = PIECES if rng.random() < 0.7 else PIECES[:3] + [rng.choice(PIECES[3:])]
        docs.append(b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 60))))
    return docs


def corpus(tmp_path, docdex_bin, docs):
    path = str(tmp_path / "edge.tsv")
    with open(path, "wb") as f:
        for i, d in enumerate(docs):
            f.write(b"%d\t%s\n" % (i, d))
    run(docdex_bin, "index", "-q", path)
    return path


def same(got, want):
    """got is want, as Python's decoder makes it: equal, of the same kind."""
    return (type(got) is str and got == want and sys.getsizeof(got) == sys.getsizeof(want)
            and got.isascii() == want.isascii())


def test_every_read_decodes_as_python(tmp_path, docdex_bin):
    docs = documents(3000, 1)
    want = [d.decode("utf-8", "surrogateescape") for d in docs]
    kinds = {max(map(ord, w), default=0).bit_length() > 8 for w in want}
    assert kinds == {False, True}
    path = corpus(tmp_path, docdex_bin, docs)
    ids = [str(i) for i in range(len(docs))]
    with docdex.Corpus(path, field="text") as c:
        for i, w in enumerate(want):
            assert same(c[i], w), (i, docs[i])
            assert same(c.get(ids[i]), w), (i, docs[i])
        for got, w in zip(c.get_many(ids), want):
            assert same(got, w)
        order = list(range(len(docs)))
        random.Random(2).shuffle(order)
        for got, k in zip(c.get_many_positions(order), order):
            assert same(got, want[k])
        # The bytes are the file's, whatever the decoder made of them.
        assert c.get_many_positions(order[:500], bytes=True) == [docs[k] for k in order[:500]]
    # The whole record, its id and tab before the text.
    with docdex.Corpus(path) as c:
        assert all(same(c[i], f"{i}\t" + w) for i, w in enumerate(want))


def test_sampler_decodes_as_python(tmp_path, docdex_bin):
    docs = documents(400, 3)
    want = [d.decode("utf-8", "surrogateescape") for d in docs]
    path = corpus(tmp_path, docdex_bin, docs)
    queries, qrels = str(tmp_path / "q.tsv"), str(tmp_path / "qrels")
    with open(queries, "w") as q, open(qrels, "w") as r:
        for k in range(100):
            q.write(f"q{k}\tquery {k}\n")
            r.write(f"q{k} 0 {(k * 7) % len(docs)} 1\n")
    s = docdex.Sampler(path, queries=queries, qrels=qrels, negatives=3, random=True, seed=5,
                       field="text")
    seen = 0
    for t in s:
        for pid, text in [(t.pos_id, t.pos)] + list(zip(t.neg_ids, t.negs)):
            assert same(text, want[int(pid)]), pid
            seen += 1
    assert seen == 400

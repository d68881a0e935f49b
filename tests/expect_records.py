"""Independent reference for the real-data tests: the ids and records of a
corpus file, as docdex should serve them, written without docdex's code.

usage: expect_records.py tsv|jsonl|trec FILE IDS_OUT RECORDS_OUT
Writes each record's id to IDS_OUT (one a line) and the records, each
followed by a newline, to RECORDS_OUT, in corpus order.
"""
import json
import re
import sys

ID_KEYS = ("docid", "_id", "id", "pid", "doc_id")


def tsv(data):
    for line in data.split(b"\n"):
        line = line.removesuffix(b"\r")
        if line.strip(b" \t"):
            yield line.split(b"\t", 1)[0], line


def jsonl(data):
    key = None
    for line in data.split(b"\n"):
        line = line.removesuffix(b"\r")
        if not line.strip(b" \t"):
            continue
        obj = json.loads(line)
        if key is None:  # the first id key in the first record, kept for all
            key = next(k for k in obj if k in ID_KEYS)
        yield str(obj[key]).encode(), line


def trec(data):
    for m in re.finditer(rb"<DOC[>\s].*?</DOC>", data, re.S):
        rec = m.group(0)
        no = re.search(rb"<DOCNO>(.*?)</DOCNO>", rec, re.S | re.I)
        docid = no.group(1) if no else re.search(rb'id="([^"]*)"', rec).group(1)
        yield docid.strip(), rec


def main():
    fmt, path, ids_out, recs_out = sys.argv[1:]
    data = open(path, "rb").read().removeprefix(b"\xef\xbb\xbf")
    with open(ids_out, "wb") as ids, open(recs_out, "wb") as recs:
        for docid, rec in {"tsv": tsv, "jsonl": jsonl, "trec": trec}[fmt](data):
            ids.write(docid + b"\n")
            recs.write(rec + b"\n")


main()

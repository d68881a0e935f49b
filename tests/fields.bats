#!/usr/bin/env bats
# The text of a document when no --field is given: the same bytes as the
# explicit field that names it, in every format, for get and sample; and
# fields selected together, kept apart by get's tsv and jsonl output.

load helpers

@test "sample on a TREC corpus without --field trains on the <TEXT> element, as --field text does" {
	printf '<DOC><DOCNO>d1</DOCNO><HEADLINE>T1</HEADLINE><TEXT>body one</TEXT></DOC>\n' > c.trec
	printf '<DOC><DOCNO>d2</DOCNO><HEADLINE>T2</HEADLINE><TEXT>\nbody two\n</TEXT></DOC>\n' >> c.trec
	dx index -q c.trec
	printf 'q1\tquery one\n' > q.tsv
	printf 'q1\td1\td2\n' > t.tsv
	run --separate-stderr dx sample --queries q.tsv --triples t.tsv c.trec
	status_is 0
	equals "$output" "$(printf 'query one\tbody one\tbody two')"
	equals "$(dx sample --queries q.tsv --triples t.tsv --field text c.trec)" "$output"
}

@test "the default text is --field text on real TREC collections (AP, Robust-style, Terrier)" {
	use_data trec-ap-sample.trec shakespeare-merchant.trec vaswani-300.trec
	local f id
	for f in trec-ap-sample.trec shakespeare-merchant.trec vaswani-300.trec; do
		dx index -q "$f"
		id=$(dx get --position --field docno "$f" 1)
		printf 'q1\tq\n' > q.tsv
		printf 'q1\t%s\t%s\n' "$id" "$id" > t.tsv
		equals "$(dx sample --queries q.tsv --triples t.tsv "$f")" \
		       "$(dx sample --queries q.tsv --triples t.tsv --field text "$f")"
	done
	# AP documents: the <TEXT> element only, without <HEAD> or <DATELINE>.
	printf 'q1\tTREC_DOC_1\tDOC222\n' > t.tsv
	equals "$(dx sample --queries q.tsv --triples t.tsv --format jsonl trec-ap-sample.trec)" \
	       '{"qid":"q1","query":"q","pos_id":"TREC_DOC_1","pos":"very simple\n   text","neg_id":"DOC222","neg":"simple\n   enough\n   text\n   text\n   text","epoch":0}'
}

@test "the default text of TSV and JSONL corpora is the column or key that names it" {
	use_data msmarco-passage-toy.tsv beir-msmarco-300.jsonl
	dx index -q msmarco-passage-toy.tsv
	dx index -q beir-msmarco-300.jsonl
	printf 'q1\tq\n' > q.tsv
	printf 'q1\t0\t1\n' > t.tsv
	equals "$(dx sample --queries q.tsv --triples t.tsv msmarco-passage-toy.tsv)" \
	       "$(dx sample --queries q.tsv --triples t.tsv --field text msmarco-passage-toy.tsv)"
	local a b
	a=$(dx get --position --field _id beir-msmarco-300.jsonl 0)
	b=$(dx get --position --field _id beir-msmarco-300.jsonl 1)
	printf 'q1\t%s\t%s\n' "$a" "$b" > t.tsv
	equals "$(dx sample --queries q.tsv --triples t.tsv beir-msmarco-300.jsonl)" \
	       "$(dx sample --queries q.tsv --triples t.tsv --field text beir-msmarco-300.jsonl)"
}

@test "tsv and jsonl keep the selected fields apart: each the bytes raw prints for it alone" {
	use_data trec-ap-sample.trec beir-dbpedia-300.jsonl msmarco-v2.1-doc-segmented.json msmarco-passage-toy.tsv
	local f fields id
	while read -r f fields id; do
		dx index -q "$f"
		local -a names
		IFS=, read -r -a names <<<"$fields"
		: > alone
		local name
		for name in "${names[@]}"; do
			dx get --field "$name" "$f" "$id" >> alone
			printf '\0' >> alone
		done
		dx get --format jsonl --field "$fields" "$f" "$id" > out.jsonl
		dx get --format tsv --field "$fields" "$f" "$id" > out.tsv
		run python3 -c '
import json, sys
names = sys.argv[1].split(",")
alone = open("alone", "rb").read().split(b"\0")[:-1]
alone = [a[:-1].decode() for a in alone]  # less the newline raw adds
o = json.loads(open("out.jsonl", encoding="utf-8").read())
assert list(o) == ["doc_id"] + names, list(o)
# A string decoded, a number as its JSON text (as the record writes it).
vals = [v if isinstance(v, str) else json.dumps(v) for v in (o[n] for n in names)]
assert vals == alone, (vals, alone)
cols = open("out.tsv", encoding="utf-8").read().rstrip("\n").split("\t")
flat = lambda s: s.replace("\t", " ").replace("\r", " ").replace("\n", " ")
assert cols == [o["doc_id"]] + [flat(a) for a in alone], (cols, alone)
print(len(names))' "$fields"
		status_is 0
		equals "$output" "${#names[@]}"
	done <<-EOF2
	trec-ap-sample.trec head,text,dateline,docno DOC222
	beir-dbpedia-300.jsonl text,title,_id <dbpedia:Oceanic_Airlines>
	msmarco-v2.1-doc-segmented.json title,start_char,headings,url msmarco_v2.1_doc_00_0#0_0
	msmarco-passage-toy.tsv text,id 0
	EOF2
}

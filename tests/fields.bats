#!/usr/bin/env bats
# The text of a document when no --field is given: the same bytes as the
# explicit field that names it, in every format, for get and sample.

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

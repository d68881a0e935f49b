#!/usr/bin/env bats
# docdex sample: triples from real queries, qrels and runs (tests/data), checked
# by tests/check_triples.py; determinism, sharding, ID triples, bad input.

load helpers

check() {
	python3 "$BATS_TEST_DIRNAME/check_triples.py" "$@"
}

# A TREC corpus holding a document for every id of the given qrels and run
# files (column 3), and "qid TAB query qid" for each of their queries.
corpus_for() {
	LC_ALL=C awk '!/^#/ && NF >= 4 { print $3 }' "$@" | LC_ALL=C sort -u |
		awk '{ printf "<DOC>\n<DOCNO>%s</DOCNO>\ntext of %s\n</DOC>\n", $1, $1 }' > c.trec
	LC_ALL=C awk '!/^#/ && NF >= 4 { print $1 }' "$@" | LC_ALL=C sort -u |
		awk '{ printf "%s\tquery %s\n", $1, $1 }' > q.tsv
	dx index -q c.trec
}

# Value of a --stats line.
stat() {
	awk -F'\t' -v k="$1" '$1 == k { print $2 }' stats
}

@test "Vaswani, gzipped TREC corpus, TREC topics, a run ranked from 0: negatives from its top 100" {
	use_data vaswani-q1-q2.trec.gz
	dx index -q vaswani-q1-q2.trec.gz
	run --separate-stderr dx sample --queries "$DATA/vaswani-topics.trec" --qrels "$DATA/vaswani.qrels" \
		--run "$DATA/vaswani-run-rank0.txt" --depth 100 --format jsonl --stats vaswani-q1-q2.trec.gz
	status_is 0
	echo "$output" > t.jsonl
	grep -v '^skipped' <<< "$stderr" | grep $'\t' > stats
	equals "$(stat pairs)" 34
	equals "$(stat triples)" 34
	# The run is in rank order: each query's first 100 lines, less its positives.
	equals "$(stat run_entries)" "$(awk 'NR == FNR { if ($1 <= 2) p[$1 " " $3]; next }
		n[$1]++ < 100 && !(($1 " " $3) in p)' "$DATA/vaswani.qrels" "$DATA/vaswani-run-rank0.txt" | wc -l)"
	# The qrels name documents of the whole collection, and the run has two
	# queries: counted, in one line.
	equals "${stderr%%$'\n'*}" "docdex sample: skipped: lines naming an id not in the corpus: 1708 (first: $DATA/vaswani.qrels:35), (query, positive) pairs without a negative to draw: 341; --strict stops at the first bad line"
	check --corpus vaswani-q1-q2.trec.gz --layout trec --queries "$DATA/vaswani-topics.trec" \
		--qrels "$DATA/vaswani.qrels" --run "$DATA/vaswani-run-rank0.txt" --depth 100 --expect 34 t.jsonl
}

@test "BEIR dbpedia: queries.jsonl, qrels with a header, odd ids, random negatives, none judged" {
	use_data beir-dbpedia-300.jsonl
	dx index -q beir-dbpedia-300.jsonl
	dx sample --queries "$DATA/beir-dbpedia-queries.jsonl" --qrels "$DATA/beir-dbpedia-qrels.tsv" \
		--random --exclude-judged --negatives 3 --epochs 4 --format jsonl beir-dbpedia-300.jsonl \
		> t.jsonl 2> err
	check --corpus beir-dbpedia-300.jsonl --layout jsonl --qrels "$DATA/beir-dbpedia-qrels.tsv" \
		--exclude-judged --expect $((4 * 47)) t.jsonl
	# --negatives gives lists of 3 distinct documents.
	python3 -c '
import json, sys
for line in open("t.jsonl"):
    t = json.loads(line)
    assert len(t["neg_id"]) == 3 == len(set(t["neg_id"])) == len(t["neg"]), t["neg_id"]'
}

@test "graded judgements: --min-rel decides the positives" {
	use_data beir-msmarco-300.jsonl
	dx index -q beir-msmarco-300.jsonl
	local n1 n3
	for rel in 1 2 3; do
		dx sample --queries "$DATA/beir-msmarco-queries.jsonl" --qrels "$DATA/beir-msmarco-qrels.tsv" \
			--random --min-rel $rel --format jsonl beir-msmarco-300.jsonl > t$rel.jsonl 2> /dev/null
		check --corpus beir-msmarco-300.jsonl --layout jsonl --qrels "$DATA/beir-msmarco-qrels.tsv" \
			--min-rel $rel t$rel.jsonl
	done
	n1=$(wc -l < t1.jsonl)
	n3=$(wc -l < t3.jsonl)
	[ "$n3" -gt 0 ] && [ "$n3" -lt "$n1" ]
	run --separate-stderr dx sample --queries "$DATA/beir-msmarco-queries.jsonl" \
		--qrels "$DATA/beir-msmarco-qrels.tsv" --random --min-rel 4 beir-msmarco-300.jsonl
	status_is 1
	equals "$stderr" "docdex sample: no judgement reaches the minimum relevance 4: '$DATA/beir-msmarco-qrels.tsv'"
}

@test "negative judgements (-1) and 0 are not positives; --exclude-judged keeps them out of the negatives" {
	"$DX_SYNTH" --count 4 -o c.tsv
	dx index -q c.tsv
	printf '7\tseven\n' > q.tsv
	printf '7 0 0 2\n7 0 1 -1\n7 0 2 0\n' > qrels
	dx sample --queries q.tsv --qrels qrels --random --count 300 --format ids c.tsv > all
	equals "$(cut -f2 all | sort -u)" 0
	equals "$(cut -f3 all | sort -u | tr '\n' ' ')" "1 2 3 "
	dx sample --queries q.tsv --qrels qrels --random --count 300 --format ids --exclude-judged c.tsv > some
	equals "$(cut -f3 some | sort -u)" 3
	# Every document excluded: the pair has no negative to draw.
	printf '7 0 3 0\n' >> qrels
	run --separate-stderr dx sample --queries q.tsv --qrels qrels --random --exclude-judged c.tsv
	status_is 1
	equals "$stderr" "docdex sample: no query with a positive has a negative to draw: 'qrels'"
}

@test "trec_eval's qrels with comments and runs with tabs, padded scores and junk after the tag" {
	cp "$DATA/trec-eval-qrels-comments.txt" qrels
	corpus_for qrels "$DATA/trec-eval-results-trunc.txt" "$DATA/trec-eval-results.txt"
	local r
	for r in trec-eval-results-trunc.txt trec-eval-results.txt; do
		dx sample --queries q.tsv --qrels qrels --run "$DATA/$r" --depth 50 --epochs 2 --format jsonl c.trec > t.jsonl
		check --corpus c.trec --layout trec --queries q.tsv --qrels qrels --run "$DATA/$r" --depth 50 t.jsonl
		[ "$(wc -l < t.jsonl)" -gt 100 ]
	done
	# A '#' inside an id is part of it; only lines starting with '#' are comments.
	grep -q '^301 0 CR#93E-1860 0' qrels
	grep -q 'CR#93E-1860' c.trec
}

@test "CACM: Q0 in the qrels, a BM25 run; CRLF and gzipped inputs give the same triples" {
	cp "$DATA/cacm-qrels-q0.txt" qrels
	cp "$DATA/cacm-bm25-run.txt" run
	corpus_for qrels run
	dx sample --queries q.tsv --qrels qrels --run run --depth 20 --count 500 --format jsonl c.trec > t.jsonl
	check --corpus c.trec --layout trec --queries q.tsv --qrels qrels --run run --depth 20 --expect 500 t.jsonl
	sed 's/$/\r/' qrels > qrels.crlf
	sed 's/$/\r/' run > run.crlf
	sed 's/$/\r/' q.tsv > q.crlf
	gzip -c run > run.gz
	gzip -c q.tsv > q.tsv.gz
	dx sample --queries q.crlf --qrels qrels.crlf --run run.crlf --depth 20 --count 500 --format jsonl c.trec | cmp - t.jsonl
	dx sample --queries q.tsv.gz --qrels qrels --run run.gz --depth 20 --count 500 --format jsonl c.trec | cmp - t.jsonl
}

@test "topics: single-line, TREC SGML with labels and leading zeros, TREC XML with a number attribute" {
	"$DX_SYNTH" --count 50 -o c.tsv
	dx index -q c.tsv
	printf '%s 0 %s 1\n' TEST00 1 TEST01 2 1 3 2 4 3 5 > qrels
	for topics in "$DATA/shakespeare-merchant.topics" "$DATA/trec-xml-topics.xml" "$DATA/trec-tipster-topic.txt"; do
		dx sample --queries "$topics" --qrels qrels --random --format jsonl c.tsv 2> /dev/null
	done > t.jsonl
	python3 -c '
import json
got = sorted((t["qid"], t["query"]) for t in map(json.loads, open("t.jsonl")))
assert got == [("1", "lights"), ("1", "simple text"), ("2", "radiowaves"), ("3", "sounds"),
               ("TEST00", "dramatis personae"), ("TEST01", "portia")], got'
}

@test "the same seed gives the same triples; another seed others; --count N is a prefix" {
	"$DX_SYNTH" --count 3000 -o c.tsv --queries q.tsv --qrels qrels --run run --nqueries 200 --depth 30
	dx index -q c.tsv
	dx sample --queries q.tsv --qrels qrels --run run --random --seed 5 --count 2000 c.tsv > a
	dx sample --queries q.tsv --qrels qrels --run run --random --seed 5 --count 2000 c.tsv | cmp - a
	dx sample --queries q.tsv --qrels qrels --run run --random --seed 6 --count 2000 c.tsv > b
	! cmp -s a b
	dx sample --queries q.tsv --qrels qrels --run run --random --seed 5 --count 700 c.tsv | cmp - <(head -n 700 a)
	# A run not written a query at a time ranks each query over all its lines.
	sort -k3,3 run > run.mixed
	! cmp -s run run.mixed
	dx sample --queries q.tsv --qrels qrels --run run.mixed --random --seed 5 --count 2000 c.tsv | cmp - a
	# The tsv texts are those of jsonl, in the MS MARCO triples shape.
	dx sample --queries q.tsv --qrels qrels --run run --random --seed 5 --count 2000 --format jsonl c.tsv |
		python3 -c '
import json, sys
for t in map(json.loads, sys.stdin):
    print("\t".join(s.replace("\t", " ").replace("\n", " ").replace("\r", " ")
                    for s in (t["query"], t["pos"], t["neg"])))' | cmp - a
}

@test "shards are disjoint and together exactly the unsharded output; RANK and WORLD_SIZE set them" {
	"$DX_SYNTH" --count 2000 -o c.tsv --queries q.tsv --qrels qrels --run run --nqueries 300 --depth 20
	dx index -q c.tsv
	local opts=(--queries q.tsv --qrels qrels --run run --seed 3 --count 1001 --format ids c.tsv)
	dx sample "${opts[@]}" > all
	for r in 0 1 2; do
		dx sample "${opts[@]}" --rank $r --world-size 3 > s$r
	done
	equals "$(wc -l < s0) $(wc -l < s1) $(wc -l < s2)" "334 334 333"
	paste -d '\n' s0 s1 s2 | grep . | cmp - all
	RANK=1 WORLD_SIZE=3 dx sample "${opts[@]}" | cmp - s1
	# The options win over the environment.
	RANK=2 WORLD_SIZE=5 dx sample "${opts[@]}" --rank 1 --world-size 3 | cmp - s1
	run --separate-stderr dx sample "${opts[@]}" --rank 3 --world-size 3
	status_is 2
}

@test "--epochs visits every (query, positive) pair once an epoch" {
	"$DX_SYNTH" --count 1000 -o c.tsv --queries q.tsv --qrels qrels --run run --nqueries 100 --positives 3 --depth 20
	dx index -q c.tsv
	dx sample --queries q.tsv --qrels qrels --run run --epochs 3 --format ids --stats c.tsv > t 2> stats
	local pairs
	pairs=$(stat pairs)
	equals "$(wc -l < t)" $((3 * pairs))
	equals "$(cut -f1,2 t | sort | uniq -c | awk '{ print $1 }' | sort -u)" 3
	equals "$(head -n "$pairs" t | cut -f1,2 | sort -u | wc -l)" "$pairs"
}

@test "ID triples come back as the SPLADE toy triples, byte for byte, sharded too" {
	# Number the toy triples' queries and passages, then resolve the numbers.
	LC_ALL=C awk -F'\t' '
		!($1 in q) { q[$1] = ++nq; print "q" nq "\t" $1 > "q.tsv" }
		{ for (i = 2; i <= 3; i++) if (!($i in d)) { d[$i] = ++nd; print nd * 7 "\t" $i > "c.tsv" }
		  print "q" q[$1] "\t" d[$2] * 7 "\t" d[$3] * 7 }' "$DATA/splade-toy-triples.tsv" > ids.tsv
	dx index -q c.tsv
	dx sample --queries q.tsv --triples ids.tsv c.tsv | cmp - "$DATA/splade-toy-triples.tsv"
	dx sample --queries q.tsv --triples ids.tsv --rank 0 --world-size 2 c.tsv > s0
	dx sample --queries q.tsv --triples ids.tsv --rank 1 --world-size 2 c.tsv > s1
	paste -d '\n' s0 s1 | cmp - "$DATA/splade-toy-triples.tsv"
	# --count past the end starts the file again.
	dx sample --queries q.tsv --triples ids.tsv --count 150 c.tsv |
		cmp - <(cat "$DATA/splade-toy-triples.tsv" <(head -n 50 "$DATA/splade-toy-triples.tsv"))
	dx sample --queries q.tsv --triples ids.tsv --epochs 2 --format ids c.tsv | cmp - <(cat ids.tsv ids.tsv)
}

@test "documents: --field title,body joins MS MARCO document fields" {
	"$DX_SYNTH" --kind documents --count 300 -o d.tsv --queries q.tsv --qrels qrels --nqueries 20
	dx index -q d.tsv
	dx sample --queries q.tsv --qrels qrels --random --field title,body --format jsonl --count 50 d.tsv > t.jsonl
	python3 -c '
import json
docs = {l.split("\t")[0]: l.rstrip("\n").split("\t") for l in open("d.tsv")}
for t in map(json.loads, open("t.jsonl")):
    for i, text in ((t["pos_id"], t["pos"]), (t["neg_id"], t["neg"])):
        assert text == docs[i][2] + " " + docs[i][3], i'
}

@test "bad lines are counted in one summary line; --strict stops at the first, naming file and line" {
	"$DX_SYNTH" --count 500 -o c.tsv --queries q.tsv --qrels qrels --run run --nqueries 30 --depth 10
	dx index -q c.tsv
	{ cat qrels; echo "nosuchquery 0 1 1"; echo "$(head -n 1 q.tsv | cut -f1) 0 D-nope 1"; } > qrels.bad
	{ head -n 3 run; echo "1 Q0 2 3"; tail -n +4 run; } > run.bad
	run --separate-stderr dx sample --queries q.tsv --qrels qrels.bad --run run.bad c.tsv
	status_is 0
	equals "$stderr" "docdex sample: skipped: lines naming a query without a text: 1 (first: qrels.bad:$(($(wc -l < qrels) + 1))), lines naming an id not in the corpus: 1 (first: qrels.bad:$(($(wc -l < qrels) + 2))), malformed lines: 1 (first: run.bad:4); --strict stops at the first bad line"
	[ -n "$output" ]
	run --separate-stderr dx sample --queries q.tsv --qrels qrels --run run.bad --strict c.tsv
	status_is 1
	equals "$stderr" "docdex sample: run line with 4 columns, not 6: 'run.bad:4'"
	equals "$output" ""
	run --separate-stderr dx sample --queries q.tsv --qrels qrels.bad --run run --strict c.tsv
	status_is 1
	equals "$stderr" "docdex sample: query without a text: 'nosuchquery': 'qrels.bad:$(($(wc -l < qrels) + 1))'"
}

@test "missing, truncated and damaged inputs: one line on stderr, exit 1" {
	"$DX_SYNTH" --count 200 -o c.tsv --queries q.tsv --qrels qrels --nqueries 10
	dx index -q c.tsv
	run --separate-stderr dx sample --queries nope.tsv --qrels qrels --random c.tsv
	status_is 1
	equals "$stderr" "docdex sample: cannot open: 'nope.tsv': no such file or directory"
	seq 1 20000 | sed 's/^/1 0 /; s/$/ 1/' | gzip > big.gz
	head -c 3000 big.gz > cut.gz
	run --separate-stderr dx sample --queries q.tsv --qrels cut.gz --random c.tsv
	status_is 1
	equals "$stderr" "docdex sample: truncated gzip file: 'cut.gz'"
	: > empty
	run --separate-stderr dx sample --queries empty --qrels qrels --random c.tsv
	status_is 1
	equals "$stderr" "docdex sample: no queries in the file: 'empty'"
	mv c.tsv.ddx keep.ddx
	run --separate-stderr dx sample --queries q.tsv --qrels qrels --random c.tsv
	status_is 1
	equals "$stderr" "docdex sample: no index, build it with docdex index: 'c.tsv.ddx'"
}

@test "-o replaces the file only when the command succeeds" {
	"$DX_SYNTH" --count 200 -o c.tsv --queries q.tsv --qrels qrels --nqueries 10
	dx index -q c.tsv
	dx sample --queries q.tsv --qrels qrels --random -o out.tsv c.tsv
	dx sample --queries q.tsv --qrels qrels --random c.tsv | cmp - out.tsv
	cp out.tsv before
	echo "x 0 nope 1" >> qrels
	run --separate-stderr dx sample --queries q.tsv --qrels qrels --random --strict --format ids -o out.tsv c.tsv
	status_is 1
	cmp out.tsv before
	equals "$(ls -A | grep -c tmp)" 0
}

@test "SIGINT stops sample with status 130 and leaves no -o file" {
	"$DX_SYNTH" --count 2000 -o c.tsv --queries q.tsv --qrels qrels --nqueries 100
	dx index -q c.tsv
	# Not through dx(): $! must be docdex itself.
	"$DOCDEX" sample --queries q.tsv --qrels qrels --random --count 50000000 --format ids -o out c.tsv &
	pid=$!
	sleep 1
	kill -INT $pid
	local st=0
	wait $pid || st=$?
	equals "$st" 130
	[ ! -e out ]
	equals "$(ls -A | grep -c tmp)" 0
}

@test "usage errors exit 2" {
	"$DX_SYNTH" --count 20 -o c.tsv
	dx index -q c.tsv
	local cases=(
		"--qrels x --random c.tsv"
		"--queries x --random c.tsv"
		"--queries x --qrels x c.tsv"
		"--queries x --triples x --random c.tsv"
		"--queries x --triples x --depth 5 c.tsv"
		"--queries x --qrels x --random --count 5 --epochs 2 c.tsv"
		"--queries x --qrels x --random --format csv c.tsv"
		"--queries x --qrels x --random --run-ratio 2 c.tsv"
		"--queries x --qrels x --random --negatives 0 c.tsv"
		"--queries x --qrels x --random"
	)
	for c in "${cases[@]}"; do
		run --separate-stderr dx sample $c
		status_is 2
		[ "$(echo "$stderr" | wc -l)" -le 2 ]
	done
	RANK=x run --separate-stderr dx sample --queries x --qrels x --random c.tsv
	status_is 2
	equals "$stderr" "docdex sample: bad number in the environment: 'RANK' (see docdex sample --help)"
}

@test "qrels whose every document is unknown: one clear error" {
	"$DX_SYNTH" --count 100 -o c.tsv
	dx index -q c.tsv
	printf 'q1\tx\n' > q.tsv
	printf 'q1 0 not-in-the-corpus 1\n' > q.qrels
	run --separate-stderr dx sample --queries q.tsv --qrels q.qrels --random c.tsv
	status_is 1
	equals "$stderr" "docdex sample: no positive judgement names both a query with a text and a document of the corpus: 'q.qrels'"
}

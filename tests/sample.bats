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
	# The run has two of the queries: the pairs of the others are left out,
	# a warning that says so, not bad lines.  The qrels name documents of
	# the whole collection: those lines are counted, in one line.
	equals "${stderr%%$'\n'*}" "docdex sample: 341 of 375 (query, positive) pairs have no negative to draw, left out: the run has no candidate for 68 of the 70 queries with a positive: '$DATA/vaswani-run-rank0.txt'"
	equals "$(sed -n 2p <<< "$stderr")" "docdex sample: skipped: lines naming an id not in the corpus: 1708 (first: $DATA/vaswani.qrels:35); --strict stops at the first bad line"
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
	# The error, then the summary of what was skipped, which says why.
	equals "$stderr" "docdex sample: no judgement reaches the minimum relevance 4: '$DATA/beir-msmarco-qrels.tsv'
docdex sample: skipped: lines naming an id not in the corpus: 3861 (first: $DATA/beir-msmarco-qrels.tsv:1); --strict stops at the first bad line"
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
	equals "$stderr" "docdex sample: no (query, positive) pair has a negative to draw: every document of the corpus is judged for their query: 'qrels'"
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

@test "shards are equal, disjoint and together the unsharded output, padded or cut; RANK and WORLD_SIZE set them" {
	"$DX_SYNTH" --count 2000 -o c.tsv --queries q.tsv --qrels qrels --run run --nqueries 300 --depth 20
	dx index -q c.tsv
	local opts=(--queries q.tsv --qrels qrels --run run --seed 3 --count 1001 --format ids c.tsv)
	dx sample "${opts[@]}" > all
	for r in 0 1 2; do
		dx sample "${opts[@]}" --rank $r --world-size 3 > s$r
		dx sample "${opts[@]}" --rank $r --world-size 3 --drop-last > d$r
	done
	# 1001 over 3: each 334, the last shard padded with the first triple,
	# as torch's DistributedSampler pads; or each 333, the rest left out.
	equals "$(wc -l < s0) $(wc -l < s1) $(wc -l < s2)" "334 334 334"
	paste -d '\n' s0 s1 s2 | cmp - <(cat all; head -n 1 all)
	equals "$(wc -l < d0) $(wc -l < d1) $(wc -l < d2)" "333 333 333"
	paste -d '\n' d0 d1 d2 | cmp - <(head -n 999 all)
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

@test "missing, truncated and damaged inputs: one error line on stderr, exit 1" {
	"$DX_SYNTH" --count 200 -o c.tsv --queries q.tsv --qrels qrels --nqueries 10
	dx index -q c.tsv
	run --separate-stderr dx sample --queries nope.tsv --qrels qrels --random c.tsv
	status_is 1
	equals "$stderr" "docdex sample: cannot open: 'nope.tsv': no such file or directory"
	seq 1 20000 | sed 's/^/1 0 /; s/$/ 1/' | gzip > big.gz
	head -c 3000 big.gz > cut.gz
	run --separate-stderr dx sample --queries q.tsv --qrels cut.gz --random c.tsv
	status_is 1
	equals "${stderr%%$'\n'*}" "docdex sample: truncated gzip file: 'cut.gz'"
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
	equals "$stderr" "docdex sample: bad number in the environment: 'RANK=x' (see docdex sample --help)"
}

@test "qrels whose every document is unknown: one clear error" {
	"$DX_SYNTH" --count 100 -o c.tsv
	dx index -q c.tsv
	printf 'q1\tx\n' > q.tsv
	printf 'q1 0 not-in-the-corpus 1\n' > q.qrels
	run --separate-stderr dx sample --queries q.tsv --qrels q.qrels --random c.tsv
	status_is 1
	equals "$stderr" "docdex sample: no positive judgement names both a query with a text and a document of the corpus: 'q.qrels'
docdex sample: skipped: lines naming an id not in the corpus: 1 (first: q.qrels:1); --strict stops at the first bad line"
}

# Issue 14, item 1.  Fails before the fix: negatives came from below the top K.
@test "--depth K is the run's top K: documents missing from a judged subset keep their place, counted" {
	# A judged subset of the Vaswani documents of queries 1 and 2: those
	# judged for them, and of the run's only those at odd ranks.
	awk '$1 <= 2' "$DATA/vaswani.qrels" > qrels
	cp "$DATA/vaswani-run-rank0.txt" run
	{ awk '{ print $3 }' qrels; awk '$4 % 2 == 1 { print $3 }' run; } | sort -u > keep
	python3 - "$DATA/vaswani-q1-q2.trec.gz" keep > sub.trec <<'PY'
import gzip, re, sys
keep = set(open(sys.argv[2]).read().split())
for doc in re.findall(r"<DOC>.*?</DOC>\n", gzip.open(sys.argv[1]).read().decode(), re.S):
    if re.search(r"<DOCNO>(.*?)</DOCNO>", doc).group(1) in keep:
        sys.stdout.write(doc)
PY
	dx index -q sub.trec
	local opts=(--queries "$DATA/vaswani-topics.trec" --qrels qrels --depth 30 --count 2000 --format jsonl sub.trec)
	run --separate-stderr dx sample --run run "${opts[@]}"
	status_is 0
	echo "$output" > t.jsonl
	check --corpus sub.trec --layout trec --qrels qrels --run run --depth 30 --expect 2000 t.jsonl
	# The run is ranked: a query's top 30 are its first 30 lines.  Those not
	# in the subset are counted, the first named; none deeper is.
	local c f id
	read -r c f id < <(awk 'NR == FNR { k[$1]; next } n[$1]++ < 30 && !($3 in k) { c++; if (!f) { f = FNR; id = $3 } }
		END { print c, f, id }' keep run)
	[ "$c" -gt 20 ]
	equals "$stderr" "docdex sample: skipped: run lines in a query's top 30 naming an id not in the corpus: $c (first: run:$f); --strict stops at the first bad line"
	# A run whose queries are not in blocks is read twice and ranked over all
	# its lines: the same triples, the same count.  (Each query's lines keep
	# their order: the run has equal scores, ranked in file order.)
	awk '{ k = n[$1]++; print int(k / 50) "\t" NR "\t" $0 }' run | sort -k1,1n -k2,2n | cut -f3- > run.mixed
	[ "$(awk '$1 != p { n++; p = $1 } END { print n }' run.mixed)" -gt 2 ]
	run --separate-stderr dx sample --run run.mixed "${opts[@]}"
	status_is 0
	equals "$output" "$(cat t.jsonl)"
	[[ "$stderr" == "docdex sample: skipped: run lines in a query's top 30 naming an id not in the corpus: $c (first: run.mixed:"* ]]
	# --strict: the first of them is the error, in either reading.
	run --separate-stderr dx sample --run run "${opts[@]}" --strict
	status_is 1
	equals "$stderr" "docdex sample: run id not in the corpus: '$id': 'run:$f'"
	run --separate-stderr dx sample --run run.mixed "${opts[@]}" --strict
	status_is 1
	[[ "$stderr" =~ ^"docdex sample: run id not in the corpus: '"([0-9]+)"': 'run.mixed:"([0-9]+)"'"$ ]]
	equals "$(sed -n "${BASH_REMATCH[2]}p" run.mixed | awk '{ print $3 }')" "${BASH_REMATCH[1]}"
	# Without --depth every missing line of the queries with a positive counts.
	run --separate-stderr dx sample --run run --queries "$DATA/vaswani-topics.trec" --qrels qrels --count 10 sub.trec
	status_is 0
	equals "$stderr" "docdex sample: skipped: run lines naming an id not in the corpus: $(awk 'NR == FNR { k[$1]; next } !($3 in k)' keep run | wc -l) (first: run:$f); --strict stops at the first bad line"
}

# Issue 14, item 1, its example, on MS MARCO passage ids (41 is not in the
# toy collection).  Fails before the fix: 45 was drawn.
@test "a run 40 41 45 with 41 missing and --depth 2 draws only 40" {
	use_data msmarco-passage-toy.tsv
	dx index -q msmarco-passage-toy.tsv
	printf '1048642\tquery\n' > q.tsv
	printf '1048642 0 1 1\n' > qrels
	printf '1048642 Q0 %s %s %s toy\n' 40 1 3 41 2 2 45 3 1 > run
	run --separate-stderr dx sample --queries q.tsv --qrels qrels --run run --depth 2 --count 50 --format ids msmarco-passage-toy.tsv
	status_is 0
	equals "$(cut -f3 <<< "$output" | sort -u)" 40
	equals "$stderr" "docdex sample: skipped: run lines in a query's top 2 naming an id not in the corpus: 1 (first: run:2); --strict stops at the first bad line"
}

# Issue 14, item 2.  Fails before the fix: no warning, no error.
@test "an input shaped like another kind of file: a warning, with --strict the error" {
	cp "$DATA/cacm-qrels-q0.txt" qrels
	cp "$DATA/cacm-bm25-run.txt" run
	corpus_for qrels run
	awk '{ print $1 "\t" $3 "\t" $4 }' run > msrun
	local c
	local cases=(
		"--qrels run --run run|read as qrels, but shaped like a TREC run (qid Q0 docid rank score tag): 'run:1'"
		"--qrels msrun --run run|read as qrels, but shaped like an MS MARCO run (qid TAB pid TAB rank, ranks counting up): 'msrun:1'"
		"--qrels q.tsv --run run|read as qrels, but shaped like queries (qid TAB text): 'q.tsv:1'"
		"--qrels qrels --run qrels|read as a run, but shaped like TREC qrels (qid iter docid rel): 'qrels:1'"
		"--qrels qrels --run $DATA/beir-dbpedia-qrels.tsv|read as a run, but shaped like BEIR qrels (query-id corpus-id score): '$DATA/beir-dbpedia-qrels.tsv:1'"
		"--triples run|read as ID triples, but shaped like a TREC run (qid Q0 docid rank score tag): 'run:1'"
		"--triples $DATA/splade-toy-triples.tsv|read as ID triples, but shaped like text triples (query TAB passage TAB passage): '$DATA/splade-toy-triples.tsv:1'"
	)
	for c in "${cases[@]}"; do
		run --separate-stderr dx sample --queries q.tsv ${c%%|*} --strict c.trec
		status_is 1
		equals "$stderr" "docdex sample: ${c#*|}"
		equals "$output" ""
	done
	# A run or qrels file given as queries would give texts such as
	# "Q0 CACM-1938 1 12.033000 Anserini".
	for c in "run|a TREC run (qid Q0 docid rank score tag)" "qrels|TREC qrels (qid iter docid rel)"; do
		run --separate-stderr dx sample --queries "${c%%|*}" --qrels qrels --run run --strict c.trec
		status_is 1
		equals "$stderr" "docdex sample: read as queries, but shaped like ${c#*|}: '${c%%|*}:1'"
	done
	# Without --strict, a warning and the file read as told.
	run --separate-stderr dx sample --queries run --qrels qrels --run run --format jsonl --count 3 c.trec
	status_is 0
	equals "${stderr%%$'\n'*}" "docdex sample: read as queries, but shaped like a TREC run (qid Q0 docid rank score tag): 'run:1'"
	[[ "$output" == *'"query":"Q0 CACM-'* ]]
	# The real inputs of tests/data, each given as its own kind: no warning.
	for c in vaswani-topics.trec beir-msmarco-queries.jsonl beir-dbpedia-queries.jsonl shakespeare-merchant.topics \
		trec-xml-topics.xml trec-tipster-topic.txt; do
		run --separate-stderr dx sample --queries "$DATA/$c" --qrels qrels --run run --format ids
		[[ "$stderr" != *shaped* ]]
	done
	for c in vaswani.qrels beir-msmarco-qrels.tsv beir-dbpedia-qrels.tsv cacm-qrels-q0.txt trec-eval-qrels-comments.txt \
		shakespeare-merchant.qrels; do
		run --separate-stderr dx sample --qrels "$DATA/$c" --run run --format ids
		[[ "$stderr" != *shaped* ]]
	done
	for c in "$DATA/vaswani-run-rank0.txt" "$DATA/cacm-bm25-run.txt" "$DATA/trec-eval-results.txt" \
		"$DATA/trec-eval-results-trunc.txt" msrun; do
		run --separate-stderr dx sample --qrels qrels --run "$c" --format ids
		[[ "$stderr" != *shaped* ]]
	done
}

# Issue 14, item 3.  Fails before the fix: "no query with a positive has a
# negative to draw", exit 1.
@test "an MS MARCO run (qid TAB pid TAB rank) is read by rank: the triples of the TREC run it was made from" {
	use_data msmarco-passage-toy.tsv
	dx index -q msmarco-passage-toy.tsv
	# MS MARCO dev qids and their judged pids (SPLADE's toy qrels); a run of
	# 20 pids a query, ranked 1 to 20 in a shuffled order, some of them not
	# in the toy collection (41-44, 60-63, 79-81 are not).
	printf '%s\n' "2 0 69 1" "1048642 0 45 1" "524447 0 12 1" "524332 0 34 1" "786674 0 38 1" "786674 0 99 1" \
		"1048876 0 1 1" > qrels
	awk '!s[$1]++ { printf "%s\tquery %s\n", $1, $1 }' qrels > q.tsv
	awk '!s[$1]++ { for (r = 1; r <= 20; r++) printf "%s\t%d\t%d\n", $1, ($1 * 7 + r * 37) % 100, r }' qrels > msrun.tsv
	local opts=(--queries q.tsv --qrels qrels --depth 8 --count 300 --seed 2 --format jsonl msmarco-passage-toy.tsv)
	run --separate-stderr dx sample --run msrun.tsv "${opts[@]}"
	status_is 0
	echo "$output" > t.jsonl
	check --corpus msmarco-passage-toy.tsv --layout tsv --queries q.tsv --qrels qrels --run msrun.tsv --depth 8 \
		--expect 300 t.jsonl
	local missing
	missing=$(awk -F'\t' 'NR == FNR { k[$1]; next } $3 <= 8 && !($2 in k)' msmarco-passage-toy.tsv msrun.tsv | wc -l)
	[ "$missing" -gt 0 ]
	[[ "$stderr" == "docdex sample: skipped: run lines in a query's top 8 naming an id not in the corpus: $missing (first: msrun.tsv:"* ]]
	# The same run as TREC lines, the score falling with the rank.
	awk '{ print $1, "Q0", $2, $3, 100 - $3, "toy" }' msrun.tsv > run.trec
	dx sample --run run.trec "${opts[@]}" 2> /dev/null | cmp - t.jsonl
	# Lines of another shape in an MS MARCO run are malformed.
	{ head -n 3 msrun.tsv; echo "2 Q0 69 1 3.5 x"; tail -n +4 msrun.tsv; } > bad.tsv
	run --separate-stderr dx sample --run bad.tsv "${opts[@]}" --strict
	status_is 1
	equals "$stderr" "docdex sample: run line with 6 columns, not 3 (qid TAB pid TAB rank): 'bad.tsv:4'"
}

# Issue 14, item 4.  New: before it, "no corpus or index given", exit 2.
@test "--format ids needs no corpus: the same id triples as with a corpus that holds every id" {
	cp "$DATA/cacm-qrels-q0.txt" qrels
	cp "$DATA/cacm-bm25-run.txt" run
	corpus_for qrels run
	local opts=(--qrels qrels --run run --depth 20 --count 500 --seed 9 --format ids)
	dx sample --queries q.tsv "${opts[@]}" c.trec > with
	[ "$(wc -l < with)" -eq 500 ]
	run --separate-stderr dx sample "${opts[@]}"
	status_is 0
	equals "$stderr" ""
	equals "$output" "$(cat with)"
	dx sample --queries q.tsv "${opts[@]}" | cmp - with
	dx sample "${opts[@]}" c.trec | cmp - with
	dx sample "${opts[@]}" --rank 1 --world-size 2 | cmp - <(sed -n '2~2p' with)
	# Without a corpus nothing is checked against one: ids unknown to it pass.
	{ cat qrels; echo "1 Q0 NOT-IN-CORPUS 1"; } > qrels.more
	dx sample --qrels qrels.more --run run --count 2000 --format ids | grep -q $'\tNOT-IN-CORPUS\t'
	# ID triples without a corpus come back as they are.
	head -n 50 with > ids.tsv
	dx sample --triples ids.tsv --format ids | cmp - ids.tsv
	# Their query ids are added as they are read: those of a batch written
	# later must stay where they are (under ASan, a use after free before).
	awk 'BEGIN { for (i = 0; i < 5000; i++) printf "a-rather-long-query-identifier-%06d\t%d\t%d\n", i, i, i + 1 }' > many.tsv
	dx sample --triples many.tsv --format ids | cmp - many.tsv
	# Random negatives and texts need a corpus: one line each.
	run --separate-stderr dx sample --qrels qrels --random --format ids
	status_is 2
	equals "$stderr" "docdex sample: --random draws from a corpus: give one (see docdex sample --help)"
	run --separate-stderr dx sample --queries q.tsv --qrels qrels --run run
	status_is 2
	equals "$stderr" "docdex sample: no corpus or index given (only --format ids needs none) (see docdex sample --help)"
	run --separate-stderr dx sample --qrels qrels --run run c.trec
	status_is 2
	equals "$stderr" "docdex sample: no --queries given (only --format ids needs none) (see docdex sample --help)"
}

# The SPLADE toy triples as ID triples over a corpus of their passages.
toy_id_triples() {
	LC_ALL=C awk -F'\t' '
		!($1 in q) { q[$1] = ++nq; print "q" nq "\t" $1 > "q.tsv" }
		{ for (i = 2; i <= 3; i++) if (!($i in d)) { d[$i] = ++nd; print nd * 7 "\t" $i > "c.tsv" }
		  print "q" q[$1] "\t" d[$2] * 7 "\t" d[$3] * 7 }' "$DATA/splade-toy-triples.tsv" > ids.tsv
	dx index -q c.tsv
}

# A triples file's shards were as the lines fell: with 100 lines and 3
# ranks, 34, 33 and 33 triples, where DDP needs as many steps on each rank.
@test "ID triples sharded: every shard as many, the short ones padded with the lines from --start on" {
	toy_id_triples
	local w r opts all n m
	for w in 3 7; do
		for opts in "" "--count 130" "--start 4" "--start 4 --count 50" "--epochs 2" "--drop-last" "--epochs 2 --drop-last" \
			"--start 4 --count 50 --drop-last"; do
			# shellcheck disable=SC2086
			dx sample --queries q.tsv --triples ids.tsv $opts --format ids c.tsv > all
			n=$(wc -l < all)
			m=$((n % w))
			for r in $(seq 0 $((w - 1))); do
				# The shard's own lines of all, then the padding: line
				# r - m of all, for the shards the last round missed.
				awk -v r="$r" -v w="$w" -v n="$n" -v m="$m" -v drop="${opts//[^d]/}" '
					{ line[NR - 1] = $0 }
					END {
						last = drop != "" ? n - m : n
						for (i = r; i < last; i += w) print line[i]
						if (drop == "" && m && r >= m) print line[r - m]
					}' all > want
				# shellcheck disable=SC2086
				dx sample --queries q.tsv --triples ids.tsv $opts --rank "$r" --world-size "$w" \
					--format ids c.tsv > got
				cmp got want || { echo "--world-size $w --rank $r $opts"; return 1; }
			done
		done
	done
	# From a pipe, which is read once: padded the same.
	dx sample --queries q.tsv --triples ids.tsv --rank 2 --world-size 3 --format ids c.tsv > want
	dx sample --queries q.tsv --triples <(cat ids.tsv) --rank 2 --world-size 3 --format ids c.tsv | cmp - want
	equals "$(wc -l < want)" 34
	equals "$(tail -n 1 want)" "$(sed -n 2p ids.tsv)"
}

# Issue 14, item 5.  Fails before the fix: exit 0 and nothing written (the
# first case after reading the file 300000 times).
@test "a triples file that holds no triple to write is an error with its summary, not a loop or silence" {
	toy_id_triples
	awk -F'\t' '{ print $1 "\tx" $2 "\tx" $3 }' ids.tsv > bad.tsv
	run --separate-stderr dx sample --queries q.tsv --triples bad.tsv --count 300000 c.tsv
	status_is 1
	equals "$output" ""
	equals "$stderr" "docdex sample: no line of the file holds a triple that can be written: 'bad.tsv'
docdex sample: skipped: lines naming an id not in the corpus: 100 (first: bad.tsv:1); --strict stops at the first bad line"
	# Every shard says the same, counting every shard's lines.
	local r
	for r in 0 1 2; do
		run --separate-stderr dx sample --queries q.tsv --triples bad.tsv --rank $r --world-size 3 c.tsv
		status_is 1
		equals "${stderr#*$'\n'}" "docdex sample: skipped: lines naming an id not in the corpus: 100 (first: bad.tsv:1); --strict stops at the first bad line"
	done
	# Two negatives asked of lines that hold one.
	run --separate-stderr dx sample --queries q.tsv --triples ids.tsv --negatives 2 c.tsv
	status_is 1
	equals "$stderr" "docdex sample: no line of the file holds a triple that can be written: 'ids.tsv'
docdex sample: skipped: malformed lines: 100 (first: ids.tsv:1); --strict stops at the first bad line"
	# An empty file, or one of comments.
	: > empty
	printf '# nothing\n\n' > comments
	for f in empty comments; do
		run --separate-stderr dx sample --queries q.tsv --triples $f --count 10 c.tsv
		status_is 1
		equals "$stderr" "docdex sample: no triples in the file: '$f'"
	done
	# One good line, shard 0's: shard 1 writes nothing and that is no error
	# (its request is empty); --count reads the file again for shard 0.
	{ head -n 1 ids.tsv; head -n 9 bad.tsv; } > one.tsv
	run --separate-stderr dx sample --queries q.tsv --triples one.tsv --rank 1 --world-size 2 --format ids c.tsv
	status_is 0
	equals "$output" ""
	equals "$stderr" "docdex sample: skipped: lines naming an id not in the corpus: 5 (first: one.tsv:2); --strict stops at the first bad line"
	run --separate-stderr dx sample --queries q.tsv --triples one.tsv --rank 0 --world-size 2 --count 25 --format ids c.tsv
	status_is 0
	equals "$output" "$(head -n 1 ids.tsv; head -n 1 ids.tsv; head -n 1 ids.tsv)"
}

# Issue 14, item 6.  Fails before the fix: the values were not shown.
@test "a rank not below the world size: the message shows both values and where they came from" {
	"$DX_SYNTH" --count 20 -o c.tsv
	dx index -q c.tsv
	RANK=3 WORLD_SIZE=3 run --separate-stderr dx sample --queries x --qrels x --random c.tsv
	status_is 2
	equals "$stderr" "docdex sample: the rank must be below the world size: 'RANK=3, WORLD_SIZE=3' (see docdex sample --help)"
	run --separate-stderr dx sample --queries x --qrels x --random --rank 4 --world-size 2 c.tsv
	status_is 2
	equals "$stderr" "docdex sample: the rank must be below the world size: '--rank 4, --world-size 2' (see docdex sample --help)"
	RANK=1 run --separate-stderr dx sample --queries x --qrels x --random --world-size 1 c.tsv
	status_is 2
	equals "$stderr" "docdex sample: the rank must be below the world size: 'RANK=1, --world-size 1' (see docdex sample --help)"
	WORLD_SIZE=abc run --separate-stderr dx sample --queries x --qrels x --random c.tsv
	status_is 2
	equals "$stderr" "docdex sample: bad number in the environment: 'WORLD_SIZE=abc' (see docdex sample --help)"
}

# Issue 14, item 7.  Fails before the fix: the input was replaced.
@test "-o never replaces a file that sample reads: queries, qrels, run, triples, corpus or index" {
	cp "$DATA/cacm-qrels-q0.txt" qrels
	cp "$DATA/cacm-bm25-run.txt" run
	corpus_for qrels run
	head -n 20 qrels | awk '{ print $1 "\t" $3 "\t" $3 }' > triples
	ln -s q.tsv q.link
	local f
	for f in q.tsv qrels run c.trec c.trec.ddx q.link; do
		cp -L "$f" before
		run --separate-stderr dx sample --queries q.tsv --qrels qrels --run run -o "$f" c.trec
		status_is 1
		equals "$stderr" "docdex sample: the output would replace a file this command reads: '$f'"
		cmp "$f" before
	done
	cp triples before
	run --separate-stderr dx sample --queries q.tsv --triples triples -o triples c.trec
	status_is 1
	equals "$stderr" "docdex sample: the output would replace a file this command reads: 'triples'"
	cmp triples before
	run --separate-stderr dx sample --triples triples --format ids -o triples
	status_is 1
	cmp triples before
}

# Issue 14, item 8.  The FIFO inputs worked before; the second reading
# failed with "cannot read: ...: illegal seek", which this test refuses.
@test "inputs from a FIFO (process substitution) work where one pass is enough; a second one is a clear error" {
	toy_id_triples
	dx sample --queries q.tsv --triples ids.tsv c.tsv > files
	dx sample --queries <(cat q.tsv) --triples <(cat ids.tsv) c.tsv | cmp - files
	gzip -c ids.tsv > ids.tsv.gz
	dx sample --queries <(cat q.tsv) --triples <(cat ids.tsv.gz) c.tsv | cmp - files
	run --separate-stderr dx sample --queries q.tsv --triples <(cat ids.tsv) --epochs 2 c.tsv
	status_is 1
	[[ "$stderr" == "docdex sample: needs a second reading, which a pipe or FIFO cannot give: save it to a file: '/dev/fd/"*"'" ]]
	# Queries, qrels and a run, each read once.
	cp "$DATA/cacm-qrels-q0.txt" qrels
	cp "$DATA/cacm-bm25-run.txt" run
	corpus_for qrels run
	dx sample --queries q.tsv --qrels qrels --run run --count 300 c.trec > files
	dx sample --queries <(cat q.tsv) --qrels <(cat qrels) --run <(cat run) --count 300 c.trec | cmp - files
	# A run not written a query at a time needs a second reading.
	run --separate-stderr dx sample --queries q.tsv --qrels qrels --run <(sort -k3,3 run) c.trec
	status_is 1
	[[ "$stderr" == "docdex sample: needs a second reading, which a pipe or FIFO cannot give: save it to a file: '/dev/fd/"*"'" ]]
}

# Issue 14, item 8.  Fails before the fix: the read that SIGTERM interrupted
# was an error ("cannot read: ...: interrupted system call"), exit 1.
@test "SIGTERM while a triples FIFO waits for its writer: 'interrupted', status 130, no -o file" {
	toy_id_triples
	mkfifo t.fifo
	# The writer gives the lines, then holds the FIFO open without writing.
	{ cat ids.tsv; exec sleep 100; } > t.fifo 3>&- &
	local writer=$! st=0 i
	"$DOCDEX" sample --queries q.tsv --triples t.fifo -o out c.tsv 2> err 3>&- &
	local pid=$!
	# Wait until it blocks reading the FIFO: its lines read, a batch not full.
	for i in $(seq 200); do
		grep -q pipe "/proc/$pid/wchan" 2> /dev/null && break
		sleep 0.05
	done
	kill -TERM "$pid"
	wait "$pid" || st=$?
	# The writer may be gone already (a reader that went away ends its cat).
	kill "$writer" 2> /dev/null || true
	equals "$st" 130
	equals "$(cat err)" "docdex sample: interrupted: 'out'"
	[ ! -e out ]
	equals "$(ls -A | grep -c tmp)" 0
}

# Issue 14, item 9.  Fails before the fix: the bytes were read as text.
@test "xz, bzip2 and zstd inputs are refused by their magic, not read as text" {
	cp "$DATA/cacm-qrels-q0.txt" qrels
	cp "$DATA/cacm-bm25-run.txt" run
	corpus_for qrels run
	local z name undo opt
	for z in "xz|xz|xz -d" "bz2|bzip2|bzip2 -d" "zst|zstd|zstd -d"; do
		IFS='|' read -r z name undo <<< "$z"
		for opt in --queries --qrels --run; do
			local args=(--queries q.tsv --qrels qrels --run run)
			case $opt in
			--queries) args[1]=$DATA/tiny.tsv.$z ;;
			--qrels) args[3]=$DATA/tiny.tsv.$z ;;
			--run) args[5]=$DATA/tiny.tsv.$z ;;
			esac
			run --separate-stderr dx sample "${args[@]}" c.trec
			status_is 1
			equals "$stderr" "docdex sample: compressed with $name, which docdex does not read: decompress it ($undo) or recompress it with gzip or bgzip: '$DATA/tiny.tsv.$z'"
		done
		run --separate-stderr dx sample --queries q.tsv --triples "$DATA/tiny.tsv.$z" c.trec
		status_is 1
		equals "$stderr" "docdex sample: compressed with $name, which docdex does not read: decompress it ($undo) or recompress it with gzip or bgzip: '$DATA/tiny.tsv.$z'"
	done
}

# Issue 20.  A file of another kind that gives nothing of its kind: its
# shape is what is wrong, said in one line, not "no judgement reaches the
# minimum relevance 1".
@test "a file of another kind that gives nothing: its shape is the error, in one line" {
	use_data msmarco-passage-toy.tsv
	dx index -q msmarco-passage-toy.tsv
	local json="$DATA/splade-toy-qrel.json" queries="$DATA/splade-toy-dev-queries.tsv"
	# SPLADE's qrels are a JSON object, {qid: {pid: rel}}, over many lines.
	run --separate-stderr dx sample --queries "$queries" --qrels "$json" --random msmarco-passage-toy.tsv
	status_is 1
	equals "$stderr" "docdex sample: the qrels file is shaped like JSON or JSONL, not like qrels (TREC: qid iter docid rel, or BEIR: query-id corpus-id score): '$json:1'"
	equals "$output" ""
	# The other way round, the JSON is read first, as queries: no line of
	# it is a query object; the summary says where the first bad one is.
	run --separate-stderr dx sample --queries "$json" --qrels "$queries" --random msmarco-passage-toy.tsv
	status_is 1
	equals "$stderr" "docdex sample: no queries in the file: no line is a JSON object with a query id and a text: '$json'
docdex sample: skipped: malformed lines: 31 (first: $json:1); --strict stops at the first bad line"
	# TREC qrels given as queries, and topics or qid TAB text queries as
	# qrels: both named.
	use_data vaswani-q1-q2.trec.gz
	dx index -q vaswani-q1-q2.trec.gz
	run --separate-stderr dx sample --queries "$DATA/vaswani.qrels" --qrels "$DATA/vaswani-topics.trec" \
		--run "$DATA/vaswani-run-rank0.txt" vaswani-q1-q2.trec.gz
	status_is 1
	equals "$stderr" "docdex sample: the queries and qrels files are the other way round: the qrels file is shaped like TREC topics or documents, the queries file like TREC qrels (qid iter docid rel): '$DATA/vaswani-topics.trec:1'"
	printf '1\tmeasurement of dielectric constant\n2\tmathematical analysis\n' > q.tsv
	run --separate-stderr dx sample --queries "$DATA/vaswani.qrels" --qrels q.tsv \
		--run "$DATA/vaswani-run-rank0.txt" vaswani-q1-q2.trec.gz
	status_is 1
	equals "$stderr" "docdex sample: the queries and qrels files are the other way round: the qrels file is shaped like queries (qid TAB text), the queries file like TREC qrels (qid iter docid rel): 'q.tsv:1'"
	# The run as qrels too, its ranks from 1: each candidate a positive,
	# none left to be a negative.
	awk '{ $4 = NR; print }' "$DATA/vaswani-run-rank0.txt" > run.txt
	run --separate-stderr dx sample --queries "$DATA/vaswani-topics.trec" --qrels run.txt --run run.txt \
		vaswani-q1-q2.trec.gz
	status_is 1
	equals "$stderr" "docdex sample: the qrels file is shaped like a TREC run (qid Q0 docid rank score tag), not like qrels (TREC: qid iter docid rel, or BEIR: query-id corpus-id score): 'run.txt:1'"
	# Text triples as ID triples: the warning as the file is opened, the
	# error once no line of it held a triple, and no summary.
	local triples="$DATA/splade-toy-triples.tsv"
	run --separate-stderr dx sample --queries "$DATA/splade-toy-dev-queries.tsv" --triples "$triples" \
		msmarco-passage-toy.tsv
	status_is 1
	equals "$stderr" "docdex sample: read as ID triples, but shaped like text triples (query TAB passage TAB passage): '$triples:1'
docdex sample: the triples file is shaped like text triples (query TAB passage TAB passage), not like ID triples (qid TAB pos TAB neg): '$triples:1'"
}

# Issue 20.  A run of 2 of the 93 queries was "(query, positive) pairs
# without a negative to draw: 2049; --strict stops at the first bad line":
# no line is bad, and --strict does not stop.
@test "pairs without a negative to draw: a warning that says why, not bad lines; none left, the error" {
	corpus_for "$DATA/vaswani.qrels" "$DATA/vaswani-run-rank0.txt"
	local opts=(--queries "$DATA/vaswani-topics.trec" --qrels "$DATA/vaswani.qrels" --format ids c.trec)
	local strict
	for strict in "" --strict; do
		run --separate-stderr dx sample --run "$DATA/vaswani-run-rank0.txt" $strict "${opts[@]}"
		status_is 0
		equals "$stderr" "docdex sample: 2049 of 2083 (query, positive) pairs have no negative to draw, left out: the run has no candidate for 91 of the 93 queries with a positive: '$DATA/vaswani-run-rank0.txt'"
		equals "$(wc -l <<< "$output")" 34
	done
	# The queries of the run, a margin that leaves one pair nothing.
	awk '$1 <= 2' "$DATA/vaswani.qrels" > qrels.12
	run --separate-stderr dx sample --queries "$DATA/vaswani-topics.trec" --qrels qrels.12 \
		--run "$DATA/vaswani-run-rank0.txt" --margin 1000 --format ids c.trec
	status_is 0
	equals "$stderr" "docdex sample: 1 of 34 (query, positive) pairs has no negative to draw, left out: no run candidate of their query scores below the margin: '$DATA/vaswani-run-rank0.txt'"
	equals "$(wc -l <<< "$output")" 33
	# A run of other queries: nothing to draw.
	awk '{ $1 = "x" $1; print }' "$DATA/vaswani-run-rank0.txt" > run.other
	run --separate-stderr dx sample --run run.other "${opts[@]}"
	status_is 1
	equals "$stderr" "docdex sample: no (query, positive) pair has a negative to draw: the run has no candidate for 93 of the 93 queries with a positive: 'run.other'"
}

# Issue 20.  The bar needs a terminal (script(1) gives one) and shows after
# a second: an input FIFO that stalls makes that second pass while the
# inputs are read, an output FIFO whose reader stalls while the triples are
# written.  Nothing is timed: a slower machine only shows more of the bar.
@test "progress: a bar on a terminal while reading and sampling, cleared; none off a terminal or with --quiet" {
	command -v script > /dev/null || skip "no script(1) to run docdex on a terminal"
	"$DX_SYNTH" --count 3000 -o c.tsv --queries q.tsv --qrels qrels --run run --nqueries 100
	dx index -q c.tsv
	mkfifo rf of
	# Run lines of a query without a text, passed over, the stall between them.
	stalled_run() {
		( cat run; yes 'nosuch Q0 d 1 1.0 t' | head -n 100000; sleep 1.5
		  yes 'nosuch Q0 d 1 1.0 t' | head -n 300000 ) > rf &
	}
	stalled_run
	script -qc "'$DOCDEX' sample --queries q.tsv --qrels qrels --run rf --count 10 --format ids -o out c.tsv" \
		/dev/null < /dev/null > tty
	equals "$(wc -l < out)" 10
	# The lines read, the rate, each line erased to its end; then cleared.
	[[ $(< tty) =~ ^$'\r'"reading the inputs  "[0-9,]+" lines, "[0-9,]+"/s"$'\033[K' ]]
	[[ $(< tty) == *$'\r\033[K' ]]
	( head -c 1 > /dev/null; sleep 1.5; cat > /dev/null ) < of &
	script -qc "'$DOCDEX' sample --queries q.tsv --qrels qrels --run run --count 400000 --format ids -o of c.tsv" \
		/dev/null < /dev/null > tty
	wait
	# The share, the triples written of all, the rate and the time left.
	grep -aq $'\r''sampling  [ 0-9][0-9]\.[0-9]%  [0-9,]* of 400,000 triples, [0-9,]*/s, [0-9:]* left'$'\033''\[K' tty
	[[ $(< tty) == *$'\r\033[K' ]]
	# Off a terminal, and with --quiet, nothing.
	stalled_run
	run --separate-stderr dx sample --queries q.tsv --qrels qrels --run rf --count 10 --format ids -f -o out c.tsv
	status_is 0
	equals "$stderr" ""
	stalled_run
	script -qc "'$DOCDEX' sample --queries q.tsv --qrels qrels --run rf --count 10 --format ids -q -f -o out c.tsv" \
		/dev/null < /dev/null > tty
	equals "$(wc -c < tty)" 0
}

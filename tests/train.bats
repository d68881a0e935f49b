#!/usr/bin/env bats
# docdex sample for real training runs: resume at any triple, on another
# number of ranks; equal shards; epochs and one pair per query; the
# negatives people mine from a run (depth ranges, margins, weights); the
# trainers' own formats; read-ahead changes nothing written.

load helpers

check() {
	python3 "$BATS_TEST_DIRNAME/check_triples.py" "$@"
}

# A corpus of 3000 passages, 200 queries of up to 3 positives and a run 40
# deep, indexed; the options every test starts from.
setup_corpus() {
	"$DX_SYNTH" --count 3000 -o c.tsv --queries q.tsv --qrels qrels --run run --nqueries 200 \
		--positives 3 --depth 40
	dx index -q c.tsv
	opts=(--queries q.tsv --qrels qrels --run run --seed 11 c.tsv)
}

@test "--start N is the tail of the whole output from triple N, byte for byte" {
	setup_corpus
	dx sample "${opts[@]}" --count 5000 --format jsonl > all
	for n in 0 1 2047 4999; do
		dx sample "${opts[@]}" --count 5000 --format jsonl --start $n | cmp - <(tail -n +$((n + 1)) all)
	done
	# A job that wrote 0..N-1 and the one that resumes at N: the whole.
	cat <(head -n 1234 all) <(dx sample "${opts[@]}" --count 5000 --format jsonl --start 1234) | cmp - all
	run --separate-stderr dx sample "${opts[@]}" --count 5000 --start 5000
	status_is 1
	equals "$stderr" "docdex sample: the start (5000) is not below the number of triples (5000)"
}

@test "a job of 4 ranks resumed on 3 at the triple it reached loses and repeats none" {
	setup_corpus
	dx sample "${opts[@]}" --count 3001 --format ids > all
	# 4 ranks, 100 steps of 2 triples each: triples 0..799.
	for r in 0 1 2 3; do
		dx sample "${opts[@]}" --count 3001 --format ids --rank $r --world-size 4 | head -n 200 > a$r
	done
	for r in 0 1 2; do
		dx sample "${opts[@]}" --count 3001 --format ids --rank $r --world-size 3 --start 800 \
			--drop-last > b$r
	done
	# Each phase interleaves its ranks in triple order.
	paste -d '\n' a0 a1 a2 a3 | cmp - <(head -n 800 all)
	paste -d '\n' b0 b1 b2 | cmp - <(sed -n '801,2999p' all)
	equals "$(wc -l < b0) $(wc -l < b1) $(wc -l < b2)" "733 733 733"
}

@test "equal shards for 1 to 8 ranks and every count modulo the rank count; padding covers every triple" {
	setup_corpus
	local w c r
	for w in 1 2 3 4 5 6 7 8; do
		for c in $((40 * w)) $((40 * w + 1)) $((40 * w + w - 1)); do
			dx sample "${opts[@]}" --count $c --format ids > all
			: > got
			for r in $(seq 0 $((w - 1))); do
				dx sample "${opts[@]}" --count $c --format ids --rank $r --world-size $w > s$r
				[ "$(wc -l < s$r)" -eq $(((c + w - 1) / w)) ]
				cat s$r >> got
			done
			# Every triple at least once; the padding repeats the first ones.
			equals "$(sort -u got | wc -l)" "$(sort -u all | wc -l)"
			cmp <(sort got) <(cat all <(head -n $(((c + w - 1) / w * w - c)) all) | sort)
		done
	done
}

@test "--pairs query: each query once an epoch, its positives in turn; jsonl says the epoch" {
	setup_corpus
	dx sample "${opts[@]}" --pairs query --epochs 6 --format jsonl --stats > t 2> stats
	local queries
	queries=$(awk '{ print $1 }' qrels | sort -u | wc -l)
	equals "$(wc -l < t)" "$((6 * queries))"
	python3 - "$queries" <<-'EOF'
	import collections, json, sys
	queries = int(sys.argv[1])
	seen = collections.Counter()
	pos = collections.defaultdict(collections.Counter)
	positives = collections.defaultdict(set)
	for line in open("qrels"):
	    q, _, d, rel = line.split()
	    positives[q].add(d)
	for n, line in enumerate(open("t")):
	    t = json.loads(line)
	    assert t["epoch"] == n // queries, (n, t["epoch"])
	    seen[(t["epoch"], t["qid"])] += 1
	    pos[t["qid"]][t["pos_id"]] += 1
	assert set(seen.values()) == {1} and len(seen) == 6 * queries
	# Over 6 epochs a query's k positives come 6 / k times each.
	for q, c in pos.items():
	    assert set(c) == positives[q] and set(c.values()) == {6 // len(positives[q])}, (q, c)
	EOF
	# --pairs all: a query comes once for each of its positives.
	dx sample "${opts[@]}" --epochs 1 --format ids | wc -l | grep -qx "$(wc -l < qrels)"
}

@test "depth ranges, margins and rank weights, checked by an independent reading of the run" {
	setup_corpus
	dx sample "${opts[@]}" --depth 3-30 --count 4000 --format jsonl > t
	check --corpus c.tsv --layout tsv --queries q.tsv --qrels qrels --run run --depth 3-30 --expect 4000 t
	# Places 1 and 2 are never drawn; places 3 to 30 are.
	check --corpus c.tsv --layout tsv --queries q.tsv --qrels qrels --run run --depth 30 t
	! check --corpus c.tsv --layout tsv --queries q.tsv --qrels qrels --run run --depth 4-30 t 2> /dev/null
	dx sample "${opts[@]}" --margin 0.01 --count 4000 --format jsonl > m
	check --corpus c.tsv --layout tsv --queries q.tsv --qrels qrels --run run --margin 0.01 m
	dx sample "${opts[@]}" --margin 0.05% --count 4000 --format jsonl > m
	check --corpus c.tsv --layout tsv --queries q.tsv --qrels qrels --run run --margin 0.05% m
	# Without the margin, some negatives break it.
	dx sample "${opts[@]}" --count 4000 --format jsonl > u
	! check --corpus c.tsv --layout tsv --queries q.tsv --qrels qrels --run run --margin 0.01 u 2> /dev/null
	dx sample "${opts[@]}" --weights rank --count 4000 --format jsonl > w
	check --corpus c.tsv --layout tsv --queries q.tsv --qrels qrels --run run --weights rank w
	check --corpus c.tsv --layout tsv --queries q.tsv --qrels qrels --run run --weights uniform u
	! check --corpus c.tsv --layout tsv --queries q.tsv --qrels qrels --run run --weights uniform w 2> /dev/null
	# K distinct negatives, never a judged document.
	dx sample "${opts[@]}" --negatives 5 --exclude-judged --count 500 --format jsonl > k
	check --corpus c.tsv --layout tsv --queries q.tsv --qrels qrels --run run --exclude-judged k
	python3 -c 'import json, sys
for l in open("k"):
    n = json.loads(l)["neg_id"]
    assert len(set(n)) == 5, n'
	# They choose among a run's documents: without one, a usage error.
	run --separate-stderr dx sample --queries q.tsv --qrels qrels --random --weights rank --count 5 c.tsv
	status_is 2
	equals "$stderr" "docdex sample: --depth A-B, --margin and --weights choose among a run's documents: give --run (see docdex sample --help)"
	# An MS MARCO run has no scores for a margin.
	awk '{ print $1 "\t" $3 "\t" $4 }' run > run.ms
	run --separate-stderr dx sample --queries q.tsv --qrels qrels --run run.ms --margin 1 --count 5 c.tsv
	status_is 1
	equals "$stderr" "docdex sample: a margin needs the scores of a TREC run; an MS MARCO run has ranks only: 'run.ms'"
}

@test "the same triples whatever the order of the run's lines, equal scores too" {
	setup_corpus
	# Equal scores within each query: the rank column, then the id, decide.
	awk '{ $5 = 1; print }' run > run.flat
	shuf --random-source=<(yes) run.flat > run.shuf
	local o=(--queries q.tsv --qrels qrels --seed 4 --count 3000 --depth 5-20 --format ids c.tsv)
	dx sample --run run.flat "${o[@]}" > a
	dx sample --run run.shuf "${o[@]}" > b
	cmp a b
	# Ranks dropped too (all 0): the ids alone decide, still the same.
	awk '{ $4 = 0; print }' run.flat > run.norank
	shuf --random-source=<(yes) run.norank > run.norank.shuf
	dx sample --run run.norank "${o[@]}" > c
	dx sample --run run.norank.shuf "${o[@]}" | cmp - c
}

@test "Tevatron and FlagEmbedding formats, field by field" {
	setup_corpus
	dx sample "${opts[@]}" --negatives 3 --count 200 --format jsonl > j
	dx sample "${opts[@]}" --negatives 3 --count 200 --format tevatron > t
	dx sample "${opts[@]}" --negatives 3 --count 200 --format flagembedding > f
	python3 - <<-'EOF'
	import json
	for a, b, c in zip(open("j"), open("t"), open("f")):
	    j, t, f = json.loads(a), json.loads(b), json.loads(c)
	    # Tevatron's training JSONL: query_id, query, positive_passages and
	    # negative_passages, each passage docid, title and text.
	    assert list(t) == ["query_id", "query", "positive_passages", "negative_passages"], list(t)
	    assert t["query_id"] == j["qid"] and t["query"] == j["query"]
	    assert [p["docid"] for p in t["positive_passages"]] == [j["pos_id"]]
	    assert [p["text"] for p in t["positive_passages"]] == [j["pos"]]
	    assert [p["docid"] for p in t["negative_passages"]] == j["neg_id"]
	    assert [p["text"] for p in t["negative_passages"]] == j["neg"]
	    assert all(list(p) == ["docid", "title", "text"] for p in t["positive_passages"] + t["negative_passages"])
	    # FlagEmbedding's (and sentence-transformers'): query, pos, neg.
	    assert f == {"query": j["query"], "pos": [j["pos"]], "neg": j["neg"]}, f
	EOF
	# A title where the corpus has one: MS MARCO documents.
	use_data msmarco-v2-doc.json
	dx index -q msmarco-v2-doc.json
	printf 'q\tquestion\n' > q1.tsv
	python3 -c 'import json
ids = [json.loads(l)["docid"] for l in open("msmarco-v2-doc.json")][:2]
open("run1", "w").write("q Q0 %s 1 2 t\n" % ids[0])
open("qrels1", "w").write("q 0 %s 1\n" % ids[1])'
	dx sample --queries q1.tsv --qrels qrels1 --run run1 --count 1 --format tevatron msmarco-v2-doc.json > d
	python3 - <<-'EOF'
	import json
	t = json.loads(open("d").read())
	docs = {}
	for line in open("msmarco-v2-doc.json"):
	    o = json.loads(line)
	    docs[o["docid"]] = o
	for p in t["positive_passages"] + t["negative_passages"]:
	    assert p["title"] == docs[p["docid"]]["title"], p
	EOF
}

@test "read-ahead changes nothing written; a cold corpus is read ahead" {
	setup_corpus
	dx sample "${opts[@]}" --count 5000 > a
	dx sample "${opts[@]}" --count 5000 --no-readahead | cmp - a
	gzip -c c.tsv > cz.tsv.gz
	dx index -q --bgzf cb.tsv.gz c.tsv
	dx index -q cb.tsv.gz
	dx sample --queries q.tsv --qrels qrels --run run --seed 11 --count 5000 cb.tsv.gz | cmp - a
	dx sample --queries q.tsv --qrels qrels --run run --seed 11 --count 5000 --no-readahead cb.tsv.gz | cmp - a
}

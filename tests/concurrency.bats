#!/usr/bin/env bats
# Many processes reading one index while another rebuilds it: each reader
# opens either the old index or the new one, never half of one, so every
# document served is the one its id names and no reader fails.

load helpers

# Every document's text starts with "doc ID ", so that a reader can check
# what it was served without another copy of the corpus.
make_corpus() {
	"$DX_SYNTH" --count 20000 | awk -F'\t' '{ print "d" $1 "\tdoc d" $1 " " $2 }' > c.tsv
	gzip c.tsv
}

# Reader n runs docdex get, a new process each round, until the rebuilder
# is done; what went wrong goes to r/fail.n, the number of rounds to
# r/rounds.n.
get_reader() {
	local n=$1 round=0 rc
	touch "r/started.$n"
	while [ ! -e done ]; do
		rc=0
		"$DOCDEX" get --random 500 --seed $((n * 1000 + round)) c.tsv.gz > "r/got.$n" 2> "r/err.$n" || rc=$?
		[ "$rc" -eq 0 ] || echo "get round $round: exit $rc: $(cat "r/err.$n")" >> "r/fail.$n"
		awk -F'\t' -v r="$round" '$2 !~ ("^doc " $1 " ") { print "get round " r ": " $1 " served " substr($2, 1, 40) }' \
			"r/got.$n" >> "r/fail.$n"
		[ "$(wc -l < "r/got.$n")" -eq 500 ] || echo "get round $round: $(wc -l < "r/got.$n") documents" >> "r/fail.$n"
		round=$((round + 1))
	done
	echo "$round" > "r/rounds.$n"
}

# The same with docdex sample: both documents of each triple checked.
sample_reader() {
	local n=$1 round=0 rc
	touch "r/started.$n"
	while [ ! -e done ]; do
		rc=0
		"$DOCDEX" sample --triples triples.tsv --queries queries.tsv --format jsonl c.tsv.gz \
			> "r/got.$n" 2> "r/err.$n" || rc=$?
		[ "$rc" -eq 0 ] || echo "sample round $round: exit $rc: $(cat "r/err.$n")" >> "r/fail.$n"
		grep -vE '"pos_id":"(d[0-9]+)","pos":"doc \1 .*"neg_id":"(d[0-9]+)","neg":"doc \2 ' "r/got.$n" |
			sed "s/^/sample round $round: /" | cut -c1-200 >> "r/fail.$n"
		[ "$(wc -l < "r/got.$n")" -eq 2000 ] || echo "sample round $round: $(wc -l < "r/got.$n") triples" >> "r/fail.$n"
		round=$((round + 1))
	done
	echo "$round" > "r/rounds.$n"
}

@test "eight readers, get and sample, while the index is rebuilt again and again" {
	make_corpus
	awk 'BEGIN { srand(3); for (i = 0; i < 2000; i++)
		printf "q%d\td%d\td%d\n", i % 50, int(rand() * 20000), int(rand() * 20000) }' > triples.tsv
	awk 'BEGIN { for (i = 0; i < 50; i++) printf "q%d\tquery %d\n", i, i }' > queries.tsv
	# The two builds differ (their access points), so that a reader that
	# mixed the old and the new index would see a damaged one.
	dx index -q --span 1M -o one.ddx c.tsv.gz
	dx index -q --span 64K c.tsv.gz
	! cmp -s one.ddx c.tsv.gz.ddx
	mkdir r
	local n pids=()
	for n in 0 1 2 3; do
		get_reader "$n" &
		pids+=($!)
		sample_reader "$((n + 4))" &
		pids+=($!)
	done
	# Rebuilds start once every reader is in its loop, which it leaves only
	# when they are over: each round after this overlaps them.
	while [ "$(ls r/started.* 2> /dev/null | wc -l)" -lt 8 ]; do sleep 0.05; done
	# Twenty rebuilds; eight under a sanitizer, where each takes ten times
	# as long and the readers' rounds as much longer.
	local i rebuilds=20
	! under_sanitizer || rebuilds=8
	for i in $(seq "$rebuilds"); do
		dx index -q --span "$([ $((i % 2)) -eq 0 ] && echo 64K || echo 1M)" c.tsv.gz
	done
	touch done
	for n in "${pids[@]}"; do wait "$n"; done
	cat r/fail.* | head -n 20 >&2
	equals "$(cat r/fail.* | wc -l)" 0
	for n in 0 1 2 3 4 5 6 7; do
		[ "$(cat "r/rounds.$n")" -ge 1 ]
	done
	# No temporary file of the rebuilds is left behind.
	equals "$(ls -A)" "$(printf '%s\n' c.tsv.gz c.tsv.gz.ddx done one.ddx queries.tsv r triples.tsv)"
}

@test "an index cut short under a reader (overwritten in place): one line, no crash" {
	"$DX_SYNTH" --count 2000 -o c.tsv
	# String ids too: their lookups read the index's id table and pool
	# (and dx_corpus_prefetch_ids reads them ahead of each batch).
	"$DX_SYNTH" --kind documents --count 300 -o d.tsv
	local f rc
	for f in c.tsv d.tsv; do
		dx index -q "$f"
		# The first file's out would end the wait below before this
		# reader has opened its index.
		rm -f ids out err
		mkfifo ids
		dx get "$f" < ids > out 2> err &
		local reader=$!
		rc=0
		exec 5> ids
		sed -n 11p "$f" | cut -f1 >&5
		# Wait for the first answer: the index is open and mapped by then.
		while [ ! -s out ]; do sleep 0.05; done
		# What cp does to a file it overwrites: truncate, then write.
		: > "$f.ddx"
		sed -n 12p "$f" | cut -f1 >&5
		exec 5>&-
		wait "$reader" || rc=$?
		equals "$rc" 1
		equals "$(cat out)" "$(sed -n 11p "$f")"
		equals "$(cat err)" "docdex get: a corpus or index file could not be read where it was mapped: it was cut short while in use (overwritten in place), or the disk failed"
	done
}

#!/usr/bin/env bats
# The inflate cache (--inflate-cache): what it serves is byte for byte what
# the corpus holds, whoever reads, writes, dies or damages it meanwhile; it
# is removed by its last user, and swept when its users were all killed.
# Each test keeps its caches in a directory of its own (DOCDEX_CACHE_DIR).

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR" || exit 1
	export DOCDEX_CACHE_DIR=$BATS_TEST_TMPDIR/shm
	mkdir -p "$DOCDEX_CACHE_DIR"
}

teardown() {
	# Holders left by a failed test.
	[ -z "${HOLDER-}" ] || kill "$HOLDER" 2> /dev/null || true
}

# 20,000 passages as gzip with access points every 64 KiB, and as BGZF:
# about 100 stretches and 120 blocks, for caches of a few slots.
make_corpora() {
	"$DX_SYNTH" --count 20000 -o c.tsv
	gzip -c c.tsv > c.tsv.gz
	dx index -q --span 64K c.tsv.gz
	dx index -q --bgzf c.bgz c.tsv
}

caches() {
	ls "$DOCDEX_CACHE_DIR"
}

# A docdex get that holds the cache of $1 open until the test writes to
# its stdin's FIFO (or kills it): HOLDER is its pid.
hold_cache() {
	rm -f hold.fifo
	mkfifo hold.fifo
	"$DOCDEX" get --inflate-cache 2M "$1" < hold.fifo > /dev/null 2> hold.err &
	HOLDER=$!
	exec 7> hold.fifo
	# The cache whole: it is written under a .tmp name, then renamed.
	wait_until '[ -n "$(caches)" ] && [ -z "$(caches | grep "\.tmp$")" ]'
}

# A process that is not docdex holds the cache file $1 as a user does
# (a shared flock) until killed: HOLDER is its pid.
hold_as_another() {
	python3 -c 'import fcntl, sys, time
f = open(sys.argv[1])
fcntl.flock(f, fcntl.LOCK_SH)
time.sleep(60)' "$1" &
	HOLDER=$!
	wait_until "! flock -x -n '$1' true"
}

release_other() {
	kill "$HOLDER"
	wait "$HOLDER" || true
	HOLDER=
}

release_cache() {
	exec 7>&-
	wait "$HOLDER" || true
	HOLDER=
}

@test "get through the cache serves what get without it does, gzip and BGZF, and the cache is gone after" {
	make_corpora
	for c in c.tsv.gz c.bgz; do
		dx get --random 5000 --seed 7 "$c" > want
		run --separate-stderr dx get --random 5000 --seed 7 --inflate-cache 4M "$c"
		status_is 0
		equals "$stderr" ""
		[ "$output" == "$(cat want)" ]
		equals "$(caches)" ""
	done
	# sample's documents too.
	"$DX_SYNTH" --count 20000 -o /dev/null --queries q.tsv --qrels qrels.txt --nqueries 200
	dx sample --queries q.tsv --qrels qrels.txt --random --format jsonl c.tsv.gz > want
	dx sample --queries q.tsv --qrels qrels.txt --random --format jsonl --inflate-cache 1M c.tsv.gz |
		cmp - want
	# Every record, by id, through a cache of a few slots.
	cut -f1 c.tsv | dx get --inflate-cache 1M c.tsv.gz | cmp - c.tsv
	cut -f1 c.tsv | dx get --inflate-cache 1M c.bgz | cmp - c.tsv
}

@test "a corpus of two gzip files: a cache each, sharing the size by their text, every record right" {
	make_corpora
	head -n 12000 c.tsv | gzip > a.tsv.gz
	tail -n +12001 c.tsv | gzip > b.tsv.gz
	dx index -q --span 64K -o ab.ddx a.tsv.gz b.tsv.gz
	hold_cache ab.ddx
	equals "$(caches | wc -l)" 2
	# 2M shared 60:40, each part a whole number of 193 KiB stretches.
	local f total=0
	for f in "$DOCDEX_CACHE_DIR"/*; do
		total=$((total + $(stat -c %s "$f")))
	done
	(( total <= 2 * 1024 * 1024 ))
	cut -f1 c.tsv | dx get --inflate-cache 2M ab.ddx | cmp - c.tsv
	release_cache
	equals "$(caches)" ""
}

@test "a size that cannot hold one stretch is refused; a bad size is a usage error" {
	make_corpora
	run --separate-stderr dx get --inflate-cache 64K c.tsv.gz 0
	status_is 1
	[[ $stderr == "docdex get: an inflate cache of 64.0 KiB cannot hold one stretch of this source (it needs "* ]]
	run --separate-stderr dx get --inflate-cache lots c.tsv.gz 0
	status_is 2
	[[ $stderr == "docdex get: bad --inflate-cache, give a size such as 512M or 4G: 'lots'"* ]]
	equals "$(caches)" ""
}

# Reader n: docdex get with the cache, a new process a round, each round's
# documents compared with what get without the cache gave for its seed.
reader() {
	local n=$1 round rc
	for round in 0 1 2 3 4; do
		rc=0
		"$DOCDEX" get --inflate-cache 1M --random 2000 --seed $((n * 10 + round)) "$2" \
			> "r/got.$n" 2> "r/err.$n" || rc=$?
		[ "$rc" -eq 0 ] || echo "round $round: exit $rc: $(cat "r/err.$n")" >> "r/fail.$n"
		cmp -s "r/got.$n" "want/$((n * 10 + round))" || echo "round $round: other bytes" >> "r/fail.$n"
	done
}

@test "eight readers share one cache of a few slots: every document is the one asked for" {
	make_corpora
	mkdir r want
	# What each reader must get, from the plain file: the same records
	# for the same seed (as many, in the same order), read without
	# inflating (which, by docdex's own decoder under ThreadSanitizer,
	# took 80 of this test's 100 s there).
	dx index -q c.tsv
	local c n s
	for n in 0 1 2 3 4 5 6 7; do
		for s in 0 1 2 3 4; do
			"$DOCDEX" get --random 2000 --seed $((n * 10 + s)) c.tsv > "want/$((n * 10 + s))"
		done
	done
	for c in c.tsv.gz c.bgz; do
		rm -f r/*
		for n in 0 1 2 3 4 5 6 7; do
			reader "$n" "$c" &
		done
		wait
		if ls r/fail.* > /dev/null 2>&1; then
			head -n 5 r/fail.*
			false
		fi
		equals "$(caches)" ""
	done
}

@test "readers killed at any moment: the next ones are served right, and an abandoned cache is swept" {
	make_corpora
	local i
	for i in $(seq 1 12); do
		# Killed after 10 to 120 ms: opening, reading, or filling a slot.
		timeout -s KILL "0.$(printf '%02d' $((10 + i * 9)))" \
			"$DOCDEX" get --inflate-cache 1M --random 20000 --seed "$i" c.tsv.gz > /dev/null 2>&1 &
		timeout -s KILL "0.$(printf '%02d' $((15 + i * 7)))" \
			"$DOCDEX" get --inflate-cache 1M --random 20000 --seed "$i" c.tsv.gz > /dev/null 2>&1 &
		wait
	done
	cut -f1 c.tsv | dx get --inflate-cache 1M c.tsv.gz | cmp - c.tsv
	equals "$(caches)" ""
	# Its last user killed, a cache is left; the next user of the
	# directory removes it before it makes its own.
	hold_cache c.bgz
	local left
	left=$(caches)
	kill -KILL "$HOLDER"
	wait "$HOLDER" || true
	exec 7>&-
	HOLDER=
	equals "$(caches)" "$left"
	dx get --inflate-cache 1M --random 10 c.tsv.gz > /dev/null
	equals "$(caches)" ""
	# A cache killed mid-write and still in use (a holder keeps it) serves
	# right too: its torn slots fail their CRCs.
	hold_cache c.tsv.gz
	for i in 1 2 3; do
		timeout -s KILL 0.05 "$DOCDEX" get --inflate-cache 1M --random 20000 --seed "$i" c.tsv.gz \
			> /dev/null 2>&1 || true
	done
	cut -f1 c.tsv | dx get --inflate-cache 1M c.tsv.gz | cmp - c.tsv
	release_cache
	equals "$(caches)" ""
}

@test "a damaged cache in use serves right; its header damaged, readers go on without it and say so" {
	make_corpora
	hold_cache c.tsv.gz
	cut -f1 c.tsv | dx get --inflate-cache 2M c.tsv.gz > /dev/null
	local f
	f=$DOCDEX_CACHE_DIR/$(caches)
	# Every 1000th byte of the slots flipped: data, CRCs, lengths, keys.
	python3 - "$f" <<'EOF'
import sys
with open(sys.argv[1], "r+b") as f:
    b = bytearray(f.read())
    for i in range(4096, len(b), 1000):
        b[i] ^= 0x5A
    f.seek(0)
    f.write(b)
EOF
	# The last records: their stretches are the ones the slots hold.
	seq 17000 19999 | dx get --position --inflate-cache 2M c.tsv.gz > got
	tail -n 3000 c.tsv | cmp - got
	# The header: not the cache of this source any more.
	printf 'XXXXXXXX' | dd of="$f" conv=notrunc status=none
	run --separate-stderr dx get --inflate-cache 2M --random 20000 --seed 4 c.tsv.gz
	status_is 0
	[[ $stderr == "docdex get: warning: the inflate cache is damaged or not for this source, and in use: '$f'; reading without it" ]]
	[ "$output" == "$(dx get --random 20000 --seed 4 c.tsv.gz)" ]
	release_cache
	equals "$(caches)" ""
}

@test "a cache of another source under this one's name is replaced when nobody holds it" {
	make_corpora
	cp c.tsv.gz d.tsv.gz
	dx index -q d.tsv.gz # another span: other stretches
	hold_cache d.tsv.gz
	local theirs
	theirs=$(caches)
	cp "$DOCDEX_CACHE_DIR/$theirs" other
	release_cache
	# The name c.tsv.gz's cache takes, learnt from a holder.
	hold_cache c.tsv.gz
	local ours
	ours=$(caches)
	release_cache
	# Held by a process that is not docdex: kept, and read without.
	cp other "$DOCDEX_CACHE_DIR/$ours"
	hold_as_another "$DOCDEX_CACHE_DIR/$ours"
	run --separate-stderr dx get --inflate-cache 2M --random 3000 --seed 5 c.tsv.gz
	status_is 0
	[[ $stderr == *"not for this source, and in use"* ]]
	[ "$output" == "$(dx get --random 3000 --seed 5 c.tsv.gz)" ]
	release_other
	# Nobody holds it: swept, and a cache of this source made and removed.
	run --separate-stderr dx get --inflate-cache 2M --random 3000 --seed 5 c.tsv.gz
	status_is 0
	equals "$stderr" ""
	equals "$(caches)" ""
}

@test "a cache of another docdex version: said so while in use, replaced once nobody holds it" {
	make_corpora
	hold_cache c.tsv.gz
	cut -f1 c.tsv | dx get --inflate-cache 2M c.tsv.gz > /dev/null
	local ours
	ours=$(caches)
	cp "$DOCDEX_CACHE_DIR/$ours" cache.copy
	release_cache
	# The version is the last byte of the magic.
	printf '0' | dd of=cache.copy bs=1 seek=7 conv=notrunc status=none
	cp cache.copy "$DOCDEX_CACHE_DIR/$ours"
	hold_as_another "$DOCDEX_CACHE_DIR/$ours"
	run --separate-stderr dx get --inflate-cache 2M --random 3000 --seed 6 c.tsv.gz
	status_is 0
	equals "$stderr" "docdex get: warning: the inflate cache was made by another version of docdex, and in use: '$DOCDEX_CACHE_DIR/$ours'; reading without it"
	[ "$output" == "$(dx get --random 3000 --seed 6 c.tsv.gz)" ]
	release_other
	run --separate-stderr dx get --inflate-cache 2M --random 3000 --seed 6 c.tsv.gz
	status_is 0
	equals "$stderr" ""
	[ "$output" == "$(dx get --random 3000 --seed 6 c.tsv.gz)" ]
	equals "$(caches)" ""
}

@test "threads of one process share a cache through their own handles: bench --threads 4, gzip and BGZF" {
	make_corpora
	local c
	for c in c.tsv.gz c.bgz; do
		run --separate-stderr dx bench --workload random --strategies gzip-cached,bgzf-cached \
			--threads 4 --duration 1 --warmup 0.2 --repeat 1 --inflate-cache 1M -q -o r.json -f "$c"
		status_is 0
		equals "$stderr" ""
		python3 -c 'import json, sys
ok = [c for c in json.load(open("r.json"))["cells"] if c["status"] == "ok"]
sys.exit(len(ok) != 1 or ok[0]["summary"]["samples_per_s"]["median"] <= 0)'
	done
	equals "$(caches)" ""
}

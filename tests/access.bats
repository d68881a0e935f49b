#!/usr/bin/env bats
# --access of docdex get and docdex sample: auto, mmap and pread give the
# same bytes for every format, for ids, positions, fields and output
# formats, and a compressed corpus is read the same whatever the access;
# pread reads with pread(2), records close together in one call, and auto
# reads a corpus evicted from the page cache with pread, each cold batch
# asked ahead; a bad value is a usage error; bench's pread and mmap
# strategies, the library's accesses, still run.

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR" || exit 1
	# Passages (short records, many to a page) and documents (records of
	# several KiB, handed to writev by reference when read through the
	# mapping).
	"$DX_SYNTH" --count 2000 --seed 3 -o p.tsv
	"$DX_SYNTH" --kind documents --count 300 --seed 4 -o d.tsv
	dx index -q p.tsv
	dx index -q d.tsv
}

# Writes to $2 the ids of file $1, one a line, in random order, each about
# twice, some more often: a batch then asks for some records twice.
shuffled_with_repeats() {
	python3 -c '
import random, sys
ids = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
r = random.Random(11)
asked = ids + ids + [r.choice(ids) for _ in range(len(ids) // 4)]
r.shuffle(asked)
sys.stdout.buffer.write(b"".join(i + b"\n" for i in asked))' "$1" > "$2"
}

# The lines of TSV file $1 whose ids are the lines of file $2, in that
# order: what docdex get prints for them, from the file alone.
tsv_lines_of() {
	awk -F'\t' 'NR == FNR { line[$1] = $0; next } { print line[$1] }' "$1" "$2"
}

# Runs docdex get ARGS... with its standard input from file $1, without
# --access and with each access: each run must exit 0, print nothing on
# standard error, and print the bytes of file $2.
get_each_access() {
	local in=$1 want=$2 a
	shift 2
	for a in default auto mmap pread; do
		local opt=(--access "$a")
		[ "$a" != default ] || opt=()
		run --separate-stderr bash -c '"$@" > got' _ "$DOCDEX" get "${opt[@]}" "$@" < "$in"
		status_is 0
		equals "$stderr" ""
		cmp got "$want"
	done
}

@test "ids in random order with repeats: every access prints the records of the file, in batches of 1, 7 and 1024" {
	local f b
	for f in p.tsv d.tsv; do
		cut -f1 "$f" > ids
		shuffled_with_repeats ids asked
		tsv_lines_of "$f" asked > want
		[ "$(wc -l < want)" -gt "$(wc -l < "$f")" ]
		for b in 1 7 1024; do
			get_each_access asked want --batch "$b" "$f"
		done
	done
}

@test "--position: a range, the whole corpus backwards and scattered positions read the same with every access" {
	seq 500 1499 > range
	sed -n '501,1500p' p.tsv > want
	get_each_access range want --position p.tsv
	seq 1999 -1 0 > backwards
	tac p.tsv > want
	get_each_access backwards want --position p.tsv
	# Far apart (read one call each with pread), next to each other (one
	# call), and one asked three times.
	printf '%s\n' 1999 0 1000 1001 1002 0 5 0 > scattered
	for n in 2000 1 1001 1002 1003 1 6 1; do sed -n "${n}p" p.tsv; done > want
	get_each_access scattered want --position --batch 4096 p.tsv
}

@test "--field and --format tsv or jsonl, on TSV, JSONL (v2 and BEIR) and TREC: every access prints what the default does" {
	local layout file fields fmt
	for layout in tsv jsonl-v2 beir trec; do
		file=c.$layout
		"$DX_SYNTH" --kind documents --layout "$layout" --count 200 --seed 6 -o "$file"
		dx index -q "$file"
		case $layout in
		tsv) fields=title,body ;;
		jsonl-v2) fields=title,body ;;
		beir) fields=title,text ;;
		trec) fields=TITLE,text ;;
		esac
		dx get --position --format tsv "$file" $(seq 0 199) | cut -f1 > ids
		equals "$(wc -l < ids)" 200
		shuffled_with_repeats ids asked
		for fmt in raw tsv jsonl; do
			dx get --format "$fmt" "$file" < asked > want
			[ -s want ]
			get_each_access asked want --format "$fmt" "$file"
			dx get --format "$fmt" --field "$fields" "$file" < asked > want
			get_each_access asked want --format "$fmt" --field "$fields" "$file"
		done
	done
	# The JSONL of TSV records is their columns (an oracle of its own).
	cut -f1 p.tsv > ids
	shuffled_with_repeats ids asked
	dx get --access pread --format jsonl p.tsv < asked > out.jsonl
	tsv_lines_of p.tsv asked > want
	run python3 -c '
import json, sys
got = [json.loads(l) for l in open("out.jsonl", encoding="utf-8")]
got = [o["doc_id"] + "\t" + o["text"] for o in got]
want = open("want", encoding="utf-8").read().split("\n")[:-1]
assert got == want, (len(got), len(want))
print(len(got))'
	status_is 0
	equals "$output" "$(wc -l < asked)"
}

@test "--random draws the same documents with every access" {
	dx get --random 700 --seed 9 p.tsv > want
	: > none
	get_each_access none want --random 700 --seed 9 p.tsv
}

@test "gzip and BGZF corpora, and a corpus of plain and gzip files: the access changes nothing" {
	cut -f1 p.tsv > ids
	shuffled_with_repeats ids asked
	tsv_lines_of p.tsv asked > want
	gzip -c p.tsv > g.tsv.gz
	dx index -q g.tsv.gz
	get_each_access asked want g.tsv.gz
	dx index -q --bgzf b.tsv.gz p.tsv
	get_each_access asked want b.tsv.gz
	# Two files in one index, the second gzip: a batch of positions that
	# crosses from one to the other, and records of both asked together.
	head -n 1000 p.tsv > first.tsv
	tail -n 1000 p.tsv | gzip > second.tsv.gz
	dx index -q -o both.ddx first.tsv second.tsv.gz
	seq 0 1999 > all
	get_each_access all p.tsv --position both.ddx
	get_each_access asked want both.ddx
	# The same with two plain files: records are never read together
	# across the end of a file.
	tail -n 1000 p.tsv > second.tsv
	dx index -q -o plain2.ddx first.tsv second.tsv
	printf '%s\n' 999 1000 998 1001 > edge
	for n in 1000 1001 999 1002; do sed -n "${n}p" p.tsv; done > want
	get_each_access edge want --position plain2.ddx
	get_each_access all p.tsv --position plain2.ddx
}

# The pread(2) calls on file $2 in strace output $1.
preads_of() {
	grep -c "^pread64([0-9]*<[^>]*/$2>" "$1" || true
}

# The POSIX_FADV_WILLNEED calls on file $2 in strace output $1.
willneed_of() {
	grep -c "^fadvise64([0-9]*<[^>]*/$2>.*POSIX_FADV_WILLNEED" "$1" || true
}

# Runs docdex ARGS... under strace into $1, watching its reads and read-ahead.
traced() {
	local trace=$1
	shift
	env "$NO_LEAK_CHECK" strace -y -e trace=pread64,fadvise64 -o "$trace" "$DOCDEX" "$@"
}

# Drops file $1 from the page cache: fails when the kernel keeps it (a RAM
# filesystem) or there is no fincore to tell.
try_evict() {
	command -v fincore > /dev/null || return 1
	sync "$1"
	dd if="$1" iflag=nocache count=0 status=none
	[ "$(fincore -n -b -o RES "$1")" -eq 0 ]
}

# The same, skipping the test when it cannot.
evict() {
	try_evict "$1" || skip "cannot drop $1 from the page cache here (no fincore, or a RAM filesystem)"
}

@test "pread reads with pread, records close together in one call; mmap reads none; auto maps a warm corpus and preads an evicted one, asked ahead" {
	[ "$CHECKER" != valgrind ] || skip "strace cannot watch valgrind's reads of the corpus alone"
	command -v strace > /dev/null || skip "no strace"
	strace -o /dev/null true 2> /dev/null || skip "strace cannot trace here (ptrace refused)"
	# Opening reads a sample of the corpus (its fingerprint): the reads
	# counted below are those beyond it.
	traced open.trace get --access mmap p.tsv < /dev/null
	local base
	base=$(preads_of open.trace p.tsv)
	seq 0 999 > first1000
	sed -n '1,1000p' p.tsv > want1000
	cat p.tsv > /dev/null

	# Warm: pread reads 1000 records one after another in one call, asks
	# nothing ahead; mmap and auto read none.
	traced t get --access pread --position p.tsv < first1000 > out
	cmp out want1000
	equals "$(($(preads_of t p.tsv) - base))" 1
	equals "$(willneed_of t p.tsv)" 0
	local a
	for a in mmap auto; do
		traced t get --access "$a" --position p.tsv < first1000 > out
		cmp out want1000
		equals "$(preads_of t p.tsv)" "$base"
	done
	# More than 1 MiB of records (4000 passages) takes two calls; records
	# more than 4 KiB apart one each.
	local bytes
	bytes=$(head -n 4000 p.tsv | wc -c)
	[ "$bytes" -gt 1048576 ] && [ "$bytes" -lt 2097152 ]
	"$DX_SYNTH" --count 4000 --seed 3 -o big.tsv
	dx index -q big.tsv
	traced open.trace get --access mmap big.tsv < /dev/null
	local big_base
	big_base=$(preads_of open.trace big.tsv)
	traced t get --access pread --position --batch 4096 big.tsv < <(seq 0 3999) > out
	cmp out big.tsv
	equals "$(($(preads_of t big.tsv) - big_base))" 2
	traced t get --access pread --position p.tsv 0 1999 > out
	equals "$(($(preads_of t p.tsv) - base))" 2

	# Evicted: auto reads with pread, every record of a cold batch asked of
	# the kernel first; mmap neither reads nor asks.  A corpus of 7 MB, of
	# which opening it (the fingerprint) reads back a small part only.
	"$DX_SYNTH" --count 20000 --seed 5 -o cold.tsv
	dx index -q cold.tsv
	traced open.trace get --access mmap cold.tsv < /dev/null
	base=$(preads_of open.trace cold.tsv)
	cut -f1 cold.tsv | head -n 3000 > ids
	shuffled_with_repeats ids asked
	tsv_lines_of cold.tsv asked > want
	evict cold.tsv
	traced t get cold.tsv < asked > out
	cmp out want
	[ "$(($(preads_of t cold.tsv) - base))" -gt 0 ]
	[ "$(willneed_of t cold.tsv)" -gt 0 ]
	evict cold.tsv
	traced t get --access pread cold.tsv < asked > out
	cmp out want
	[ "$(willneed_of t cold.tsv)" -gt 0 ]
	evict cold.tsv
	traced t get --access mmap cold.tsv < asked > out
	cmp out want
	equals "$(preads_of t cold.tsv)" "$base"
	equals "$(willneed_of t cold.tsv)" 0
	# Warm again: auto reads through the mapping.
	cat cold.tsv > /dev/null
	traced t get cold.tsv < asked > out
	cmp out want
	equals "$(preads_of t cold.tsv)" "$base"
	equals "$(willneed_of t cold.tsv)" 0
}

@test "sample --access: the same triples with every access, read ahead or not, warm or evicted" {
	"$DX_SYNTH" --kind documents --count 1500 --seed 2 -o c.tsv --queries q.tsv --qrels qrels.txt \
		--run run.txt --nqueries 60 --depth 30
	dx index -q c.tsv
	local opts=(--queries q.tsv --qrels qrels.txt --run run.txt --negatives 3 --count 3000 --seed 8
		--format jsonl)
	dx sample "${opts[@]}" -o want.jsonl c.tsv
	equals "$(wc -l < want.jsonl)" 3000
	local a
	for a in auto mmap pread; do
		run --separate-stderr dx sample "${opts[@]}" --access "$a" -f -o got.jsonl c.tsv
		status_is 0
		equals "$stderr" ""
		cmp got.jsonl want.jsonl
		run --separate-stderr dx sample "${opts[@]}" --access "$a" --no-readahead -f -o got.jsonl c.tsv
		status_is 0
		cmp got.jsonl want.jsonl
	done
	# Texts: random negatives, more than one batch.
	opts=(--queries q.tsv --qrels qrels.txt --random --negatives 2 --count 5000 --seed 1)
	dx sample "${opts[@]}" -o want.tsv c.tsv
	run --separate-stderr dx sample "${opts[@]}" --access pread -f -o got.tsv c.tsv
	status_is 0
	cmp got.tsv want.tsv
	if try_evict c.tsv; then
		run --separate-stderr dx sample "${opts[@]}" -f -o got.tsv c.tsv
		status_is 0
		cmp got.tsv want.tsv
	fi
}

@test "a bad --access is a usage error" {
	local v
	for v in x MMAP "" "pread,mmap"; do
		run --separate-stderr dx get --access "$v" p.tsv 1
		status_is 2
		equals "$output" ""
		equals "$stderr" "docdex get: bad --access, give auto, mmap or pread: '$v' (see docdex get --help)"
		run --separate-stderr dx sample --access "$v" --queries q --qrels r p.tsv
		status_is 2
		equals "$output" ""
		equals "$stderr" "docdex sample: bad --access, give auto, mmap or pread: '$v' (see docdex sample --help)"
	done
	run --separate-stderr dx get p.tsv 1 --access
	status_is 2
	equals "$stderr" "docdex get: option needs a value: '--access' (see docdex get --help)"
	run --separate-stderr dx get --access=pread p.tsv 1
	status_is 0
	equals "$output" "$(sed -n 2p p.tsv)"
}

@test "bench: the pread and mmap strategies (the library's accesses) run on a small corpus" {
	mkdir -p tmp
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	"$DX_SYNTH" --count 3000 -o c.tsv --queries q.tsv --qrels qrels.txt --run run.txt --nqueries 100
	dx index -q c.tsv
	run --separate-stderr dx bench --strategies pread,mmap -j 1,2 --threads 1,2 --duration 0.1 \
		--warmup 0 --repeat 2 --workload random -q -o r.json c.tsv
	status_is 0
	equals "$stderr" ""
	check_report r.json --repeat 2 --expect pread/j1/t1=ok --expect pread/j2/t2=ok \
		--expect mmap/j1/t1=ok --expect mmap/j2/t2=ok
	run --separate-stderr dx bench --strategies pread,mmap --queries q.tsv --qrels qrels.txt \
		--run run.txt --duration 0.1 --warmup 0 --repeat 2 -q -o t.json c.tsv
	status_is 0
	check_report t.json --expect pread/j1/t1=ok --expect mmap/j1/t1=ok
	equals "$(ls tmp)" ""
}

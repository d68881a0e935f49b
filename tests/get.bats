#!/usr/bin/env bats
# docdex get: ids, positions, random draws, fields, output formats, and
# refusing what cannot be trusted.

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR" || exit 1
	"$DX_SYNTH" --kind documents --count 400 --seed 9 -o d.tsv
	dx index -q d.tsv
}

@test "ids from arguments, from stdin and from '-', output in their order" {
	local a b c
	a=$(sed -n 5p d.tsv | cut -f1)
	b=$(sed -n 300p d.tsv | cut -f1)
	c=$(sed -n 1p d.tsv | cut -f1)
	run --separate-stderr dx get d.tsv "$a" "$b" "$c"
	status_is 0
	equals "$output" "$(sed -n 5p d.tsv)
$(sed -n 300p d.tsv)
$(sed -n 1p d.tsv)"
	local by_args=$output
	run --separate-stderr dx get d.tsv < <(printf '%s\n%s\r\n\n%s' "$a" "$b" "$c")
	status_is 0
	equals "$output" "$by_args"
	run --separate-stderr dx get d.tsv "$a" - "$c" < <(echo "$b")
	equals "$output" "$by_args"
}

@test "every record comes back byte for byte" {
	cut -f1 d.tsv | tac > ids
	dx get d.tsv < ids > out
	tac d.tsv | cmp - out
}

@test "an unknown id: a line on stderr, exit 1 after everything found is printed" {
	local a
	a=$(head -n 1 d.tsv | cut -f1)
	run --separate-stderr dx get d.tsv nope "$a" "also<nope>"
	status_is 1
	equals "$output" "$(head -n 1 d.tsv)"
	equals "$stderr" "docdex get: id not found: 'nope'
docdex get: id not found: 'also<nope>'"
	run --separate-stderr dx get --missing skip d.tsv nope "$a"
	status_is 0
	equals "$stderr" ""
	equals "$output" "$(head -n 1 d.tsv)"
}

@test "--position reads 0-based positions in corpus order" {
	run --separate-stderr dx get --position d.tsv 399 0
	status_is 0
	equals "$output" "$(sed -n 400p d.tsv)
$(sed -n 1p d.tsv)"
	run --separate-stderr dx get --position d.tsv -- 400 -1 "" x1 1
	status_is 1
	equals "$output" "$(sed -n 2p d.tsv)"
	equals "$stderr" "docdex get: position beyond the last record: '400'
docdex get: not a position: '-1'
docdex get: not a position: 'x1'"
}

@test "--random draws distinct documents, the same for the same seed" {
	run --separate-stderr dx get --random 400 --seed 5 --field 1 d.tsv
	status_is 0
	equals "$(sort <<<"$output")" "$(cut -f1 d.tsv | sort)"
	local first=$output
	run dx get --random 400 --seed 5 --field 1 d.tsv
	equals "$output" "$first"
	run dx get --random 400 --seed 6 --field 1 d.tsv
	[ "$output" != "$first" ]
	run --separate-stderr dx get --random 3 --field 1 d.tsv
	equals "$output" "$(head -n 3 <<<"$(dx get --random 400 --field 1 d.tsv)")"
	run --separate-stderr dx get --random 401 d.tsv
	status_is 1
	equals "$stderr" "docdex get: cannot draw 401 distinct documents from 400 records"
	run --separate-stderr dx get --random 2 d.tsv someid
	status_is 2
	run --separate-stderr dx get --random 0 d.tsv
	status_is 0
	equals "$output" ""
}

@test "--field picks TSV columns by name or number, several joined by a space" {
	local line id url title
	line=$(sed -n 7p d.tsv)
	IFS=$'\t' read -r id url title _ <<<"$line"
	run --separate-stderr dx get --field title d.tsv "$id"
	status_is 0
	equals "$output" "$title"
	run dx get --field 3,2 d.tsv "$id"
	equals "$output" "$title $url"
	run dx get --format tsv --field url d.tsv "$id"
	equals "$output" "$id	$url"
}

@test "--format tsv keeps one line per document; jsonl parses back to the same text" {
	printf 'a\tline one\n{"_id": "j1", "text": "tab\\there\\nnewline \\"quoted\\" caf\\u00e9"}\n' > /dev/null
	printf '{"_id": "j1", "text": "tab\\there\\nnew line \\"quoted\\" caf\\u00e9 \\\\ \\u0001"}\n' > j.jsonl
	dx index -q j.jsonl
	run --separate-stderr dx get --format tsv --field text j.jsonl j1
	status_is 0
	equals "$output" "j1	tab here new line \"quoted\" café \\ "$'\x01'
	dx get --format jsonl --field text j.jsonl j1 > out.jsonl
	run python3 -c '
import json, sys
o = json.loads(open("out.jsonl").read())
assert o == {"id": "j1", "text": "tab\there\nnew line \"quoted\" caf\u00e9 \\ \u0001"}, o
print("ok")'
	status_is 0
	equals "$output" ok
	# Without --field the text is the raw record.
	dx get --format jsonl d.tsv < <(cut -f1 d.tsv) > all.jsonl
	run python3 -c '
import json
recs = [json.loads(l) for l in open("all.jsonl")]
lines = open("d.tsv").read().splitlines()
assert [r["text"] for r in recs] == lines
assert [r["id"] for r in recs] == [l.split("\t")[0] for l in lines]
print(len(recs))'
	equals "$output" 400
}

@test "a corpus changed since indexing is refused, no document printed" {
	local a
	a=$(head -n 1 d.tsv | cut -f1)
	echo "D9999999	u	t	b" >> d.tsv
	run --separate-stderr dx get d.tsv "$a"
	status_is 1
	equals "$output" ""
	equals "$stderr" "docdex get: corpus changed since it was indexed (its size), run docdex index again: 'd.tsv'"
	dx index -q d.tsv
	touch -d '2020-01-01 00:00' d.tsv
	run --separate-stderr dx get d.tsv "$a"
	equals "$stderr" "docdex get: corpus changed since it was indexed (its modification time), run docdex index again: 'd.tsv'"
	# Same size, same mtime, other bytes where the fingerprint samples.
	dx index -q d.tsv
	touch -r d.tsv stamp
	printf 'X' | dd of=d.tsv bs=1 seek=3 count=1 conv=notrunc status=none
	touch -r stamp d.tsv
	run --separate-stderr dx get d.tsv "$a"
	status_is 1
	equals "$stderr" "docdex get: corpus changed since it was indexed (its contents), run docdex index again: 'd.tsv'"
}

@test "no index, a missing corpus, and a file that is no index" {
	"$DX_SYNTH" --count 3 -o c.tsv
	run --separate-stderr dx get c.tsv 1
	status_is 1
	equals "$stderr" "docdex get: no index, build it with docdex index: 'c.tsv.ddx'"
	run --separate-stderr dx get gone.tsv 1
	status_is 1
	equals "$stderr" "docdex get: cannot open: 'gone.tsv': no such file or directory"
	dx index -q c.tsv
	mv c.tsv elsewhere.tsv
	run --separate-stderr dx get c.tsv.ddx 1
	status_is 1
	equals "$stderr" "docdex get: cannot open corpus file: 'c.tsv': no such file or directory"
	echo "not an index" > fake.ddx
	run --separate-stderr dx get fake.ddx 1
	status_is 1
	equals "$stderr" "docdex get: not a docdex index: 'fake.ddx'"
}

@test "a damaged index is refused: a flipped byte in each section, a truncated file" {
	cut -f1 d.tsv > ids
	dx get d.tsv < ids > good
	cp d.tsv.ddx orig.ddx
	# Flip a byte in the middle of every non-empty section, and in the header.
	local name off size
	while IFS=$'\t' read -r _ name off size; do
		[ "$size" -gt 0 ] || continue
		cp orig.ddx d.tsv.ddx
		flip_byte d.tsv.ddx $((off + size / 2))
		run --separate-stderr dx get d.tsv < ids
		status_is 1
		[[ $stderr == "docdex get: index damaged ("*"), rebuild it with docdex index: 'd.tsv.ddx'" ]]
		# What was printed before the damage was found is right.
		[ -z "$output" ] || [[ $(cat good) == "$output"* ]]
		run --separate-stderr dx index --verify d.tsv
		status_is 1
		[[ $stderr == "docdex index: index damaged ("*"), rebuild it with docdex index: 'd.tsv.ddx'" ]]
	done < <(dx index --stats orig.ddx | grep '^section')
	cp orig.ddx d.tsv.ddx
	flip_byte d.tsv.ddx 20
	run --separate-stderr dx get d.tsv 1
	equals "$stderr" "docdex get: index damaged (checksum mismatch in header), rebuild it with docdex index: 'd.tsv.ddx'"
	head -c 1000 orig.ddx > d.tsv.ddx
	run --separate-stderr dx get d.tsv 1
	status_is 1
	equals "$stderr" "docdex get: index damaged (truncated), rebuild it with docdex index: 'd.tsv.ddx'"
	: > d.tsv.ddx
	run --separate-stderr dx get d.tsv 1
	equals "$stderr" "docdex get: empty index file: 'd.tsv.ddx'"
}

@test "ids with '#', ':', '<>', spaces and non-ASCII bytes" {
	printf 'a#1\tone\n<dbpedia:Caf\xc3\xa9>\ttwo\nwith space\tthree\nx:y:z\tfour\n' > odd.tsv
	dx index -q odd.tsv
	run --separate-stderr dx get --field 2 odd.tsv "x:y:z" "with space" "<dbpedia:Café>" "a#1"
	status_is 0
	equals "$output" "four
three
two
one"
}

@test "a reader of the old index keeps its view while the index is rebuilt" {
	"$DX_SYNTH" --count 2000 --seed 1 -o c.tsv
	dx index -q c.tsv
	local before
	before=$(sed -n 11p c.tsv)
	mkfifo ids
	dx get c.tsv < ids > out &
	local reader=$!
	exec 5> ids
	echo 10 >&5
	# Wait for the first answer: the index is open and mapped by then (a
	# reader slow to start, as under valgrind, would open the new one).
	local i
	for i in $(seq 100); do
		[ -s out ] && break
		sleep 0.1
	done
	# The corpus is replaced (by rename) and re-indexed meanwhile.
	"$DX_SYNTH" --count 2000 --seed 2 -o c.tsv.new
	mv c.tsv.new c.tsv
	dx index -q c.tsv
	echo 10 >&5
	exec 5>&-
	wait "$reader"
	equals "$(cat out)" "$before
$before"
	run dx get c.tsv 10
	equals "$output" "$(sed -n 11p c.tsv)"
	[ "$output" != "$before" ]
}

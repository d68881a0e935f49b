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
	# Digits past 64 bits: a position beyond the last record, which
	# --missing skip skips, as any other.
	run --separate-stderr dx get --position d.tsv 18446744073709551615 18446744073709551616 \
		000000000000000000000000001 99999999999999999999999999999 1
	status_is 1
	equals "$output" "$(sed -n 2p d.tsv)
$(sed -n 2p d.tsv)"
	equals "$stderr" "docdex get: position beyond the last record: '18446744073709551615'
docdex get: position beyond the last record: '18446744073709551616'
docdex get: position beyond the last record: '99999999999999999999999999999'"
	run --separate-stderr dx get --missing skip --position d.tsv 99999999999999999999 1
	status_is 0
	equals "$output" "$(sed -n 2p d.tsv)"
	equals "$stderr" ""
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
	printf '{"_id": "j1", "text": "tab\\there\\nnew line \\"quoted\\" caf\\u00e9 \\\\ \\u0001"}\n' > j.jsonl
	dx index -q j.jsonl
	run --separate-stderr dx get --format tsv --field text j.jsonl j1
	status_is 0
	equals "$output" "j1	tab here new line \"quoted\" café \\ "$'\x01'
	dx get --format jsonl --field text j.jsonl j1 > out.jsonl
	run python3 -c '
import json, sys
o = json.loads(open("out.jsonl").read())
assert o == {"doc_id": "j1", "text": "tab\there\nnew line \"quoted\" caf\u00e9 \\ \u0001"}, o
print("ok")'
	status_is 0
	equals "$output" ok
	# Without --field, every column: a TSV line comes back as it is, and
	# as an object of the index's column names.
	cut -f1 d.tsv > ids
	run --separate-stderr dx get --format tsv d.tsv < ids
	status_is 0
	equals "$output" "$(cat d.tsv)"
	dx get --format jsonl d.tsv < ids > all.jsonl
	run python3 -c '
import json
recs = [json.loads(l) for l in open("all.jsonl")]
lines = open("d.tsv").read().splitlines()
want = [dict(zip(["doc_id", "url", "title", "body"], l.split("\t"))) for l in lines]
assert recs == want
assert all(list(r) == ["doc_id", "url", "title", "body"] for r in recs)
print(len(recs))'
	equals "$output" 400
}

@test "--format jsonl on real JSONL corpora: doc_id, then the record's other keys with their values" {
	use_data beir-msmarco-300.jsonl beir-dbpedia-300.jsonl msmarco-v2-doc.json msmarco-v2-passage.json \
		msmarco-v2.1-doc-segmented.json msmarco-v1-passage-docs00.json mrtydi-ja.jsonl.gz
	local f key n
	while read -r f key; do
		dx index -q "$f"
		n=$(zcat -f "$f" | grep -c .)
		seq 0 $((n - 1)) | dx get --position --format jsonl "$f" > out.jsonl
		run python3 -c '
import gzip, json, sys
f, key = sys.argv[1], sys.argv[2]
src = [json.loads(l) for l in (gzip.open if f.endswith(".gz") else open)(f, "rt", encoding="utf-8") if l.strip()]
out = [json.loads(l) for l in open("out.jsonl", encoding="utf-8")]
assert len(out) == len(src) > 0
for o, r in zip(out, src):
    want = {"doc_id": str(r[key])}
    want.update((k, v) for k, v in r.items() if k != key)
    assert o == want, (o, want)
    assert list(o) == list(want)
print(len(out))' "$f" "$key"
		status_is 0
		equals "$output" "$n"
	done <<-EOF
	beir-msmarco-300.jsonl _id
	beir-dbpedia-300.jsonl _id
	msmarco-v2-doc.json docid
	msmarco-v2-passage.json pid
	msmarco-v2.1-doc-segmented.json docid
	msmarco-v1-passage-docs00.json id
	mrtydi-ja.jsonl.gz docid
	EOF
}

@test "golden output: each format of TREC, JSONL and TSV samples, with and without --field" {
	use_data trec-ap-sample.trec msmarco-v2-passage.json msmarco-v2.1-doc-segmented.json \
		beir-msmarco-300.jsonl msmarco-passage-toy.tsv
	local f
	for f in trec-ap-sample.trec msmarco-v2-passage.json msmarco-v2.1-doc-segmented.json \
		beir-msmarco-300.jsonl msmarco-passage-toy.tsv; do
		dx index -q "$f"
	done
	# TREC: the id and the text, or the elements named.
	run --separate-stderr dx get --format jsonl trec-ap-sample.trec DOC222
	status_is 0
	equals "$output" '{"doc_id":"DOC222","text":"simple\n   enough\n   text\n   text\n   text"}'
	run --separate-stderr dx get --format tsv trec-ap-sample.trec DOC222
	equals "$output" "DOC222	simple    enough    text    text    text"
	run --separate-stderr dx get --format jsonl --field head,dateline,byline trec-ap-sample.trec TREC_DOC_1
	equals "$output" '{"doc_id":"TREC_DOC_1","head":"This is head","dateline":"TOKYO (AP)","byline":null}'
	run --separate-stderr dx get --format tsv --field head,dateline,byline trec-ap-sample.trec TREC_DOC_1
	equals "$output" "TREC_DOC_1	This is head	TOKYO (AP)	"
	# JSONL: every key but the id's; numbers stay numbers.
	run --separate-stderr dx get --format jsonl msmarco-v2-passage.json msmarco_passage_00_0
	equals "$output" '{"doc_id":"msmarco_passage_00_0","passage":"0-60 Times - 0-60 | 0 to 60 Times & 1/4 Mile Times | Zero to 60 Car Reviews.","spans":"(0,75)","docid":"msmarco_doc_00_0"}'
	run --separate-stderr dx get --format tsv msmarco-v2-passage.json msmarco_passage_00_0
	equals "$output" "msmarco_passage_00_0	0-60 Times - 0-60 | 0 to 60 Times & 1/4 Mile Times | Zero to 60 Car Reviews.	(0,75)	msmarco_doc_00_0"
	run --separate-stderr dx get --format jsonl --field end_char,start_char,title msmarco-v2.1-doc-segmented.json 'msmarco_v2.1_doc_00_0#0_0'
	equals "$output" "{\"doc_id\":\"msmarco_v2.1_doc_00_0#0_0\",\"end_char\":$(head -n 1 msmarco-v2.1-doc-segmented.json | python3 -c 'import json,sys; print(json.load(sys.stdin)["end_char"])'),\"start_char\":0,\"title\":\"0-60 Times - 0-60 | 0 to 60 Times & 1/4 Mile Times | Zero to 60 Car Reviews\"}"
	# MS MARCO in BEIR's copy: an empty title is an empty value, kept apart
	# from the text (raw joins the two with a space, as it always did).
	local text
	text=$(dx get --field text beir-msmarco-300.jsonl 4380635)
	run --separate-stderr dx get --format jsonl --field title,text beir-msmarco-300.jsonl 4380635
	equals "$output" "{\"doc_id\":\"4380635\",\"title\":\"\",\"text\":\"$text\"}"
	run --separate-stderr dx get --format tsv --field title,text beir-msmarco-300.jsonl 4380635
	equals "$output" "4380635		$text"
	run --separate-stderr dx get --field title,text beir-msmarco-300.jsonl 4380635
	equals "$output" " $text"
	# TSV: MS MARCO passages by the index's column names, line for line.
	run --separate-stderr dx get --position --format jsonl msmarco-passage-toy.tsv 0
	equals "$output" "{\"doc_id\":\"0\",\"text\":\"$(head -n 1 msmarco-passage-toy.tsv | cut -f2)\"}"
	run --separate-stderr dx get --position --format jsonl --field 2 msmarco-passage-toy.tsv 0
	equals "$output" "{\"doc_id\":\"0\",\"text\":\"$(head -n 1 msmarco-passage-toy.tsv | cut -f2)\"}"
	cut -f1 msmarco-passage-toy.tsv | dx get --format tsv msmarco-passage-toy.tsv | cmp - msmarco-passage-toy.tsv
}

@test "--format jsonl: doc_id is the id, a string, once" {
	printf '{"doc_id": "a", "text": "x"}\n' > a.jsonl
	printf '{"_id": 12, "doc_id": "other", "title": "t"}\n' > n.jsonl
	dx index -q a.jsonl
	dx index -q n.jsonl
	run --separate-stderr dx get --format jsonl a.jsonl a
	equals "$output" '{"doc_id":"a","text":"x"}'
	run --separate-stderr dx get --format jsonl --field doc_id,text a.jsonl a
	equals "$output" '{"doc_id":"a","text":"x"}'
	run --separate-stderr dx get --format jsonl n.jsonl 12
	equals "$output" '{"doc_id":"12","title":"t"}'
	run --separate-stderr dx get --format jsonl --field _id n.jsonl 12
	equals "$output" '{"doc_id":"12","_id":12}'
}

@test "a field that no record has is a usage error; one that a record lacks is empty, or null in jsonl" {
	printf 'p1\tone\np2\ttwo\n' > two.tsv
	dx index -q two.tsv
	run --separate-stderr dx get --field 3 two.tsv p1
	status_is 2
	equals "$output" ""
	equals "$stderr" "docdex get: bad field for the tsv corpus two.tsv (columns id,text), no column of that number: '3'"
	run --separate-stderr dx get --format jsonl --field 1,2,3 two.tsv p1
	status_is 2
	equals "$stderr" "docdex get: bad field for the tsv corpus two.tsv (columns id,text), no column of that number: '3'"
	run --separate-stderr dx get --field nosuch two.tsv p1
	status_is 2
	equals "$stderr" "docdex get: bad field for the tsv corpus two.tsv (columns id,text), no column of that name: 'nosuch'"
	# A field named twice, by name or by number: a JSON object holds a key once.
	run --separate-stderr dx get --format jsonl --field text,2 two.tsv p1
	status_is 2
	equals "$stderr" "docdex get: bad field for the tsv corpus two.tsv (columns id,text), named twice: '2'"
	run --separate-stderr dx get --field 2 two.tsv p1
	status_is 0
	equals "$output" one
	# Five columns: the index names none, so a record short of the column
	# asked has it empty, as a JSONL record without the key asked has.
	printf 'a\t1\t2\t3\t4\nb\t1\t2\t3\t4\t5\n' > five.tsv
	dx index -q five.tsv
	run --separate-stderr dx get --field 6 five.tsv a b
	status_is 0
	equals "$output" "
5"
	run --separate-stderr dx get --format jsonl --field 2,6 five.tsv a b
	equals "$output" '{"doc_id":"a","2":"1","6":null}
{"doc_id":"b","2":"1","6":"5"}'
	run --separate-stderr dx get --format tsv --field 6,2 five.tsv a
	equals "$output" "a		1"
	run --separate-stderr dx get --format jsonl five.tsv b
	equals "$output" '{"doc_id":"b","2":"1","3":"2","4":"3","5":"4","6":"5"}'
	printf '{"_id": "x", "title": "T"}\n{"_id": "y"}\n' > k.jsonl
	dx index -q k.jsonl
	dx get --field title k.jsonl x y > out
	printf 'T\n\n' | cmp - out
	run --separate-stderr dx get --format jsonl --field title k.jsonl x y
	equals "$output" '{"doc_id":"x","title":"T"}
{"doc_id":"y","title":null}'
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
	wait_until '[ -s out ]'
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

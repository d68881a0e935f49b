#!/usr/bin/env bats
# The synthetic corpus generator (tests/dx-synth over bench/synth.c).

load helpers

@test "the same seed gives the same bytes, another seed other bytes" {
	"$DX_SYNTH" --kind documents --layout trec --count 200 --seed 4 -o a
	"$DX_SYNTH" --kind documents --layout trec --count 200 --seed 4 -o b
	"$DX_SYNTH" --kind documents --layout trec --count 200 --seed 5 -o c
	cmp a b
	! cmp -s a c
}

@test "text compresses about 3 times with gzip, like English" {
	for kind in passages documents; do
		"$DX_SYNTH" --kind $kind --size 4M -o c.tsv
		local raw packed
		raw=$(stat -c %s c.tsv)
		packed=$(gzip -6 -c c.tsv | wc -c)
		# ratio * 100 between 270 and 350
		[ $((raw * 100 / packed)) -ge 270 ]
		[ $((raw * 100 / packed)) -le 350 ]
	done
}

@test "passages average about 60 words, documents about 1,100 with a long tail" {
	"$DX_SYNTH" --count 5000 -o p.tsv
	local words
	words=$(cut -f2 p.tsv | wc -w)
	[ $((words / 5000)) -ge 55 ] && [ $((words / 5000)) -le 65 ]
	"$DX_SYNTH" --kind documents --count 2000 -o d.tsv
	words=$(cut -f4 d.tsv | wc -w)
	[ $((words / 2000)) -ge 950 ] && [ $((words / 2000)) -le 1250 ]
	# The longest is many times the average.
	local longest
	longest=$(cut -f4 d.tsv | awk '{ if (NF > m) m = NF } END { print m }')
	[ "$longest" -gt $((5 * words / 2000)) ]
}

@test "ids: dense integers for passages, D-numbers for documents, v2 ids hold their line's offset" {
	"$DX_SYNTH" --count 100 -o p.tsv
	equals "$(cut -f1 p.tsv | tr '\n' ' ')" "$(seq 0 99 | tr '\n' ' ')"
	"$DX_SYNTH" --kind documents --count 100 -o d.tsv
	[ "$(cut -f1 d.tsv | grep -c '^D[0-9]*$')" -eq 100 ]
	[ "$(cut -f1 d.tsv | sort -u | wc -l)" -eq 100 ]
	for kind in passages documents; do
		"$DX_SYNTH" --kind $kind --layout jsonl-v2 --count 100 -o v2.json
		run python3 -c '
import json, re
at = 0
for line in open("v2.json", "rb"):
    rec = json.loads(line)
    rid = rec.get("pid") if "pid" in rec else rec["docid"]
    assert int(re.fullmatch(r"msmarco_(?:doc|passage)_00_(\d+)", rid).group(1)) == at, (rid, at)
    at += len(line)
print("ok")'
		equals "$output" ok
	done
}

@test "--size stops at the first record past the size" {
	"$DX_SYNTH" --size 1M -o p.tsv
	local size
	size=$(stat -c %s p.tsv)
	[ "$size" -ge 1048576 ] && [ "$size" -lt $((1048576 + 2000)) ]
}

@test "queries, qrels and a run that agree with the corpus" {
	"$DX_SYNTH" --kind documents --count 500 -o d.tsv --queries q.tsv --qrels qrels.txt --run run.txt \
		--nqueries 30 --positives 2 --depth 20
	[ "$(wc -l < q.tsv)" -eq 30 ]
	[ "$(wc -l < run.txt)" -eq 600 ]
	# Every judged document is in the corpus and ranked by the run.
	cut -f1 d.tsv | sort > ids
	[ -z "$(awk '{ print $3 }' qrels.txt | sort -u | comm -23 - ids)" ]
	[ -z "$(awk '{ print $1 " " $3 }' qrels.txt | sort -u | comm -23 - <(awk '{ print $1 " " $3 }' run.txt | sort -u))" ]
	dx index -q d.tsv
	run --separate-stderr dx get --field 1 d.tsv < <(awk '{ print $3 }' run.txt)
	status_is 0
}

@test "a corpus smaller than the run's depth of 100 gets a run as deep as itself" {
	run --separate-stderr "$DX_SYNTH" --count 50 -o c.tsv --queries q.tsv --qrels qrels.txt \
		--run run.txt --nqueries 3
	status_is 0
	equals "$stderr" ""
	equals "$(wc -l < run.txt)" 150
	equals "$(cut -d' ' -f3 run.txt | sort -u | wc -l)" 50
	run --separate-stderr "$DX_SYNTH" --count 50 -o c.tsv --run run.txt --nqueries 3 --depth 60
	status_is 1
}

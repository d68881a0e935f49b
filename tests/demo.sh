#!/bin/sh
# make demo: index a small generated corpus and serve documents out of it.
# usage: demo.sh DOCDEX DX_SYNTH
set -eu
docdex=$1
synth=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/docdex-demo.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM

step() { printf '\n$ %s\n' "$*"; }

echo "A corpus of 10,000 MS MARCO-shaped documents (docid, url, title, body):"
step dx-synth --kind documents --count 10000 -o "$dir/docs.tsv"
"$synth" --kind documents --count 10000 -o "$dir/docs.tsv"
ls -l "$dir/docs.tsv" | awk '{ print $5 " bytes" }'

step docdex index docs.tsv
"$docdex" index "$dir/docs.tsv"
"$docdex" index --stats "$dir/docs.tsv" | grep -E '^(records|id-kind|bytes|bytes-per-record)	'

a=$(sed -n 42p "$dir/docs.tsv" | cut -f1)
b=$(sed -n 7p "$dir/docs.tsv" | cut -f1)
step docdex get --field title docs.tsv "$a" "$b"
"$docdex" get --field title "$dir/docs.tsv" "$a" "$b"

step docdex get --position --format tsv --field url docs.tsv 0 9999
"$docdex" get --position --format tsv --field url "$dir/docs.tsv" 0 9999

step docdex get --random 3 --seed 1 --format jsonl --field title docs.tsv
"$docdex" get --random 3 --seed 1 --format jsonl --field title "$dir/docs.tsv"

step "cut -f1 docs.tsv | docdex get docs.tsv | cmp - docs.tsv"
cut -f1 "$dir/docs.tsv" | "$docdex" get "$dir/docs.tsv" | cmp - "$dir/docs.tsv" &&
	echo "all 10,000 documents served by id, byte for byte"

echo
echo "Training triples: 500 generated queries with one judged document each, and a run:"
"$synth" --kind documents --count 10000 -o /dev/null --queries "$dir/queries.tsv" \
	--qrels "$dir/qrels.txt" --run "$dir/run.txt" --nqueries 500 --depth 50
head -n 1 "$dir/qrels.txt"
head -n 1 "$dir/run.txt"
step docdex sample --queries queries.tsv --qrels qrels.txt --run run.txt --depth 50 \
	--count 2 --format ids docs.tsv
"$docdex" sample --queries "$dir/queries.tsv" --qrels "$dir/qrels.txt" --run "$dir/run.txt" \
	--depth 50 --count 2 --format ids "$dir/docs.tsv"
step "docdex sample ... --field title --count 2 docs.tsv   # query, positive, negative"
"$docdex" sample --queries "$dir/queries.tsv" --qrels "$dir/qrels.txt" --run "$dir/run.txt" \
	--depth 50 --count 2 --field title "$dir/docs.tsv"
step "docdex sample ... --world-size 2 --rank 0|1: two shards, together the same triples"
for r in 0 1; do
	"$docdex" sample --queries "$dir/queries.tsv" --qrels "$dir/qrels.txt" --run "$dir/run.txt" \
		--world-size 2 --rank $r --format ids "$dir/docs.tsv" > "$dir/shard$r"
done
"$docdex" sample --queries "$dir/queries.tsv" --qrels "$dir/qrels.txt" --run "$dir/run.txt" \
	--format ids "$dir/docs.tsv" > "$dir/all"
paste -d '\n' "$dir/shard0" "$dir/shard1" | grep . | cmp - "$dir/all" &&
	echo "$(wc -l < "$dir/shard0") + $(wc -l < "$dir/shard1") triples, interleaved: the unsharded output"

step docdex get docs.tsv D0
"$docdex" get "$dir/docs.tsv" D0 || echo "(exit status $?: an id not in the corpus)"

step docdex index --verify docs.tsv
"$docdex" index --verify "$dir/docs.tsv"

echo
echo "The same corpus gzipped, indexed and read in place, and rewritten as BGZF:"
gzip -c "$dir/docs.tsv" > "$dir/docs.tsv.gz"
step docdex index docs.tsv.gz
"$docdex" index "$dir/docs.tsv.gz"
"$docdex" index --stats "$dir/docs.tsv.gz" | awk -F'\t' '$1 == "source" { print "kind " $7 ", " $9 " access points, " $10 " bytes of windows" }'
step docdex get --field title docs.tsv.gz "$a" "$b"
"$docdex" get --field title "$dir/docs.tsv.gz" "$a" "$b"
step docdex index --bgzf docs.bgz docs.tsv.gz
"$docdex" index --bgzf "$dir/docs.bgz" "$dir/docs.tsv.gz"
step "cut -f1 docs.tsv | docdex get docs.bgz | cmp - docs.tsv"
cut -f1 "$dir/docs.tsv" | "$docdex" get "$dir/docs.bgz" | cmp - "$dir/docs.tsv" &&
	echo "all 10,000 documents served from BGZF by id, byte for byte"

echo
echo "The loading strategies side by side on the 10,000 documents, 1 and 2 workers:"
step docdex bench -j 1,2 --strategies memory,stdio,pread,mmap --duration 0.3 --repeat 1 docs.tsv
"$docdex" bench -j 1,2 --strategies memory,stdio,pread,mmap --duration 0.3 --warmup 0.1 \
	--repeat 1 --queries "$dir/queries.tsv" --qrels "$dir/qrels.txt" --run "$dir/run.txt" \
	"$dir/docs.tsv"

echo
echo "Locked batch buffers, the corpus read in, and a RAM disk, against none:"
# A RAM disk where /dev/shm is one (a container may lack it).
placement=disk
case $(stat -f -c %T /dev/shm 2> /dev/null) in tmpfs | ramfs) placement=disk,ramdisk ;; esac
step docdex pin-test --pin none,buffers,populate --placement $placement --duration 0.3 --repeat 1 docs.tsv
"$docdex" pin-test --pin none,buffers,populate --placement $placement --duration 0.3 --warmup 0.1 \
	--repeat 1 --queries "$dir/queries.tsv" --qrels "$dir/qrels.txt" "$dir/docs.tsv"

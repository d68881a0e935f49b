#!/bin/sh
# make demo: index a small generated corpus and serve documents out of it.
# usage: demo.sh DOCDEX DX_SYNTH
#
# Every line that starts with "$ " is the command that ran, as it ran, in
# the demo's own directory, and what follows it is that command's output.
set -eu
dir=$(mktemp -d "${TMPDIR:-/tmp}/docdex-demo.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
mkdir "$dir/bin"
ln -s "$1" "$dir/bin/docdex"
ln -s "$2" "$dir/bin/dx-synth"
PATH=$dir/bin:$PATH
cd "$dir"

# Shows a command, then runs it as shown.
run() {
	printf '\n$ %s\n' "$1"
	eval "$1"
}
say() { printf '\n%s\n' "$*"; }

say "A corpus of 10,000 MS MARCO-shaped documents (docid, url, title, body):"
run "dx-synth --kind documents --count 10000 -o docs.tsv"
run "wc -c docs.tsv"
run "docdex index docs.tsv"
run "docdex index --stats docs.tsv | grep -E '^(records|id-kind|bytes|bytes-per-record)\\s'"

a=$(sed -n 42p docs.tsv | cut -f1)
b=$(sed -n 7p docs.tsv | cut -f1)
run "docdex get --field title docs.tsv $a $b"
run "docdex get --position --format tsv --field url docs.tsv 0 9999"
run "docdex get --random 3 --seed 1 --format jsonl --field title docs.tsv"
run "cut -f1 docs.tsv | docdex get docs.tsv | cmp - docs.tsv && echo 'all 10,000 served by id, byte for byte'"

say "Training triples: 500 generated queries with one judged document each, and a run:"
run "dx-synth --kind documents --count 10000 -o /dev/null --queries queries.tsv --qrels qrels.txt --run run.txt --nqueries 500 --depth 50"
run "head -n 1 qrels.txt run.txt"
t="--queries queries.tsv --qrels qrels.txt --run run.txt"
run "docdex sample $t --depth 50 --count 2 --format ids docs.tsv"
run "docdex sample $t --depth 50 --count 2 --field title docs.tsv"
say "Two shards for two ranks: together, interleaved, the same triples as one run:"
run "for r in 0 1; do docdex sample $t --world-size 2 --rank \$r --format ids docs.tsv > shard\$r; done"
run "docdex sample $t --format ids docs.tsv > all"
run "paste -d '\\n' shard0 shard1 | grep . | cmp - all && wc -l shard0 shard1 all"

say "An id the corpus does not hold, and a check of the whole index:"
run "docdex get docs.tsv D0 || echo \"exit status \$?\""
run "docdex index --verify docs.tsv"

say "The same corpus gzipped, indexed and read in place, and rewritten as BGZF:"
run "gzip -c docs.tsv > docs.tsv.gz"
run "docdex index docs.tsv.gz"
run "docdex index --stats docs.tsv.gz | grep '^source'"
run "docdex get --field title docs.tsv.gz $a $b"
run "docdex index --bgzf docs.bgz docs.tsv.gz"
run "cut -f1 docs.tsv | docdex get docs.bgz | cmp - docs.tsv && echo 'all 10,000 served from BGZF by id, byte for byte'"

say "The loading strategies side by side on these 10,000 documents, 1 and 2 workers; cells
this short and a corpus this small sit in the page cache, so the figures say little of a
real corpus: name yours, with longer cells, to measure it:"
run "docdex bench -j 1,2 --strategies memory,stdio,pread,mmap --duration 0.3 --warmup 0.1 --repeat 3 $t docs.tsv"

say "Locked batch buffers, the corpus read in, and a RAM disk, against none:"
# A RAM disk where /dev/shm is one (a container may lack it).
placement=disk
case $(stat -f -c %T /dev/shm 2> /dev/null) in tmpfs | ramfs) placement=disk,ramdisk ;; esac
run "docdex pin-test --pin none,buffers,populate --placement $placement --duration 0.3 --warmup 0.1 --repeat 3 --queries queries.tsv --qrels qrels.txt docs.tsv"

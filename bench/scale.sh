#!/bin/bash
# bench/scale.sh: docdex at real corpus sizes (make bench-scale).
#
#   bench/scale.sh DOCDEX SYNTH DIR [SIZES] [KINDS]
#
# Generates, once, a corpus of each kind (passages: MS MARCO collection.tsv
# shaped, sequential ids; documents: msmarco-docs.tsv shaped, string ids)
# and size (default "1G 3G 12G") in DIR, kept between runs, and measures on
# each, with the machine's own references in the same run:
#
#   index      the build's time and peak memory, against `wc -l`
#   get        1M random ids in a fresh process, the corpus in the page
#              cache, for each --access; medians of 3
#   cold get   GET_COLD random ids with the corpus evicted from the page
#              cache first (dd iflag=nocache), for each --access, one at a
#              time (--batch 1) and in batches; against fio's random 4 KiB
#              reads of the same file at queue depth 1 and 32 (O_DIRECT)
#   bench      the random and triples workloads, pread and mmap, 1 and 2
#              workers, in the page cache
#   sample     one epoch of triples with their texts (docdex sample) from
#              the corpus's queries, qrels and run, in the page cache;
#              median of RUNS
#   limited    the random workload, memory, pread and mmap, 1 and 2
#              workers, in a memory cgroup of LIMIT (default 1G), the
#              corpus evicted first: out of memory as on a machine with
#              less of it than the corpus (skipped, and said, where no
#              cgroup can be made)
#
# Results go to DIR/results.tsv (one line a figure) and to stdout.
# Eviction drops only this corpus's pages.  Needs fio for the disk
# reference (skipped, and said, without it).
set -euo pipefail

DOCDEX=$1
SYNTH=$2
DIR=$3
SIZES=${4:-1G 3G 12G}
KINDS=${5:-passages documents}
GET_N=${GET_N:-1000000}
GET_COLD=${GET_COLD:-20000}
RUNS=${RUNS:-3}
LIMIT=${LIMIT:-1G}

mkdir -p "$DIR"
OUT=$DIR/results.tsv
: > "$OUT"

say() { printf '%s\n' "$*" >&2; }
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" | tee -a "$OUT"; }

# Seconds of a command, its output thrown away.
secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" > /dev/null
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

median() { sort -g | awk '{ a[NR] = $1 } END { printf "%.3f\n", a[int((NR + 1) / 2)] }'; }

evict() { dd if="$1" iflag=nocache count=0 status=none; }
warm() { cat "$1" > /dev/null; }

corpus() { # kind size -> path, generated once
	local kind=$1 size=$2 f=$DIR/$1-$2.tsv
	if [ ! -s "$f.ddx" ]; then
		say "generating $f"
		"$SYNTH" --kind "$kind" --layout tsv --size "$size" --seed 1 -o "$f.tmp" \
		    --queries "$f.queries" --qrels "$f.qrels" --run "$f.run" --nqueries 20000 --depth 100
		mv "$f.tmp" "$f"
		"$DOCDEX" index -q "$f"
		cut -f1 "$f" | shuf -n "$GET_N" --random-source=<(yes) > "$f.ids"
	fi
	echo "$f"
}

for kind in $KINDS; do
	for size in $SIZES; do
		f=$(corpus "$kind" "$size")
		tag=$kind-$size
		say "== $tag"
		warm "$f"

		# The index build, from the page cache, and its peak memory.
		rm -f "$DIR/rebuild.ddx"
		t=$( { /usr/bin/time -f '%e %M' "$DOCDEX" index -q -o "$DIR/rebuild.ddx" "$f" > /dev/null; } 2>&1 | tail -1)
		record "$tag" index_s "${t% *}" "build from the page cache"
		record "$tag" index_peak_kb "${t#* }" "peak RSS of the build"
		record "$tag" records "$("$DOCDEX" index --stats "$f" | awk '$1 == "records" { print $2 }')" ""
		rm -f "$DIR/rebuild.ddx"
		wc=$(for _ in $(seq "$RUNS"); do secs wc -l "$f"; done | median)
		record "$tag" wc_l_s "$wc" "reference: wc -l"

		# 1M random ids in a fresh process, in the page cache.
		for access in auto mmap pread; do
			s=$(for _ in $(seq "$RUNS"); do secs "$DOCDEX" get --access "$access" "$f" - < "$f.ids"; done | median)
			record "$tag" "get_warm_${access}_s" "$s" "$(wc -l < "$f.ids") random ids, fresh process"
		done

		# Out of the page cache: the first GET_COLD ids after an eviction.
		head -n "$GET_COLD" "$f.ids" > "$DIR/cold.ids"
		for access in auto pread mmap; do
			for batch in 1 1024; do
				# mmap one record at a time reads read_ahead_kb a fault: too slow
				# to wait for on a cold corpus of any size; measured batched only.
				[ "$access:$batch" = mmap:1 ] && continue
				evict "$f"
				s=$(secs "$DOCDEX" get --batch "$batch" --access "$access" "$f" - < "$DIR/cold.ids")
				record "$tag" "get_cold_${access}_b${batch}_ids_per_s" "$(echo "$GET_COLD / $s" | bc)" "evicted first"
			done
		done
		if command -v fio > /dev/null; then
			for qd in 1 32; do
				iops=$(fio --name=r --filename="$f" --readonly --rw=randread --bs=4k --direct=1 \
				    --ioengine=libaio --iodepth="$qd" --runtime=8 --time_based --output-format=terse \
				    --terse-version=3 | awk -F';' '{ print $8 }')
				record "$tag" "fio_qd${qd}_iops" "$iops" "reference: random 4 KiB O_DIRECT reads"
			done
		else
			say "fio not found: no disk reference"
		fi

		# bench's workloads, in the page cache.
		warm "$f"
		for workload in random triples; do
			extra=()
			[ "$workload" = triples ] && extra=(--queries "$f.queries" --qrels "$f.qrels" --run "$f.run")
			"$DOCDEX" bench -q --strategies pread,mmap -j 1,2 --workload "$workload" --repeat "$RUNS" \
			    "${extra[@]}" -f -o "$DIR/bench-$tag-$workload.csv" "$f"
			# samples/s, and the memory split: the workers' own (private)
			# and the page cache they map (file), each page counted once.
			awk -F, -v tag="$tag" -v w="$workload" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			    { k = tag "\tbench_" w "_" $col["strategy"] "_j" $col["workers"]
			      print k "_samples_per_s\t" $col["samples_per_s"] "\tmedian of the repetitions"
			      print k "_private_mib\t" $col["private_mib"] "\tanonymous PSS, all workers"
			      print k "_file_mib\t" $col["file_mib"] "\tfile-backed PSS, all workers" }' \
			    "$DIR/bench-$tag-$workload.csv" | tee -a "$OUT"
		done

		# One epoch of triples with their texts.
		s=$(for _ in $(seq "$RUNS"); do secs "$DOCDEX" sample --queries "$f.queries" --qrels "$f.qrels" \
		    --run "$f.run" -o /dev/null "$f"; done | median)
		n=$("$DOCDEX" sample --queries "$f.queries" --qrels "$f.qrels" --run "$f.run" --format ids "$f" | wc -l)
		record "$tag" sample_s "$s" "$n triples with their texts, one epoch, fresh process"

		# bench in a memory cgroup of LIMIT, from a cold cache.
		evict "$f"
		if "$DOCDEX" bench -q --strategies memory,pread,mmap -j 1,2 --workload random --repeat "$RUNS" \
		    --mem-limit "$LIMIT" --limit-by cgroup -f -o "$DIR/bench-$tag-limited.csv" "$f"; then
			awk -F, -v tag="$tag" -v lim="$LIMIT" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			    { k = tag "\tlimited_" $col["strategy"] "_j" $col["workers"]
			      v = $col["status"] == "ok" ? $col["samples_per_s"] : $col["status"]
			      print k "_samples_per_s\t" v "\tin a memory cgroup of " lim ", evicted first" }' \
			    "$DIR/bench-$tag-limited.csv" | tee -a "$OUT"
		else
			say "no memory cgroup here: no limited run"
		fi
	done
done

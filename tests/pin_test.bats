#!/usr/bin/env bats
# docdex pin-test: every mode measured or skipped with its reason, the RAM
# disk's copy made and always removed, the memory-lock limit named, the
# cold cache's residency, the CUDA modes without CUDA and through a
# stand-in runtime, and the reports bench shares.  Figures are never
# asserted against a speed: cells run for a tenth of a second.

load helpers

QUICK=(--duration 0.1 --warmup 0 --repeat 2)

setup() {
	cd "$BATS_TEST_TMPDIR" || exit 1
	mkdir -p tmp
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	# No CUDA, whatever this machine has, unless a test asks for the stand-in.
	export DOCDEX_CUDART=$BATS_TEST_TMPDIR/no-libcudart.so
}

teardown() {
	[ -z "${RAMDISK-}" ] || rm -rf "$RAMDISK"
}

# The statuses and reasons of a report's cells, "KEY STATUS REASON" a line.
cells() {
	python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["cells"]:
    print(c["key"], c["status"], c["reason"])' "$1"
}

# A figure of a cell of a report: the median of metric $3 in cell $2.
figure() {
	python3 -c 'import json, sys
c = [c for c in json.load(open(sys.argv[1]))["cells"] if c["key"] == sys.argv[2]][0]
print(c["summary"][sys.argv[3]]["median"])' "$1" "$2" "$3"
}

# A small TSV corpus of passages (about 1 MB) with its index, queries,
# qrels and a run.
small_corpus() {
	"$DX_SYNTH" --count 3000 -o c.tsv --queries q.tsv --qrels qrels.txt --run run.txt --nqueries 100
	dx index -q c.tsv
}

# A directory of our own on a RAM filesystem, in $RAMDISK; the test is
# skipped where the machine has none (/dev/shm is tmpfs on Linux, but a
# container may lack it).
ramdisk_dir() {
	local fs
	fs=$(stat -f -c %T /dev/shm 2> /dev/null) || skip "no /dev/shm"
	[ "$fs" = tmpfs ] || [ "$fs" = ramfs ] || skip "/dev/shm is $fs, not tmpfs"
	RAMDISK=$(mktemp -d /dev/shm/docdex-test.XXXXXX)
}

@test "every mode gives figures or is skipped with its reason; the RAM disk copy is gone afterwards" {
	small_corpus
	ramdisk_dir
	run --separate-stderr dx pin-test --pin all --placement disk,ramdisk --ramdisk "$RAMDISK" \
		-j 1,2 "${QUICK[@]}" -o r.json c.tsv
	status_is 0
	equals "$stderr" ""
	check_report r.json --repeat 2
	# 6 modes x 2 placements x 2 worker counts.
	equals "$(cells r.json | wc -l)" 24
	local key status reason
	while read -r key status reason; do
		case $key in
		none/* | populate/*)
			equals "$status" ok ;;
		buffers/* | corpus/*)
			# As the memory-lock limit of the machine allows.
			[ "$status" = ok ] || [[ $status == skipped && $reason == *"memory-lock limit is"* ]] ;;
		cuda*)
			equals "$status" skipped
			[[ $reason == "CUDA not found: "*no-libcudart.so* ]] ;;
		esac
	done < <(cells r.json)
	# The copy's cost and memory are in the ramdisk cells, not the disk's.
	python3 -c 'import json, sys
for c in json.load(open("r.json"))["cells"]:
    if c["status"] != "ok":
        continue
    copy = c["summary"]["copy_s"]["median"]
    if (c["placement"] == "ramdisk") != (copy > 0):
        sys.exit(c["key"] + ": copy_s " + str(copy))'
	# The table starts with the environment, and ends with the summary.
	[[ ${lines[0]} == environment ]]
	[[ $output == *"memory-lock limit  "*"(ulimit -l)"* ]]
	[[ $output == *"CUDA               not found: "* ]]
	[[ $output == *"placement ramdisk vs disk "*"pairs): "*"PSS "*", Shmem "* ]]
	# Within 100 columns, the environment's long values (CUDA's reason
	# with a library's path) folded under themselves.
	local l
	for l in "${lines[@]}"; do (( ${#l} <= 100 )) || { echo "wider than 100 columns: $l"; false; }; done
	! awk 'length > 100' <<< "$output" | grep -q .
	[[ $output == *"2 workers vs 1 "* ]]
	equals "$(ls "$RAMDISK")" ""
	equals "$(ls tmp)" ""
}

@test "the RAM disk copy exists while the cells run, and SIGINT removes it" {
	small_corpus
	ramdisk_dir
	"$DOCDEX" pin-test --pin none --placement ramdisk --ramdisk "$RAMDISK" -j 2 --duration 30 \
		--repeat 1 -q -o r.json c.tsv 2> err &
	local pid=$!
	# Until the workers run: the parent has children, and the copy is made.
	wait_until '[ "$(pgrep -c -P $pid)" = 2 ]'
	local copy
	copy=$(ls "$RAMDISK")
	[ -n "$copy" ]
	# The corpus and its index, copied whole.
	cmp c.tsv "$RAMDISK/$copy/c.tsv"
	[ -f "$RAMDISK/$copy/c.tsv.ddx" ]
	kill -INT $pid
	local st=0
	wait $pid || st=$?
	equals $st 130
	equals "$(cat err)" "docdex pin-test: interrupted"
	equals "$(ls "$RAMDISK")" ""
	[ ! -e r.json ]
}

# The README's example failed so: the index pin-test builds for a corpus
# without one lies in a temporary directory and names the corpus by
# "../", which the copy refused ("a source outside the index's directory").
@test "a corpus without an index is copied to the RAM disk with the index made for it" {
	"$DX_SYNTH" --count 500 -o c.tsv
	ramdisk_dir
	run --separate-stderr dx pin-test --pin none --placement disk,ramdisk --ramdisk "$RAMDISK" \
		"${QUICK[@]}" -q -o "$TMPDIR/r.json" c.tsv
	status_is 0
	equals "$stderr" ""
	equals "$(cells "$TMPDIR/r.json" | awk '{ print $1, $2 }' | sort | tr '\n' ' ')" \
		"none/disk/warm/j1/t1 ok none/ramdisk/warm/j1/t1 ok "
	# No index written beside the corpus, nothing left on the RAM disk.
	[ ! -e c.tsv.ddx ]
	equals "$(ls "$RAMDISK")" ""
}

@test "--ramdisk on a directory that is not a RAM filesystem is refused" {
	small_corpus
	local fs
	fs=$(stat -f -c %T .)
	[ "$fs" != tmpfs ] && [ "$fs" != ramfs ] || skip "the test directory is on $fs"
	mkdir disk
	run --separate-stderr dx pin-test --placement disk,ramdisk --ramdisk disk "${QUICK[@]}" c.tsv
	status_is 1
	equals "$output" ""
	[[ $stderr == "docdex pin-test: not a RAM filesystem (tmpfs or ramfs): it is "*": 'disk'" ]]
	equals "$(echo "$stderr" | wc -l)" 1
	run --separate-stderr dx pin-test --placement ramdisk --ramdisk missing "${QUICK[@]}" c.tsv
	status_is 1
	equals "$stderr" "docdex pin-test: cannot read the filesystem: 'missing': no such file or directory"
	# Without ramdisk in the matrix, the directory is not used.
	run --separate-stderr dx pin-test --pin none --placement disk --ramdisk disk "${QUICK[@]}" -q \
		-o r.json c.tsv
	status_is 0
	equals "$(cells r.json)" "none/disk/warm/j1/t1 ok "
}

@test "with ulimit -l 0, buffers and corpus are skipped with the limit named" {
	small_corpus
	run --separate-stderr bash -c 'ulimit -l 0 && exec "$0" pin-test --pin none,buffers,corpus \
		--placement disk --duration 0.1 --warmup 0 --repeat 1 -o r.json c.tsv' "$DOCDEX"
	status_is 0
	local limit="the memory-lock limit is 0 B (raise it with ulimit -l, or memlock in /etc/security/limits.conf)"
	[[ $(cells r.json | grep '^buffers/') == "buffers/disk/warm/j1/t1 skipped needs "*" locked in each worker: $limit" ]]
	[[ $(cells r.json | grep '^corpus/') == "corpus/disk/warm/j1/t1 skipped needs "*" locked in each worker: $limit" ]]
	# Made resident without locking, the corpus is still measured.
	equals "$(cells r.json | grep '^populate/')" "populate/disk/warm/j1/t1 ok "
	equals "$(cells r.json | grep '^none/')" "none/disk/warm/j1/t1 ok "
	[[ $output == *"memory-lock limit  0 B (ulimit -l)"* ]]
	python3 -c 'import json, sys; sys.exit(json.load(open("r.json"))["environment"]["memlock_limit_bytes"] != 0)'
}

@test "a cold cache reports the residency it reached; a warm one is all cached" {
	small_corpus
	run --separate-stderr dx pin-test --pin none --placement disk --cache warm,cold \
		"${QUICK[@]}" -o r.json c.tsv
	status_is 0
	check_report r.json --repeat 2 --expect none/disk/warm/j1/t1=ok --expect none/disk/cold/j1/t1=ok
	local cold warm
	cold=$(figure r.json none/disk/cold/j1/t1 cached_pct)
	warm=$(figure r.json none/disk/warm/j1/t1 cached_pct)
	# Eviction is asked for, not guaranteed: a figure from 0 to 100.
	python3 -c "import sys; sys.exit(not (0 <= $cold <= 100 and $warm > 90))"
	[[ $output == *"cached %"* ]]
}

@test "the CUDA modes copy every batch through the runtime's interface (a stand-in runtime)" {
	[ -n "${DOCDEX_FAKE_CUDART-}" ] || skip "DOCDEX_FAKE_CUDART is set by make check"
	small_corpus
	DOCDEX_CUDART=$DOCDEX_FAKE_CUDART run --separate-stderr dx pin-test --pin cuda --placement disk \
		-j 1,2 "${QUICK[@]}" --queries q.tsv --qrels qrels.txt -o r.json c.tsv
	status_is 0
	check_report r.json --repeat 2 --expect cuda-pageable/disk/warm/j1/t1=ok --expect cuda/disk/warm/j1/t1=ok \
		--expect cuda-pageable/disk/warm/j2/t1=ok --expect cuda/disk/warm/j2/t1=ok
	python3 -c 'import json, sys
r = json.load(open("r.json"))
if not r["environment"]["cuda"].startswith("found: "):
    sys.exit(r["environment"])
for c in r["cells"]:
    if not c["summary"]["h2d_gb_s"]["median"] > 0:
        sys.exit(c["key"])
t = [t for t in r["summary"] if t["technique"] == "pin cuda vs cuda-pageable"][0]
if not (t["pairs"] == 2 and t["h2d_gb_s"] > 0 and t["h2d_reference_gb_s"] > 0):
    sys.exit(t)'
	[[ $output == *"pin cuda vs cuda-pageable"*"H2D "*" GB/s"* ]]
	# A runtime whose device allocation fails fails the cell with its reason.
	FAKE_CUDART_FAIL=cudaMalloc DOCDEX_CUDART=$DOCDEX_FAKE_CUDART run --separate-stderr dx pin-test \
		--pin cuda --placement disk "${QUICK[@]}" -q -o f.json c.tsv
	status_is 1
	[[ $(cells f.json) == *"cuda/disk/warm/j1/t1 failed worker 0: "*cudaMalloc*cudaErrorMemoryAllocation* ]]
	# The report being in a file, one line says why the status is 1.
	[[ $stderr == "docdex pin-test: "*"failed"*": 'cuda"*"/disk/warm/j1/t1': worker 0: "*cudaMalloc* ]]
	equals "$(echo "$stderr" | wc -l)" 1
}

@test "--mem-limit in a memory cgroup: a worker over it is reported oom, the others run" {
	memcg_or_skip
	"$DX_SYNTH" --size 48M -o c.tsv
	dx index -q c.tsv
	run --separate-stderr dx pin-test --strategy memory --pin none --placement disk -j 1 \
		--mem-limit 24M "${QUICK[@]}" -o m.json c.tsv
	status_is 0
	grep -q '^   none  oom \[1\]$' <<< "$output"
	grep -q '^\[1\] killed for memory: 1 worker over the limit of 24.0 MiB (cgroup v' <<< "$output"
	# pread: ThreadSanitizer's shadow of a mapped corpus would be charged
	# to the worker (bench.bats).
	run --separate-stderr dx pin-test --strategy pread --pin none --placement disk -j 1 \
		--mem-limit 24M "${QUICK[@]}" -o r.json c.tsv
	status_is 0
	python3 - <<-'EOF'
		import json, sys
		m, r = (json.load(open(f)) for f in ("m.json", "r.json"))
		sys.exit([c["status"] for c in m["cells"]] != ["oom"] or
		         [c["status"] for c in r["cells"]] != ["ok"] or
		         not r["params"]["mem_limit_by"].startswith("cgroup v"))
	EOF
}

@test "reports hold every field the man page lists; --from, --baseline and CSV as bench" {
	small_corpus
	run --separate-stderr dx pin-test --pin none,buffers --placement disk --cache warm -j 1,2 \
		"${QUICK[@]}" -q -o r.json c.tsv
	status_is 0
	equals "$output" ""
	run --separate-stderr dx pin-test --from r.json --format csv -o r.csv -q
	status_is 0
	check_report r.json --repeat 2 --csv r.csv --man "$BATS_TEST_DIRNAME/../man/docdex-pin-test.1"
	# The summary in JSON: buffers against none, and 2 workers against 1.
	python3 -c 'import json, sys
s = {t["technique"]: t for t in json.load(open("r.json"))["summary"]}
if sorted(s) != ["2 workers vs 1", "pin buffers vs none"] and \
   sorted(s) != ["2 workers vs 1"]:
    sys.exit(sorted(s))
if s["2 workers vs 1"]["pairs"] != (2 if len(s) == 2 else 1):
    sys.exit(s)'
	# The same report again is no regression; --from shows the environment.
	run --separate-stderr dx pin-test --from r.json --baseline r.json
	status_is 0
	[[ ${lines[0]} == environment ]]
	# Samples/s tripled in the baseline is.
	python3 -c 'import json
r = json.load(open("r.json"))
for c in r["cells"]:
    for k in ("median", "min", "max"):
        c["summary"]["samples_per_s"][k] *= 3
json.dump(r, open("b.json", "w"))'
	run --separate-stderr dx pin-test --from r.json --baseline b.json -q
	status_is 3
	[[ $stderr == *"none/disk/warm/j1/t1"* ]]
	# A bench report is not a pin-test baseline.
	run --separate-stderr dx bench --strategies mmap "${QUICK[@]}" -q -o bench.json c.tsv
	status_is 0
	run --separate-stderr dx pin-test --from r.json --baseline bench.json -q
	status_is 1
}

@test "an experiment file sets pin-test's own options, and the command line overrides it" {
	small_corpus
	mkdir exp
	cat > exp/pins.yaml <<-EOF
		corpus: ../c.tsv
		pin: [none, buffers]
		placement: disk
		cache: [cold]
		workers: [1]
		duration: 0.1
		warmup: 0
		repeat: 1
		output: pins.json
		quiet: true
	EOF
	run --separate-stderr dx pin-test -c exp/pins.yaml
	status_is 0
	equals "$(cells exp/pins.json | cut -d' ' -f1,2)" "none/disk/cold/j1/t1 ok
buffers/disk/cold/j1/t1 $(cells exp/pins.json | grep '^buffers' | cut -d' ' -f2)"
	# The report there is kept without --force, on the command line or in the file.
	run --separate-stderr dx pin-test -c exp/pins.yaml --pin none --cache warm
	status_is 1
	equals "$stderr" "docdex pin-test: output exists, give --force to replace it: 'exp/pins.json'"
	run --separate-stderr dx pin-test -c exp/pins.yaml --pin none --cache warm --force
	status_is 0
	equals "$(cells exp/pins.json | cut -d' ' -f1,2)" "none/disk/warm/j1/t1 ok"
	printf 'pin: [none, floppy]\n' > bad.yaml
	run --separate-stderr dx pin-test -c bad.yaml
	status_is 2
	equals "$stderr" "docdex pin-test: bad.yaml:1: bad pin, give none, buffers, populate, corpus, cuda or all: 'none,floppy' (see docdex pin-test --help)"
	# pin-test's own keys of one value, as the shared ones: a list is
	# refused (ramdisk's items were joined into one path, and [x] taken).
	local key
	for key in "ramdisk: [/dev/shm, /dev/shm]" "ramdisk: [/dev/shm]" "strategy: [mmap, pread]"; do
		printf '%s\n' "$key" > bad.yaml
		run --separate-stderr dx pin-test -c bad.yaml
		status_is 2
		[[ $stderr == "docdex pin-test: bad.yaml:1: ${key%%:*} takes one value, not a list: '"* ]]
	done
}

@test "usage errors" {
	run --separate-stderr dx pin-test --pin floppy
	status_is 2
	equals "$stderr" "docdex pin-test: bad --pin, give none, buffers, populate, corpus, cuda or all: 'floppy' (see docdex pin-test --help)"
	run --separate-stderr dx pin-test --placement cloud
	status_is 2
	equals "$stderr" "docdex pin-test: bad --placement, give disk or ramdisk: 'cloud' (see docdex pin-test --help)"
	run --separate-stderr dx pin-test --cache hot
	status_is 2
	equals "$stderr" "docdex pin-test: bad --cache, give warm or cold: 'hot' (see docdex pin-test --help)"
	run --separate-stderr dx pin-test --strategy floppy
	status_is 2
	run --separate-stderr dx pin-test --strategies mmap
	status_is 2
	equals "$stderr" "docdex pin-test: unknown option: '--strategies' (see docdex pin-test --help)"
	run --separate-stderr dx pin-test a b
	status_is 2
}

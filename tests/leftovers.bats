#!/usr/bin/env bats
# What bench and pin-test leave behind, and what they must not replace.
# Every signal sent to end a process, landing in the middle of the RAM disk
# copy or of the temporary corpus, removes them and exits 130; a run killed
# by SIGKILL leaves them, named after its host and process, and the next
# run sweeps them but never a live run's; a worker that cannot be forked
# closes nothing it did not open; -o and --plot never replace what the
# command reads, nor each other; a synthetic corpus smaller than the run's
# depth works.  strace sends each signal on entering the Nth write(2) of
# the command (its own, not its workers'), so that where it lands is
# decided by the test, not by timing.

load helpers

QUICK=(--duration 0.1 --warmup 0 --repeat 1)

# The signals that stop a command cleanly, exit status 130 (docdex(1)).
SIGNALS=(HUP INT QUIT TERM USR1 USR2 ALRM VTALRM PROF XCPU PWR)

setup() {
	cd "$BATS_TEST_TMPDIR" || exit 1
	mkdir -p tmp
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	# No CUDA, whatever this machine has.
	export DOCDEX_CUDART=$BATS_TEST_TMPDIR/no-libcudart.so
	KEEP_ALIVE=()
}

teardown() {
	local pid
	for pid in "${KEEP_ALIVE[@]}"; do
		kill "$pid" 2> /dev/null || true
	done
	[ -z "${RAMDISK-}" ] || rm -rf "$RAMDISK"
}

fail() {
	echo "$*" >&2
	return 1
}

# strace, and a build that runs under it: valgrind runs docdex through a
# script, whose system calls are not docdex's.
needs_strace() {
	[ "$CHECKER" != valgrind ] || skip "the writes counted would be valgrind's"
	command -v strace > /dev/null || skip "no strace"
	strace -f -o /dev/null true 2> /dev/null || skip "strace cannot trace here (ptrace refused)"
}

# A directory of our own on a RAM filesystem, in $RAMDISK.
ramdisk_dir() {
	local fs
	fs=$(stat -f -c %T /dev/shm 2> /dev/null) || skip "no /dev/shm"
	[ "$fs" = tmpfs ] || [ "$fs" = ramfs ] || skip "/dev/shm is $fs, not tmpfs"
	RAMDISK=$(mktemp -d /dev/shm/docdex-test.XXXXXX)
}

# This host's name as the leftovers carry it.
host() {
	uname -n | sed 's/[^A-Za-z0-9.-]/_/g'
}

# A regular expression matching $1 literally.
literal() {
	printf '%s' "$1" | sed 's/[][\.*^$+?(){}|]/\\&/g'
}

# A corpus of 40 MB with its index: the RAM disk copy writes it in ten
# writes of 4 MiB, after the index's one.
big_corpus() {
	"$DX_SYNTH" --size 40M -o c.tsv
	dx index -q c.tsv
}

# A corpus of 1.7 MB with its index, queries and qrels.
small_corpus() {
	"$DX_SYNTH" --count 5000 -o c.tsv --queries q.tsv --qrels qrels.txt --nqueries 200
	dx index -q c.tsv
}

# Runs docdex ARGS... under strace, which sends signal $1 to it on entering
# its write number $2.  The signal is set to its default first, as a shell
# leaves it for a command in the foreground (a background job of a
# script has SIGINT and SIGQUIT ignored).  Leak checking cannot work under
# a tracer.
signalled_at_write() {
	local sig=$1 n=$2 dfl=()
	shift 2
	[ "$sig" = KILL ] || dfl=(--default-signal="$sig")
	# ThreadSanitizer's runtime writes once at start-up, before main.
	[ "$CHECKER" != tsan ] || n=$((n + 1))
	run --separate-stderr env "$NO_LEAK_CHECK" \
		env "${dfl[@]}" strace -o /dev/null -e trace=write \
		-e "inject=write:signal=$sig:when=$n" "$DOCDEX" "$@"
}

# Starts a process that lives until the test ends (teardown kills it); its
# id in $!.  Without bats's descriptor 3, which bats waits on.
keep_alive() {
	"$@" > /dev/null 2>&1 3>&- &
	KEEP_ALIVE+=($!)
}

@test "each signal that ends a process, landing in the RAM disk copy, removes the copy and exits 130" {
	needs_strace
	ramdisk_dir
	big_corpus
	local sig
	for sig in "${SIGNALS[@]}"; do
		# Its third write: the corpus is half copied.
		signalled_at_write "$sig" 3 pin-test --pin none --placement ramdisk --ramdisk "$RAMDISK" \
			--duration 30 --repeat 1 -q -f -o r.json c.tsv
		status_is 130 || fail "SIG$sig"
		equals "$stderr" "docdex pin-test: interrupted" || fail "SIG$sig"
		equals "$(ls -A "$RAMDISK")" "" || fail "SIG$sig left its copy"
		equals "$(ls -A tmp)" "" || fail "SIG$sig"
		[ ! -e r.json ] || fail "SIG$sig wrote a report"
	done
}

@test "each signal that ends a process, landing in the temporary corpus, removes it and exits 130" {
	needs_strace
	local sig
	for sig in "${SIGNALS[@]}"; do
		# The generated corpus is written a MiB at a time: its third
		# write is in the middle of its 17 MB.
		signalled_at_write "$sig" 3 bench --synthetic passages:50000 --duration 30 --repeat 1 \
			-q -o r.json
		status_is 130 || fail "SIG$sig"
		equals "$stderr" "docdex bench: interrupted" || fail "SIG$sig"
		equals "$(ls -A tmp)" "" || fail "SIG$sig left the temporary corpus"
		[ ! -e r.json ] || fail "SIG$sig wrote a report"
	done
	# The same for pin-test's, and for the index a corpus without one is
	# given in the temporary directory (its first write is the index's).
	signalled_at_write HUP 3 pin-test --pin none --placement disk --synthetic passages:50000 \
		--duration 30 --repeat 1 -q -f -o r.json
	status_is 130
	equals "$stderr" "docdex pin-test: interrupted"
	equals "$(ls -A tmp)" ""
	"$DX_SYNTH" --count 20000 -o c.tsv
	for sig in HUP USR1; do
		signalled_at_write "$sig" 1 bench --strategies mmap --duration 30 --repeat 1 -q -f -o r.json c.tsv
		status_is 130 || fail "SIG$sig"
		equals "$stderr" "docdex bench: interrupted" || fail "SIG$sig"
		equals "$(ls -A tmp)" "" || fail "SIG$sig left the temporary index"
	done
	[ ! -e c.tsv.ddx ]
}

@test "SIGINT while the synthetic corpus is written exits 130, not 1" {
	needs_strace
	signalled_at_write INT 3 bench --synthetic passages:50000 -q -f -o r.json
	status_is 130
	equals "$stderr" "docdex bench: interrupted"
	equals "$(ls -A tmp)" ""
}

@test "a signal ignored when docdex starts (nohup) stays ignored" {
	needs_strace
	big_corpus
	ramdisk_dir
	# SIGHUP ignored, as nohup leaves it: the run goes on to its end.
	run --separate-stderr env "$NO_LEAK_CHECK" \
		env --ignore-signal=HUP strace -o /dev/null -e trace=write -e inject=write:signal=HUP:when=3 \
		"$DOCDEX" pin-test --pin none --placement ramdisk --ramdisk "$RAMDISK" "${QUICK[@]}" -q \
		-o r.json c.tsv
	status_is 0
	check_report r.json --repeat 1 --expect none/ramdisk/warm/j1/t1=ok
	equals "$(ls -A "$RAMDISK")" ""
}

@test "SIGKILL in the RAM disk copy leaves it named after host and process; the next run sweeps it, never a live run's" {
	needs_strace
	ramdisk_dir
	big_corpus
	signalled_at_write KILL 3 pin-test --pin none --placement ramdisk --ramdisk "$RAMDISK" \
		--duration 30 --repeat 1 -q -f -o r.json c.tsv
	status_is 137
	local h left pid
	h=$(host)
	left=$(ls "$RAMDISK")
	[[ $left =~ ^docdex-ramdisk\.$(literal "$h")\.([0-9]+)\.[A-Za-z0-9]{6}$ ]] ||
		fail "left '$left', not docdex-ramdisk.$h.PID.XXXXXX"
	pid=${BASH_REMATCH[1]}
	if kill -0 "$pid" 2> /dev/null; then fail "process $pid is alive"; fi
	[ -f "$RAMDISK/$left/c.tsv.ddx" ]

	# What the sweep must keep: the copy of a live process of this host;
	# one whose process id is gone but which a live process holds locked
	# (a run in another pid namespace, where its id means nothing); one of
	# another host; names that are not a copy's.
	keep_alive sleep 1000
	local live=docdex-ramdisk.$h.$!.abcdef held=docdex-ramdisk.$h.$pid.ghijkl
	local other=docdex-ramdisk.elsewhere-$h.$pid.mnopqr odd=docdex-ramdisk.$h.$pid.stuvwxy
	mkdir "$RAMDISK/$live" "$RAMDISK/$held" "$RAMDISK/$other" "$RAMDISK/$odd"
	keep_alive bash -c 'exec 9< "$0" && flock 9 && exec sleep 1000' "$RAMDISK/$held"
	wait_until '! flock -n "$RAMDISK/$held" true'

	run --separate-stderr dx pin-test --pin none --placement ramdisk --ramdisk "$RAMDISK" \
		"${QUICK[@]}" -q -f -o r.json c.tsv
	status_is 0
	equals "$stderr" ""
	equals "$(ls "$RAMDISK" | sort)" "$(printf '%s\n' "$live" "$held" "$other" "$odd" | sort)"
	# With the lock let go, the held one goes too.
	kill "${KEEP_ALIVE[1]}"
	wait "${KEEP_ALIVE[1]}" 2> /dev/null || true
	run --separate-stderr dx pin-test --pin none --placement ramdisk --ramdisk "$RAMDISK" \
		"${QUICK[@]}" -q -f -o r.json c.tsv
	status_is 0
	equals "$(ls "$RAMDISK" | sort)" "$(printf '%s\n' "$live" "$other" "$odd" | sort)"
}

@test "SIGKILL in the temporary corpus leaves it named after host and process; the next run sweeps it, never a live run's" {
	needs_strace
	signalled_at_write KILL 3 bench --synthetic passages:50000 --duration 30 --repeat 1 -q -f -o r.json
	status_is 137
	local h left pid
	h=$(host)
	left=$(ls tmp)
	[[ $left =~ ^docdex\.$(literal "$h")\.([0-9]+)\.[A-Za-z0-9]{6}$ ]] ||
		fail "left '$left', not docdex.$h.PID.XXXXXX"
	pid=${BASH_REMATCH[1]}
	[ -f "tmp/$left/corpus.tsv" ]
	keep_alive sleep 1000
	local live=docdex.$h.$!.abcdef
	mkdir "tmp/$live" tmp/docdex.keep
	run --separate-stderr dx bench --synthetic passages:2000 --strategies mmap "${QUICK[@]}" -q -f -o r.json
	status_is 0
	equals "$(ls tmp | sort)" "$(printf '%s\n' "$live" docdex.keep | sort)"
	# --tmpdir is swept as $TMPDIR is.
	mkdir other
	mkdir "other/docdex.$h.$pid.zzzzzz"
	run --separate-stderr dx bench --synthetic passages:2000 --strategies mmap --tmpdir other \
		"${QUICK[@]}" -q -f -o r.json
	status_is 0
	equals "$(ls -A other)" ""
}

@test "a worker that cannot be forked fails its cell in one line, and no descriptor it never opened is closed" {
	needs_strace
	[ -f "${DX_FAIL_FORK-}" ] || fail "DX_FAIL_FORK must name the shim that make check builds (libfailfork.so)"
	small_corpus
	# fork works twice, then fails with EAGAIN: the third of four workers.
	run --separate-stderr env "$NO_LEAK_CHECK:verify_asan_link_order=0" \
		strace -f -o trace -e trace=close -E LD_PRELOAD="$DX_FAIL_FORK" -E FAIL_FORK_AFTER=2 \
		"$DOCDEX" bench --strategies mmap -j 4 "${QUICK[@]}" -q -f -o r.json c.tsv
	status_is 1
	# The clean-up of the two workers never started closed nothing.
	[ -s trace ]
	equals "$(grep -c 'close(0)' trace)" 0
	equals "$output" ""
	equals "$stderr" "docdex bench: a cell failed: 'mmap/j4/t1': cannot start worker 2: fork: resource temporarily unavailable"
	check_report r.json --repeat 1 --expect mmap/j4/t1=failed
	# pin-test forks once more, to ask for CUDA: its second worker fails.
	run --separate-stderr env "$NO_LEAK_CHECK:verify_asan_link_order=0" \
		strace -f -o trace -e trace=close -E LD_PRELOAD="$DX_FAIL_FORK" -E FAIL_FORK_AFTER=2 \
		"$DOCDEX" pin-test --pin none --placement disk -j 3 "${QUICK[@]}" -q -f -o r.json c.tsv
	status_is 1
	equals "$stderr" "docdex pin-test: a cell failed: 'none/disk/warm/j3/t1': cannot start worker 1: fork: resource temporarily unavailable"
	equals "$(grep -c 'close(0)' trace)" 0
	# With fork working, the same runs pass.
	run --separate-stderr env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		LD_PRELOAD="$DX_FAIL_FORK" "$DOCDEX" bench --strategies mmap -j 4 "${QUICK[@]}" -q -f -o r.json c.tsv
	status_is 0
}

# The files of the test's directory with their checksums (bats keeps a
# file of its own there while a command runs).
files() {
	find . -path ./tmp -prune -o -type f ! -name 'separate-stderr-*' -print0 | sort -z |
		xargs -0 md5sum
}

# Checks that docdex ARGS... refuses, in one line naming $1, and writes
# nothing: every file in the directory keeps its bytes, and none is added.
refused() {
	local subject=$1 cmd=$2
	shift 2
	local before
	before=$(files)
	run --separate-stderr dx "$cmd" "$@"
	status_is 1 || return 1
	equals "$output" "" || return 1
	equals "$(files)" "$before" || fail "$cmd $*: a file was written"
	equals "$(ls -A tmp)" "" || return 1
	equals "$stderr" "docdex $cmd: $subject"
}

@test "-o and --plot never replace the corpus, its index, a source, an input or each other" {
	small_corpus
	ln -s c.tsv link.tsv
	dx bench --strategies mmap "${QUICK[@]}" -q -f -o r.json c.tsv
	cp r.json b.json
	printf 'corpus: c.tsv\n' > exp.yaml
	local cmd own
	for cmd in bench pin-test; do
		[ "$cmd" = bench ] && own=(--strategies mmap) || own=(--pin none --placement disk)
		local reads="the output would replace a file this command reads"
		# The example of the issue: the corpus replaced by an SVG.
		refused "$reads: 'c.tsv'" "$cmd" --plot c.tsv c.tsv
		refused "$reads: 'c.tsv'" "$cmd" "${own[@]}" -o c.tsv c.tsv
		# The corpus through a link, its index, and the corpus named by
		# its index.
		refused "$reads: 'link.tsv'" "$cmd" "${own[@]}" -o link.tsv c.tsv
		refused "$reads: 'c.tsv.ddx'" "$cmd" "${own[@]}" --plot c.tsv.ddx c.tsv
		refused "$reads: 'c.tsv'" "$cmd" "${own[@]}" -o c.tsv c.tsv.ddx
		# The workload's inputs, the experiment file, --from, --baseline.
		refused "$reads: 'q.tsv'" "$cmd" "${own[@]}" --queries q.tsv --qrels qrels.txt -o q.tsv c.tsv
		refused "$reads: 'qrels.txt'" "$cmd" "${own[@]}" --queries q.tsv --qrels qrels.txt \
			--plot qrels.txt c.tsv
		refused "$reads: 'exp.yaml'" "$cmd" "${own[@]}" -c exp.yaml -o exp.yaml
		refused "$reads: 'b.json'" "$cmd" "${own[@]}" --baseline b.json -o b.json c.tsv
		# A baseline not there yet, named as the output: compared with
		# the report just written, it would pass.
		refused "$reads: 'new.json'" "$cmd" "${own[@]}" --baseline ./new.json -o new.json c.tsv
		refused "$reads: 'new.svg'" "$cmd" --from r.json --baseline new.svg --plot new.svg
		refused "$reads: 'r.json'" "$cmd" --from r.json -o r.json
		refused "$reads: './r.json'" "$cmd" --from r.json --plot ./r.json
		# The report and the plot in one file, there or not yet there.
		refused "the report and the plot would be the same file: 'b.json'" "$cmd" --from r.json \
			-o b.json --plot b.json
		refused "the report and the plot would be the same file: './new.json'" "$cmd" \
			"${own[@]}" -o new.json --plot ./new.json c.tsv
	done
	# A device is written through, not replaced: both may go there.  A
	# node of our own where this user may make one (root), so that a build
	# that renames over it replaces that, never the system's /dev/null.
	local dev=/dev/null
	if mknod null c 1 3 2>/dev/null; then
		dev=$PWD/null
	fi
	run --separate-stderr dx bench --from r.json -o "$dev" --plot "$dev"
	status_is 0
	equals "$stderr" ""
	[ -c "$dev" ]
}

@test "a synthetic corpus smaller than the run's depth of 100 is measured; one record is refused for triples" {
	run --separate-stderr dx bench --synthetic passages:50 "${QUICK[@]}" -q -f -o r.json
	status_is 0
	equals "$stderr" ""
	local s expect=()
	for s in memory stdio pread mmap gzip bgzf; do
		expect+=(--expect "$s/j1/t1=ok")
	done
	check_report r.json --repeat 1 "${expect[@]}"
	python3 -c 'import json, sys; sys.exit(json.load(open("r.json"))["params"]["records"] != 50)'
	run --separate-stderr dx pin-test --synthetic docs:2 --pin none --placement disk "${QUICK[@]}" \
		-q -o p.json
	status_is 0
	check_report p.json --repeat 1 --expect none/disk/warm/j1/t1=ok
	equals "$(ls -A tmp)" ""
	# A triple needs a negative besides its positive; random documents do not.
	run --separate-stderr dx bench --synthetic passages:1 "${QUICK[@]}" -q -f -o r.json
	status_is 2
	equals "$stderr" "docdex bench: a triple needs 2 records or more, its negative besides its positive: 'passages:1' (see docdex bench --help)"
	run --separate-stderr dx bench --synthetic passages:1 --workload random --strategies mmap \
		"${QUICK[@]}" -q -f -o r.json
	status_is 0
}

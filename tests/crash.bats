#!/usr/bin/env bats
# Crash safety: what a command that is killed, or that fails to write, leaves
# behind.  Every file docdex writes goes through a temporary file renamed
# over the target once whole (lib/atomic_file.c), so whatever happens the
# target is absent, exactly its earlier content or exactly the new one, and
# no temporary file is left in its directory; a reader is never handed a
# part.  SIGKILL at delays spread over an index build and over a BGZF
# rewrite, and (under strace) on entering each system call that writes the
# index; a write that fails with EFBIG (a file-size limit: docdex ignores
# SIGXFSZ) for every command that writes a file, and with ENOSPC (/dev/full
# as stdout, a small tmpfs), each with status 1 and one line on stderr
# naming the file and the reason.  Directories are checked by an exact
# listing, not only their target.  No timing is asserted: the delays are
# fractions of a build timed in the test.

load helpers

teardown() {
	if [ -d "$BATS_TEST_TMPDIR/full" ] && mountpoint -q "$BATS_TEST_TMPDIR/full"; then
		umount "$BATS_TEST_TMPDIR/full"
	fi
}

# What a directory holds, hidden files included, one a line, in byte order.
files_in() {
	LC_ALL=C ls -A "$1"
}

fail() {
	printf '%s\n' "$*" >&2
	return 1
}

# Runs docdex under a file-size limit of $1 KiB, in a child shell so that
# bats itself is not limited.
limited() {
	local kib=$1
	shift
	run --separate-stderr bash -c 'ulimit -f "$1" && shift && exec "$0" "$@"' "$DOCDEX" "$kib" "$@"
}

# Microseconds as seconds for sleep: 1234567 -> 1.234567.
seconds() {
	printf '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000))
}

# The time in microseconds.
now_us() {
	local t=$EPOCHREALTIME
	echo "${t//[.,]/}"
}

# Starts docdex with the arguments after $1 in the background, SIGKILLs it
# after $1 seconds and sets rc to its exit status: 137 when the kill came
# first, 0 when it was done by then.  Either way it printed nothing.  A
# kill that lands between a writer's link to a temporary name and its
# rename over the target leaves that name, .NAME.tmp.HOST.PID.N in d/, for
# the next writer to remove (tested below, where strace kills it there);
# the name of the killed process is removed here, so that the caller sees
# the files that matter.
killed_after() {
	local delay=$1
	shift
	env "$NO_LEAK_CHECK" "$DOCDEX" "$@" > kill.out 2> kill.err 3>&- &
	local pid=$!
	sleep "$delay"
	kill -KILL "$pid" 2> /dev/null || true
	rc=0
	wait "$pid" || rc=$?
	equals "$(cat kill.out kill.err)" "" || fail "killed after $delay s: output above"
	[ "$rc" -eq 0 ] || [ "$rc" -eq 137 ] || fail "killed after $delay s: exit status $rc"
	if [ "$rc" -eq 137 ]; then
		rm -f d/.*".tmp.$(uname -n).$pid."*
	fi
}

@test "SIGKILL during index leaves the earlier index or the whole new one, never a part, and no temporary file but the name of a kill between link and rename" {
	mkdir d
	# The kills are spread over the build's own time, whatever it is: a
	# build of 16 MB takes 0.15 s here, and under a sanitizer a quarter of
	# that corpus still takes longer (0.9-1.1 s under ThreadSanitizer,
	# where 16 MB took 3.2 s, and this test a minute alone and four
	# beside another suite: the longest of make tsan).
	local size=16M
	! under_sanitizer || size=4M
	"$DX_SYNTH" --size "$size" -o d/c.tsv
	gzip -1 d/c.tsv
	local doc
	doc=$(gzip -dc d/c.tsv.gz | awk -F'\t' '$1 == 2345 { print; exit }')
	[[ $doc == 2345$'\t'?* ]]
	# The earlier index: an access point every MiB, the default.
	dx index -q d/c.tsv.gz
	cp d/c.tsv.gz.ddx old.ddx
	# The new one, every 64 KiB: a larger index, built once whole to
	# compare with (the same bytes under another name in the same
	# directory), and timed to spread the kills from its start to beyond
	# its end.
	local us
	us=$(now_us)
	dx index -q --span 64K -o d/new.ddx d/c.tsv.gz
	us=$(($(now_us) - us))
	mv d/new.ddx new.ddx
	if cmp -s old.ddx new.ddx; then fail "--span 64K made the same index"; fi
	local both
	both=$(printf '%s\n' c.tsv.gz c.tsv.gz.ddx)
	local pct delay rc interrupted=0
	# The delays, as percentages of the build's time: a fixed list, so a
	# failure names one that can be tried again.
	for pct in 0 5 15 30 45 60 75 90 110 150; do
		delay=$(seconds $((us * pct / 100)))
		cp old.ddx d/c.tsv.gz.ddx
		killed_after "$delay" index -q --span 64K d/c.tsv.gz
		if cmp -s d/c.tsv.gz.ddx old.ddx; then
			[ "$rc" -eq 137 ] || fail "killed after $delay s: the build succeeded, the index is the earlier one"
			interrupted=$((interrupted + 1))
		else
			cmp -s d/c.tsv.gz.ddx new.ddx ||
				fail "killed after $delay s: the index is neither the earlier one nor the new one"
		fi
		equals "$(files_in d)" "$both" || fail "killed after $delay s: files in d/ above"
		equals "$(dx get d/c.tsv.gz 2345)" "$doc" || fail "killed after $delay s: get 2345 above"
	done
	# The kill at 0 s at least came before the end of the build.
	[ "$interrupted" -ge 1 ]

	# No earlier index: none, or the whole new one.
	interrupted=0
	for pct in 0 20 50 80 110 150; do
		delay=$(seconds $((us * pct / 100)))
		rm -f d/c.tsv.gz.ddx
		killed_after "$delay" index -q --span 64K d/c.tsv.gz
		if [ ! -e d/c.tsv.gz.ddx ]; then
			[ "$rc" -eq 137 ] || fail "killed after $delay s: the build succeeded, no index"
			equals "$(files_in d)" c.tsv.gz || fail "killed after $delay s: files in d/ above"
			interrupted=$((interrupted + 1))
		else
			cmp -s d/c.tsv.gz.ddx new.ddx || fail "killed after $delay s: the index is not the new one"
			equals "$(files_in d)" "$both" || fail "killed after $delay s: files in d/ above"
			equals "$(dx get d/c.tsv.gz 2345)" "$doc" || fail "killed after $delay s: get 2345 above"
		fi
	done
	[ "$interrupted" -ge 1 ]

	# Uninterrupted, over the earlier index, the rebuild writes the new one.
	cp old.ddx d/c.tsv.gz.ddx
	run --separate-stderr dx index -q --span 64K d/c.tsv.gz
	status_is 0
	equals "$output$stderr" ""
	cmp d/c.tsv.gz.ddx new.ddx
	equals "$(files_in d)" "$both"
	equals "$(dx get d/c.tsv.gz 2345)" "$doc"
}

@test "SIGKILL during index --bgzf leaves the earlier BGZF file and index, or the new file whole" {
	# The rewrite writes its file from start to end, so a kill comes in
	# the middle of the writing, where a file written in place would be
	# cut short.
	mkdir d
	"$DX_SYNTH" --size 8M -o d/c.tsv
	"$DX_SYNTH" --count 2000 --seed 4 -o d/e.tsv
	local old_doc new_doc
	old_doc=$(awk -F'\t' '$1 == 1234 { print; exit }' d/e.tsv)
	new_doc=$(awk -F'\t' '$1 == 1234 { print; exit }' d/c.tsv)
	[[ $old_doc == 1234$'\t'?* && $new_doc == 1234$'\t'?* && $old_doc != "$new_doc" ]]
	# The new file, written whole to compare with, and timed; its index
	# holds the file's modification time, so only its size is compared.
	local us
	us=$(now_us)
	dx index -q --bgzf d/out.gz --level 1 d/c.tsv
	us=$(($(now_us) - us))
	mv d/out.gz new.gz
	mv d/out.gz.ddx new.ddx
	# The earlier ones, of the other corpus, put back with their time.
	dx index -q --bgzf d/out.gz --level 1 d/e.tsv
	mv d/out.gz old.gz
	mv d/out.gz.ddx old.ddx
	local all
	all=$(printf '%s\n' c.tsv e.tsv out.gz out.gz.ddx)
	local pct delay rc states=
	for pct in 0 10 25 40 55 70 85 100 120 160; do
		delay=$(seconds $((us * pct / 100)))
		cp -p old.gz d/out.gz
		cp -p old.ddx d/out.gz.ddx
		killed_after "$delay" index -q -f --bgzf d/out.gz --level 1 d/c.tsv
		equals "$(files_in d)" "$all" || fail "killed after $delay s: files in d/ above"
		if cmp -s d/out.gz old.gz; then
			# Killed while rewriting: both as they were.
			[ "$rc" -eq 137 ] || fail "killed after $delay s: the rewrite succeeded, out.gz is the earlier one"
			cmp -s d/out.gz.ddx old.ddx || fail "killed after $delay s: out.gz as it was, its index not"
			equals "$(dx get d/out.gz 1234)" "$old_doc" || fail "killed after $delay s: get 1234 above"
			states+=r
		elif ! cmp -s d/out.gz new.gz; then
			fail "killed after $delay s: out.gz is neither the earlier file nor the new one"
		elif cmp -s d/out.gz.ddx old.ddx; then
			# Killed while indexing the new file: the earlier index
			# refuses it.
			[ "$rc" -eq 137 ] || fail "killed after $delay s: the build succeeded, the index is the earlier one"
			run --separate-stderr dx get d/out.gz 1234
			status_is 1 || fail "killed after $delay s"
			equals "$output" "" || fail "killed after $delay s"
			[[ $stderr == "docdex get: "*"changed since it was indexed"* && $stderr != *$'\n'* ]] ||
				fail "killed after $delay s: get with the earlier index: $stderr"
			states+=i
		else
			equals "$(stat -c %s d/out.gz.ddx)" "$(stat -c %s new.ddx)" ||
				fail "killed after $delay s: the new index is not whole"
			equals "$(dx get d/out.gz 1234)" "$new_doc" || fail "killed after $delay s: get 1234 above"
		fi
	done
	# The kill at 0 s at least came before the rewrite of 8 MB was done.
	[[ $states == *r* ]]
}

# Runs the rebuild of d/c.tsv.gz.ddx with access points every 64 KiB under
# strace, which SIGKILLs it on entering the system call $1 (strace's
# syntax: NAME, or NAME:when=N for its Nth call).  Leak checking, which
# cannot work under a tracer, is off.
rebuild_killed_at() {
	run --separate-stderr env "$NO_LEAK_CHECK" \
		strace -f -o /dev/null -e trace=write,fsync,linkat,rename -e "inject=$1:signal=KILL" \
		"$DOCDEX" index -q --span 64K d/c.tsv.gz
	status_is 137 || fail "killed at $1: it did not get there"
	equals "$stderr" "" || fail "killed at $1"
}

# A corpus d/c.tsv.gz of 4 MB, its index with the default span in
# d/c.tsv.gz.ddx and old.ddx, the one with --span 64K in new.ddx, and doc,
# its record 2345.
small_gzip_corpus() {
	command -v strace > /dev/null || skip "no strace"
	strace -f -o /dev/null true 2> /dev/null || skip "strace cannot trace here (ptrace refused)"
	mkdir d
	"$DX_SYNTH" --size 4M -o d/c.tsv
	gzip -1 d/c.tsv
	dx index -q d/c.tsv.gz
	cp d/c.tsv.gz.ddx old.ddx
	dx index -q --span 64K -o d/new.ddx d/c.tsv.gz
	mv d/new.ddx new.ddx
	if cmp -s old.ddx new.ddx; then fail "--span 64K made the same index"; fi
	doc=$(gzip -dc d/c.tsv.gz | awk -F'\t' '$1 == 2345 { print; exit }')
	[[ $doc == 2345$'\t'?* ]]
}

@test "SIGKILL at each system call that writes the index leaves the earlier index or the new one, and no temporary file" {
	# The index is written at the end of the build, in milliseconds, where
	# a kill at a time is unlikely to fall: strace kills the build on
	# entering each system call of the writing instead.
	local doc
	small_gzip_corpus
	local both point
	both=$(printf '%s\n' c.tsv.gz c.tsv.gz.ddx)
	# The header, the record table in the middle, the flush to disk, the
	# link of the unnamed file to a temporary name: the earlier index
	# stays.
	local points="write:when=1 write:when=8 fsync:when=1 linkat"
	# Under valgrind its own writes at start-up come first: docdex's
	# writes cannot be told apart, its later calls can.
	[ "$CHECKER" != valgrind ] || points="fsync:when=1 linkat"
	for point in $points; do
		cp old.ddx d/c.tsv.gz.ddx
		rebuild_killed_at "$point"
		cmp -s d/c.tsv.gz.ddx old.ddx || fail "killed at $point: the index is not the earlier one"
		equals "$(files_in d)" "$both" || fail "killed at $point: files in d/ above"
		equals "$(dx get d/c.tsv.gz 2345)" "$doc" || fail "killed at $point: get 2345 above"
		# No earlier index: none.
		rm d/c.tsv.gz.ddx
		rebuild_killed_at "$point"
		equals "$(files_in d)" c.tsv.gz || fail "killed at $point, no earlier index: files in d/ above"
	done
	# The flush of the directory, after the rename: the new index.
	cp old.ddx d/c.tsv.gz.ddx
	rebuild_killed_at fsync:when=2
	cmp -s d/c.tsv.gz.ddx new.ddx || fail "killed after the rename: the index is not the new one"
	equals "$(files_in d)" "$both"
	equals "$(dx get d/c.tsv.gz 2345)" "$doc"
}

@test "SIGKILL between the link to a temporary name and the rename: the next writer removes the file left" {
	# With no file at the target, the finished index takes its name in one
	# step (the linkat above).  Over an earlier one it needs a temporary
	# name, .NAME.tmp.HOST.PID.N, renamed over the target: a process killed
	# between the two leaves that name, until the next writer of the target
	# removes it, its process being gone.
	local doc
	small_gzip_corpus
	rebuild_killed_at rename
	cmp -s d/c.tsv.gz.ddx old.ddx || fail "killed at rename: the index is not the earlier one"
	local left
	left=$(files_in d | grep -v '^c\.tsv\.gz\(\.ddx\)\?$')
	[[ $left == .c.tsv.gz.ddx.tmp.?*.[0-9]*.[0-9]* && $left != *$'\n'* ]] ||
		fail "killed at rename: left in d/: $left"
	cmp -s "d/$left" new.ddx || fail "the file left is not the new index"
	equals "$(dx get d/c.tsv.gz 2345)" "$doc"
	# Another process's name of the same shape, alive: kept.
	sleep 60 &
	local alive=$!
	cp new.ddx "d/.c.tsv.gz.ddx.tmp.$(uname -n).$alive.7"
	# Another host's (a name that starts with this one's): kept, its
	# process ids mean nothing here.
	local other=".c.tsv.gz.ddx.tmp.$(uname -n).5.999999.1"
	cp new.ddx "d/$other"
	dx index -q --span 64K d/c.tsv.gz
	kill "$alive"
	cmp -s d/c.tsv.gz.ddx new.ddx || fail "the rebuild did not write the new index"
	equals "$(files_in d)" "$(LC_ALL=C sort <<< "$(printf '%s\n' ".c.tsv.gz.ddx.tmp.$(uname -n).$alive.7" "$other" c.tsv.gz c.tsv.gz.ddx)")"
}

@test "a file-size limit (EFBIG) fails every writer with one line, leaving the earlier file or none" {
	mkdir out tmp
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	export DOCDEX_CUDART=$BATS_TEST_TMPDIR/no-libcudart.so
	"$DX_SYNTH" --count 5000 -o c.tsv --queries q.tsv --qrels qrels.txt --run run.txt --nqueries 200
	dx index -q c.tsv
	local quick=(--duration 0.1 --warmup 0 --repeat 1 -j 1)
	local doc
	doc=$(dx get c.tsv 4321)

	# index -o: an earlier index stays as it was, and serves.
	dx index -q -o out/c.ddx c.tsv
	cp out/c.ddx old.ddx
	"$DX_SYNTH" --count 6000 --seed 3 -o big.tsv
	limited 8 index -q -o out/c.ddx big.tsv
	status_is 1
	equals "$stderr" "docdex index: cannot write: 'out/c.ddx': file too large"
	cmp out/c.ddx old.ddx
	equals "$(files_in out)" c.ddx
	equals "$(dx get out/c.ddx 4321)" "$doc"
	# ... and with none, none appears.
	limited 8 index -q -o out/big.ddx big.tsv
	status_is 1
	equals "$stderr" "docdex index: cannot write: 'out/big.ddx': file too large"
	equals "$(files_in out)" c.ddx

	# The other writers, each with no earlier file, then with one.
	local target line
	while IFS='|' read -r target line; do
		local kib=8 args
		case $target in
		out/c.gz) args=(index -q -f --bgzf out/c.gz c.tsv) ;;
		out/t.tsv) args=(sample -f --queries q.tsv --qrels qrels.txt --run run.txt --count 2000 -o out/t.tsv c.tsv) ;;
		out/r.json) kib=1; args=(bench -f --strategies mmap "${quick[@]}" -q -o out/r.json c.tsv) ;;
		out/p.svg) kib=1; args=(bench -f --strategies mmap "${quick[@]}" -q --plot out/p.svg c.tsv) ;;
		out/pr.json) kib=1; args=(pin-test -f --pin none --placement disk --cache warm "${quick[@]}" -q -o out/pr.json c.tsv) ;;
		esac
		limited "$kib" "${args[@]}"
		status_is 1 || fail "${args[*]}, no earlier file"
		equals "$stderr" "$line" || fail "${args[*]}, no earlier file"
		equals "$(files_in out)" c.ddx || fail "${args[*]}, no earlier file"
		echo earlier > "$target"
		limited "$kib" "${args[@]}"
		status_is 1 || fail "${args[*]}, over an earlier file"
		equals "$stderr" "$line" || fail "${args[*]}, over an earlier file"
		equals "$(cat "$target")" earlier || fail "${args[*]}: the earlier file changed"
		equals "$(files_in out)" "$(printf '%s\n' "${target#out/}" c.ddx | LC_ALL=C sort)" ||
			fail "${args[*]}, over an earlier file"
		rm "$target"
	done <<-'EOF'
	out/c.gz|docdex index: cannot write: 'out/c.gz': file too large
	out/t.tsv|docdex sample: cannot write output: 'out/t.tsv': file too large
	out/r.json|docdex bench: cannot write: 'out/r.json': file too large
	out/p.svg|docdex bench: cannot write: 'out/p.svg': file too large
	out/pr.json|docdex pin-test: cannot write: 'out/pr.json': file too large
	EOF
	equals "$(files_in tmp)" ""
	# Without the limit the rewrite succeeds: the failures above are the
	# limit's.
	dx index -q --bgzf out/c.gz c.tsv
	equals "$(dx get out/c.gz 4321)" "$doc"
}

@test "a full output device (/dev/full) fails get and sample with one line" {
	[ -w /dev/full ] || fail "no /dev/full on this machine"
	"$DX_SYNTH" --kind documents --count 300 -o d.tsv --queries q.tsv --qrels qrels.txt --run run.txt --nqueries 20
	dx index -q d.tsv
	local id
	id=$(cut -f1 d.tsv | sed -n 7p)
	# A short record and whole documents (1 KiB or more: handed to writev
	# by reference).
	local args
	for args in "get --field id d.tsv $id" "get d.tsv $id" "get --random 50 --seed 1 d.tsv" \
		"sample --queries q.tsv --qrels qrels.txt --run run.txt --count 50 d.tsv"; do
		# shellcheck disable=SC2086 # the words of args are the arguments
		run --separate-stderr bash -c '"$0" "$@" > /dev/full' "$DOCDEX" $args
		status_is 1 || fail "$args"
		equals "$stderr" "docdex ${args%% *}: cannot write output: 'stdout': no space left on device" || fail "$args"
	done
}

@test "a full filesystem (ENOSPC on a 256 KiB tmpfs) leaves the earlier index or none, and its space free" {
	[ "$(id -u)" = 0 ] || skip "mounting a tmpfs needs root"
	mkdir full
	mount -t tmpfs -o size=256k tmpfs full 2> mount.err || skip "cannot mount a tmpfs here: $(cat mount.err)"
	"$DX_SYNTH" --count 1000 -o c.tsv
	"$DX_SYNTH" --count 50000 --seed 5 -o big.tsv
	# The earlier index, which fits; big.tsv's, 400 KB, does not.
	dx index -q -o full/c.ddx c.tsv
	cp full/c.ddx old.ddx
	local doc free
	doc=$(awk -F'\t' '$1 == 777' c.tsv)
	[[ $doc == 777$'\t'?* ]]
	free=$(stat -f -c %a full)

	run --separate-stderr dx index -q -o full/c.ddx big.tsv
	status_is 1
	equals "$output" ""
	equals "$stderr" "docdex index: cannot write: 'full/c.ddx': no space left on device"
	cmp full/c.ddx old.ddx
	equals "$(files_in full)" c.ddx
	equals "$(dx get full/c.ddx 777)" "$doc"

	run --separate-stderr dx index -q -o full/big.ddx big.tsv
	status_is 1
	equals "$stderr" "docdex index: cannot write: 'full/big.ddx': no space left on device"
	equals "$(files_in full)" c.ddx

	run --separate-stderr dx index -q --bgzf full/big.gz big.tsv
	status_is 1
	equals "$stderr" "docdex index: cannot write: 'full/big.gz': no space left on device"
	equals "$(files_in full)" c.ddx

	# Nothing hidden holds space: the filesystem is as free as before.
	equals "$(stat -f -c %a full)" "$free"
	# And an index that fits is still written there.
	run --separate-stderr dx index -q -o full/c2.ddx c.tsv
	status_is 0
	cmp full/c2.ddx old.ddx
}

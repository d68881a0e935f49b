# helpers.bash: shared by the bats suites.  Every test runs in its own
# $BATS_TEST_TMPDIR against the binary that `make check` just built.

bats_require_minimum_version 1.5.0

DOCDEX=${DOCDEX:-$BATS_TEST_DIRNAME/../docdex}
DX_SYNTH=${DX_SYNTH:-$BATS_TEST_DIRNAME/dx-synth}
DX_POKE=${DX_POKE:-$BATS_TEST_DIRNAME/ddx-poke}
DATA=$BATS_TEST_DIRNAME/data

# The checker docdex runs under, empty for a plain build: asan or tsan (make
# asan and make tsan set their options), or valgrind (make valgrind runs
# docdex through tests/valgrind.sh, given the binary in DX_RUNNER_PROGRAM).
# A test that one makes too slow, or too big for a memory limit, skips
# itself with the reason: [ -z "$CHECKER" ] || skip "... under $CHECKER".
if [ -n "${ASAN_OPTIONS-}" ]; then
	CHECKER=asan
elif [ -n "${TSAN_OPTIONS-}" ]; then
	CHECKER=tsan
elif [ -n "${DX_RUNNER_PROGRAM-}" ]; then
	CHECKER=valgrind
else
	CHECKER=
fi

# The environment of a docdex run under strace, or killed at a moment of
# the test's choosing: LeakSanitizer's check at exit stops the process
# through a tracer (ptrace) of its own, which cannot work under strace, and
# which a SIGKILL during the check leaves behind to write "Unable to get
# registers from thread" on the killed process's stderr.  An ASan build
# checks no leaks there.  Used as env "$NO_LEAK_CHECK" [strace ...] "$DOCDEX" ...
NO_LEAK_CHECK="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# Whether docdex was built under a sanitizer (make asan, make tsan pass
# their flags as DX_CFLAGS): a test whose point does not need its full
# size there takes a smaller one, as a sanitized build runs ten times as
# slow.
under_sanitizer() {
	[[ ${DX_CFLAGS-} == *-fsanitize=* ]]
}

setup() {
	cd "$BATS_TEST_TMPDIR" || exit 1
}

dx() {
	"$DOCDEX" "$@"
}

# Fails with both streams shown unless the last `run` exited with $1.
status_is() {
	if [ "$status" -ne "$1" ]; then
		echo "exit status $status, expected $1" >&2
		echo "stdout: $output" >&2
		echo "stderr: ${stderr-}" >&2
		return 1
	fi
}

# Fails unless two values are equal, showing both.
equals() {
	if [ "$1" != "$2" ]; then
		printf 'got:      %s\nexpected: %s\n' "$1" "$2" >&2
		return 1
	fi
}

# Waits until the shell condition $1 holds, looking every 0.1 s for up to
# 60 s: long enough for a process slow to start under a sanitizer or on a
# loaded machine, and the wait ends as soon as it holds.  Fails after,
# naming the condition.
wait_until() {
	local i
	for i in $(seq 600); do
		eval "$1" && return 0
		sleep 0.1
	done
	echo "still not so after 60 s: $1" >&2
	return 1
}

# Flips one byte of a file at an offset (xor 0x20).
flip_byte() {
	local file=$1 at=$2 byte
	byte=$(od -An -tu1 -j "$at" -N1 "$file" | tr -d ' ')
	printf "$(printf '\\%03o' $((byte ^ 32)))" |
		dd of="$file" bs=1 seek="$at" count=1 conv=notrunc status=none
}

# Copies test data files into the test's directory (writable).
use_data() {
	local f
	for f in "$@"; do
		cp "$DATA/$f" . && chmod u+w "$f"
	done
}

# Checks a bench or pin-test JSON report field by field (check_report.py).
check_report() {
	python3 "$BATS_TEST_DIRNAME/check_report.py" "$@"
}

# Skips the test where this process cannot make a memory cgroup (not root,
# no memory controller): --limit-by cgroup says so in one line.
memcg_or_skip() {
	run --separate-stderr dx bench --limit-by cgroup --synthetic passages:200 --strategies mmap \
		"${QUICK[@]}" -q -o probe.json
	if [ "$status" -ne 0 ]; then
		[[ $stderr == "docdex bench: --limit-by cgroup: no memory cgroup can be made here: "* ]]
		skip "no memory cgroup here: $stderr"
	fi
}

# The docdex-bench.* groups in the memory cgroup hierarchy (v1's memory
# controller, else cgroup2).
memcg_groups() {
	local mnt
	mnt=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)memory(,|$)/ {print $5; exit}' /proc/self/mountinfo)
	[ -n "$mnt" ] || mnt=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
	find "$mnt" -maxdepth 12 -type d -name 'docdex-bench.*' 2> /dev/null | sort
}

# Whether docdex was built with the sanitizer $1 (address, thread).
sanitized_with() {
	dx --version | grep -q -- "-fsanitize=[a-z,]*$1"
}

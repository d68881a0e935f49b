#!/usr/bin/env bash
# run-suites.sh: runs the suites of make check, several at once, and ends
# with what each took and one line of totals.
#
#   tests/run-suites.sh [-j JOBS] [-s 'SUITE...'] [-t TIMES] [-c NAME CMD]... [FILE.bats]...
#
# Each FILE.bats is a suite run by bats; each -c NAME CMD a suite that is
# the shell command CMD, counted by the TAP lines it prints (ok N ...,
# not ok N ..., ok N ... # skip) or, failing those, by pytest's last line
# (N passed, N skipped in Ts), or else as one test passed or failed by its
# exit status.  Up to JOBS suites (default 2) run at a time, each in the
# order of its own tests; those named by -s (a file's name, tests/x.bats or
# x.bats, or a command's NAME) share something outside their tests'
# directories, and run one at a time.  A suite's output is held until it is
# done, then shown whole, so that suites running together never interleave.
# TIMES, where given, keeps each suite's last time, so that the next run
# starts the longest ones first.  A suite that fails does not stop the
# others; the exit status is 1 where any failed.
set -u

jobs=2
serial=
times_file=
names=()
cmds=()

while [ $# -gt 0 ]; do
	case $1 in
	-j) jobs=$2; shift 2 ;;
	-s) serial=$2; shift 2 ;;
	-t) times_file=$2; shift 2 ;;
	-c) names+=("$2"); cmds+=("$3"); shift 3 ;;
	-*) echo "run-suites.sh: unknown option $1" >&2; exit 2 ;;
	*) names+=("$1"); cmds+=("bats --tap $(printf '%q' "$1")"); shift ;;
	esac
done
case $jobs in '' | *[!0-9]* | 0) echo "run-suites.sh: -j wants a count, not '$jobs'" >&2; exit 2 ;; esac
[ ${#names[@]} -gt 0 ] || { echo "run-suites.sh: no suite to run" >&2; exit 2; }

# Each suite in a process group of its own (job control), so that an
# interrupted run can stop all that a suite started, its background
# processes included; the terminal's ^C comes to this script alone.
set -m
logs=$(mktemp -d "${TMPDIR:-/tmp}/run-suites.XXXXXX") || exit 2
trap 'rm -rf "$logs"' EXIT
# Interrupted, the suites running are stopped, and the summary of those
# done is still shown.
interrupted=
trap 'interrupted=1' INT TERM

is_serial() {
	local s
	for s in $serial; do
		[ "$1" = "$s" ] || [ "$1" = "tests/$s" ] || [ "${1##*/}" = "$s" ] && return 0
	done
	return 1
}

# The last time of suite $1 in the times file, 0 where unknown.
last_time() {
	local t=0
	[ -n "$times_file" ] && [ -r "$times_file" ] &&
		t=$(awk -F '\t' -v n="$1" '$1 == n {t = $2} END {print t + 0}' "$times_file")
	echo "${t:-0}"
}

# Suites in the order they start: the longest last time first (the short
# ones fill in at the end), ties in the order given.
order=()
while IFS=$'\t' read -r _ i; do
	order+=("$i")
done < <(for i in "${!names[@]}"; do printf '%s\t%s\n' "$(last_time "${names[$i]}")" "$i"; done |
	sort -t $'\t' -k1,1nr -k2,2n -s)

now() { date +%s.%N; }
start=$(now)
declare -A job_of_pid started
running=0
serial_busy=
status=()
seconds=()

# Counts of suite $1's tests from its log: passed failed skipped.
count() {
	local log=$logs/$1.log rc=$2 p f s
	if grep -qE '^(not )?ok [0-9]+' "$log"; then
		p=$(grep -cE '^ok [0-9]+' "$log")
		s=$(grep -cE '^ok [0-9]+.* # skip( |$)' "$log")
		f=$(grep -cE '^not ok [0-9]+' "$log")
		p=$((p - s))
	elif grep -qE '^(=+ )?[0-9]+ (passed|failed|skipped|errors?|deselected).* in [0-9.]+s' "$log"; then
		local last
		last=$(grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|errors?|deselected).* in [0-9.]+s' "$log" | tail -n 1)
		p=$(grep -oE '[0-9]+ passed' <<< "$last" | cut -d' ' -f1)
		f=$(grep -oE '[0-9]+ (failed|errors?)' <<< "$last" | awk '{n += $1} END {print n + 0}')
		s=$(grep -oE '[0-9]+ skipped' <<< "$last" | cut -d' ' -f1)
		p=${p:-0} f=${f:-0} s=${s:-0}
	elif [ "$rc" -eq 0 ]; then
		p=1 f=0 s=0
	else
		p=0 f=1 s=0
	fi
	# A suite that failed with no test failed (a crash, a bad plan, an
	# error outside the tests) counts one failure.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	echo "$p $f $s"
}

launch() {
	local i=$1
	started[$i]=$(now)
	bash -c "${cmds[$i]}" > "$logs/$i.log" 2>&1 < /dev/null &
	job_of_pid[$!]=$i
	running=$((running + 1))
	is_serial "${names[$i]}" && serial_busy=$i
}

# Sets next to the suite that may start now, taken from those waiting:
# the first in order, unless it is serial and a serial one runs.
next_job() {
	local k i
	for k in "${!order[@]}"; do
		i=${order[$k]}
		if is_serial "${names[$i]}" && [ -n "$serial_busy" ]; then
			continue
		fi
		unset 'order[k]'
		order=("${order[@]}")
		next=$i
		return 0
	done
	return 1
}

finish() {
	local i=$1 rc=$2 secs
	secs=$(awk -v a="${started[$i]}" -v b="$(now)" 'BEGIN {printf "%.0f", b - a}')
	status[$i]=$rc
	seconds[$i]=$secs
	running=$((running - 1))
	[ "$serial_busy" != "$i" ] || serial_busy=
	local verdict=ok
	[ "$rc" -eq 0 ] || verdict="FAILED (exit status $rc)"
	echo "# ==== [$((done_count + 1))/$total] ${names[$i]}: $verdict, $secs s"
	cat "$logs/$i.log"
}

total=${#names[@]}
done_count=0
while [ "$done_count" -lt "$total" ] && [ -z "$interrupted" ]; do
	while [ "$running" -lt "$jobs" ] && [ ${#order[@]} -gt 0 ]; do
		next_job || break
		launch "$next"
	done
	finished=
	wait -n -p finished
	rc=$?
	[ -n "${finished-}" ] || continue
	finish "${job_of_pid[$finished]}" "$rc"
	done_count=$((done_count + 1))
done

# Interrupted: the suites still running are stopped (a TERM may have
# come to this script alone).
if [ -n "$interrupted" ]; then
	for pid in "${!job_of_pid[@]}"; do
		[ -n "${status[${job_of_pid[$pid]}]-}" ] || kill -TERM -- "-$pid" 2> /dev/null
	done
	wait
fi

# The summary: each suite run, its result, counts and time, longest first.
passed=0 failed=0 skipped=0 bad=0
echo
echo "# ==== summary ($jobs at a time)"
printf '%-34s %-7s %6s %6s %6s %6s\n' suite result passed failed skipped seconds
rows=
for i in "${!names[@]}"; do
	[ -n "${status[$i]-}" ] || continue
	read -r p f s <<< "$(count "$i" "${status[$i]}")"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	r=ok
	[ "${status[$i]}" -eq 0 ] || { r=FAILED; bad=$((bad + 1)); }
	rows+=$(printf '%s\t%-34s %-7s %6d %6d %6d %6d' "${seconds[$i]}" "${names[$i]}" "$r" "$p" "$f" "$s" "${seconds[$i]}")$'\n'
done
printf '%s' "$rows" | sort -t $'\t' -k1,1nr -s | cut -f2-

# This run's times, and the last known of the suites it did not run.
if [ -n "$times_file" ]; then
	{
		for i in "${!names[@]}"; do
			[ -n "${seconds[$i]-}" ] && printf '%s\t%s\n' "${names[$i]}" "${seconds[$i]}"
		done
		[ -r "$times_file" ] && cat "$times_file"
	} | awk -F '\t' '!seen[$1]++' > "$times_file.new" && mv "$times_file.new" "$times_file"
fi

for i in "${!names[@]}"; do
	if [ -z "${status[$i]-}" ]; then
		echo "interrupted, no result: ${names[$i]}"
		bad=$((bad + 1))
	fi
done
elapsed=$(awk -v a="$start" -v b="$(now)" 'BEGIN {printf "%.0f", b - a}')
echo "$passed passed, $failed failed, $skipped skipped; ${#names[@]} suites, $bad failed, in $elapsed s"
[ "$bad" -eq 0 ] && [ "$failed" -eq 0 ]

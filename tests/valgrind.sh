#!/bin/sh
# make valgrind: runs one program under valgrind's memcheck.
# usage: valgrind.sh PROGRAM [ARG...]
#    or, standing in for a program (DOCDEX in the bats suites):
#        DX_RUNNER_PROGRAM=PROGRAM valgrind.sh [ARG...]
#
# An invalid read or write, a use of an uninitialised value, or a leak
# makes the status 89, which no test expects (asan uses 86 and 87, tsan 88).
# Leaks are definite, indirect and "possible" ones (a block pointed to only
# past its start): docdex frees what it allocates, so a block left at exit
# with no pointer to its start is one it forgot.  Blocks still reachable
# (glibc's own) are not leaks.  Forked processes (the workers of bench and
# pin-test, which free before _exit) are checked as well, as memcheck
# follows fork; exec'd ones are not traced (docdex execs none).
#
# A clean run prints nothing.  With DX_VALGRIND_LOGS set to a directory,
# what valgrind has to say about a process goes to a file there instead of
# the program's stderr, which the tests read: NAME.PID.PID.log, where NAME
# is the bats file and test number with the first argument (hostile-1.index)
# or the program, the first PID the process started and the second the one
# reported (itself, or a worker it forked).  make valgrind shows the logs
# that are not empty, which also catches an error in a process whose status
# a test does not look at.
#
# This script writes nothing and starts no other process before valgrind,
# whose process id is its own: a test that signals, kills or traces the
# process it started reaches valgrind and the program (a tracer sees
# valgrind's own system calls too).
set -eu
if [ -n "${DX_RUNNER_PROGRAM-}" ]; then
	prog=$DX_RUNNER_PROGRAM
else
	prog=$1
	shift
fi
log=
if [ -n "${DX_VALGRIND_LOGS-}" ]; then
	if [ -n "${BATS_TEST_FILENAME-}" ]; then
		name=${BATS_TEST_FILENAME##*/}
		name=${name%.bats}-${BATS_TEST_NUMBER-0}
	else
		name=${prog##*/}
	fi
	case ${1-} in
	'' | -* | *[!a-z-]*) ;;
	*) name=$name.$1 ;;
	esac
	log=--log-file=$DX_VALGRIND_LOGS/$name.$$.%p.log
fi
exec valgrind ${log:+"$log"} --quiet --error-exitcode=89 --trace-children=no --vgdb=no \
	--leak-check=full --show-leak-kinds=definite,indirect,possible \
	--errors-for-leak-kinds=definite,indirect,possible --track-origins=yes \
	--num-callers=30 "$prog" "$@"

/*
 * fail_fork.c: an LD_PRELOAD shim that makes fork() fail, for tests of
 * what a command does when the machine refuses it another process (the
 * process limit, ulimit -u, or no memory for the page tables).
 *
 *   FAIL_FORK_AFTER=N   the first N calls of fork() in the process work;
 *                       every later one fails with EAGAIN, as the kernel's
 *                       does at the process limit.  Unset: fork() works.
 *
 * Built as a shared object: $(B)/tests/libfailfork.so.  Under
 * AddressSanitizer, which wants to be first among the libraries, the test
 * sets ASAN_OPTIONS=verify_asan_link_order=0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

pid_t fork(void)
{
	/* The count of calls is this process's: a child starts with the
	 * parent's, and docdex's workers do not fork. */
	static unsigned long calls;
	const char *after = getenv("FAIL_FORK_AFTER");
	if (after && *after && calls++ >= strtoul(after, NULL, 10)) {
		errno = EAGAIN;
		return -1;
	}
	pid_t (*real_fork)(void) = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
	if (!real_fork) {
		errno = ENOSYS;
		return -1;
	}
	return real_fork();
}

/* signals.c: the flag that the signals ending a process set (see signals.h). */
#include <signal.h>
#include <stddef.h>

#include "signals.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/*
 * The signals sent to end a process, by a terminal, a shell, a batch
 * scheduler or a resource limit (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 * SIGUSR1, SIGUSR2, the timers' SIGALRM, SIGVTALRM and SIGPROF, SIGXCPU,
 * SIGPWR), stop the work as SIGINT does: what the command made is removed
 * (a temporary corpus, a copy on a RAM disk, a half-written file) and it
 * exits 130.  SIGINT and SIGTERM are caught always; the others only where
 * docdex found them at their default: one ignored (nohup's SIGHUP, a
 * background job's SIGQUIT) stays ignored, and one handled (a profiler's
 * SIGPROF) stays handled.  Not caught: the faults of the process itself
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP), SIGPIPE and
 * SIGXFSZ (ignored in main), SIGKILL and SIGSTOP (which cannot be).
 */
void cli_catch_signals(void)
{
	static const int always[] = { SIGINT, SIGTERM };
	static const int unless_set[] = {
		SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU,
#ifdef SIGPWR
		SIGPWR,
#endif
	};
	struct sigaction sa = { .sa_handler = on_signal }, old;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof always / sizeof *always; i++)
		sigaction(always[i], &sa, NULL);
	for (size_t i = 0; i < sizeof unless_set / sizeof *unless_set; i++)
		if (sigaction(unless_set[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			sigaction(unless_set[i], &sa, NULL);
}

int cli_interrupted(void)
{
	return interrupted;
}

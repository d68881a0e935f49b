/*
 * guard.c: the SIGBUS handler of dx_sigbus_guard_install and the
 * per-thread stack of guarded calls it jumps back to (see guard.h).
 */
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <ucontext.h>
#include <string.h>

#include "err.h"
#include "guard.h"

/* The innermost guarded call of this thread, or NULL.  SIGBUS from a
 * mapping fault is delivered to the thread that faulted, so the handler
 * finds its own thread's guard here. */
static _Thread_local dx__guard *top;

static struct sigaction previous;
static int installed;

void dx__guard_push(dx__guard *g)
{
	g->outer = top;
	/* The handler may read top as soon as it is set: g whole first. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	top = g;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void dx__guard_pop(dx__guard *g)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	top = g->outer;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

int dx__guard_failed(dx_err *err)
{
	/* Worded as docdex has always said it, the file not named: the fault
	 * could be in the index or in any source. */
	return dx__fail(err, DX_ESTALE, 0, "",
	                "a corpus or index file could not be read where it was mapped: it was cut short "
	                "while in use (overwritten in place), or the disk failed");
}

/* Not ours: what would have happened without the guard.  A handler found
 * installed runs as it would have; the default action (or an ignored
 * SIGBUS, which a fault cannot honour) is restored and the faulting
 * instruction run again, so that the process ends by SIGBUS as before;
 * a SIGBUS sent by kill is raised again. */
static void pass_on(int sig, siginfo_t *si, void *uc)
{
	if (previous.sa_flags & SA_SIGINFO) {
		if (previous.sa_sigaction)
			previous.sa_sigaction(sig, si, uc);
		return;
	}
	if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
		return;
	}
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGBUS, &dfl, NULL);
	if (si->si_code <= 0)
		raise(SIGBUS);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	dx__guard *g = top;
	if (g && ((g->c && dx__corpus_owns(g->c, si->si_addr)) || (g->ix && dx__index_owns(g->ix, si->si_addr)))) {
		top = g->outer;
		/* The mask of the faulting code, as returning would restore it:
		 * the guard's sigsetjmp saved none (a system call a read), and the
		 * handler runs with SIGBUS blocked (more under a sanitizer, whose
		 * handler calls this one). */
		pthread_sigmask(SIG_SETMASK, &((ucontext_t *)uc)->uc_sigmask, NULL);
		siglongjmp(g->jmp, 1);
	}
	pass_on(sig, si, uc);
}

int dx_sigbus_guard_install(dx_err *err)
{
	if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL))
		return 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &previous) < 0) {
		__atomic_store_n(&installed, 0, __ATOMIC_RELEASE);
		return dx__fail_sys(err, "SIGBUS", "cannot install the signal handler");
	}
	return 0;
}

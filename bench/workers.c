/*
 * workers.c: forked benchmark workers and their parent.  Each worker
 * talks to the parent through two pipes: on `res` it sends 'R' once set
 * up, then 'D' and its dxb_worker_result; on `ctl` the parent sends 'G' to
 * start, and closes it to let the worker exit, after reading the memory
 * of every worker.  A worker dies with its parent (PR_SET_PDEATHSIG), so
 * an interrupted or killed benchmark leaves no process behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileutil.h"
#include "dxbench.h"

typedef struct child {
	pid_t pid;
	int res, ctl;             /* the parent's ends of the pipes */
	int ready, done;
} child;


static int read_all(int fd, void *p, size_t n)
{
	char *c = p;
	while (n) {
		ssize_t r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

struct child_pipes { int res, ctl; };

/* In the worker: says it is ready, and waits for the start. */
static int child_ready(void *ctx)
{
	struct child_pipes *s = ctx;
	char go = 0;
	if (dx__write_full(s->res, "R", 1) < 0 || read_all(s->ctl, &go, 1) < 0)
		return -1;
	return go == 'G' ? 0 : -1;
}

/* In the worker: sends the result, and stays alive, memory and all, until
 * the parent has read it and closes the pipe. */
static void child_done(void *ctx, const dxb_worker_result *r)
{
	struct child_pipes *s = ctx;
	char c;
	if (dx__write_full(s->res, "D", 1) < 0 || dx__write_full(s->res, r, sizeof *r) < 0)
		_exit(1);
	while (read(s->ctl, &c, 1) > 0)
		;
}

/* In the worker: the signals that stop the parent cleanly (the command
 * catches them all with SIGINT's handler) end the worker at once, the
 * parent removing what there is to remove. */
static void default_signals(void)
{
	struct sigaction parent, sa;
	if (sigaction(SIGINT, NULL, &parent) < 0 || parent.sa_handler == SIG_DFL ||
	    parent.sa_handler == SIG_IGN)
		return;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
		    sa.sa_handler == parent.sa_handler)
			signal(sig, SIG_DFL);
}

static void __attribute__((noreturn))
child_main(const dxb_workload_opts *o, unsigned i, unsigned n, int res, int ctl, pid_t parent)
{
	double t0 = dxb_now();
	struct child_pipes s = { res, ctl };
	dxb_workload_hooks hooks = { child_ready, child_done, &s };
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	default_signals();
	dxb_worker_result *r = calloc(1, sizeof *r);
	if (!r)
		_exit(1);
	dx_err err;
	if (o->memcg && dxb_memcg_enter(o->memcg, &err) < 0) {
		/* A 'D' before the 'R': the parent reports the set-up failed. */
		r->code = err.code;
		dx_describe(&err, r->msg, sizeof r->msg);
		child_done(&s, r);
		_exit(1);
	}
	dxb_workload_run(o, i, n, t0, &hooks, r);
	free(r);                  /* for valgrind, which checks workers too */
	_exit(0);
}

static void stop_all(child *ch, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (ch[i].pid > 0)
			kill(ch[i].pid, SIGKILL);
	for (unsigned i = 0; i < n; i++) {
		if (ch[i].pid > 0)
			while (waitpid(ch[i].pid, NULL, 0) < 0 && errno == EINTR)
				;
		ch[i].pid = 0;
	}
}

/* Why worker i could not be started: "cannot start worker 3: fork:
 * resource temporarily unavailable", strerror in lower case as in every
 * message. */
static void sys_why(char *why, size_t whysz, unsigned i, const char *call, int e)
{
	dx_err err = { .sys = e };
	snprintf(err.what, sizeof err.what, "cannot start worker %u: %s", i, call);
	dx_describe(&err, why, whysz);
}

/* Whether the caller asks to stop (an interrupt). */
static int stopped(const dxb_workload_opts *o)
{
	return o->stop && o->stop();
}

/* Waits until every worker has sent `want` ('R' or 'D'), reading its
 * result after a 'D'.  A worker that sends 'D' early failed to set up. */
static int wait_for(const dxb_workload_opts *o, child *ch, unsigned n, char want,
                    dxb_workers_result *res, char *why, size_t whysz)
{
	struct pollfd *pf = calloc(n, sizeof *pf);
	int rc = DXB_WORKERS_OK;
	if (!pf) {
		snprintf(why, whysz, "out of memory");
		return DXB_WORKERS_FAILED;
	}
	for (;;) {
		unsigned waiting = 0;
		for (unsigned i = 0; i < n; i++) {
			int pending = want == 'R' ? !ch[i].ready && !ch[i].done : !ch[i].done;
			pf[i] = (struct pollfd){ .fd = pending ? ch[i].res : -1, .events = POLLIN };
			waiting += pending;
		}
		if (!waiting)
			break;
		if (stopped(o)) {
			rc = DXB_WORKERS_INTERRUPTED;
			break;
		}
		if (poll(pf, n, 100) < 0 && errno != EINTR) {
			dx_err err = { .sys = errno };
			snprintf(err.what, sizeof err.what, "poll");
			dx_describe(&err, why, whysz);
			rc = DXB_WORKERS_FAILED;
			break;
		}
		for (unsigned i = 0; i < n && rc == DXB_WORKERS_OK; i++) {
			char tag;
			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (read_all(ch[i].res, &tag, 1) < 0 ||
			    (tag == 'D' && read_all(ch[i].res, &res->w[i], sizeof res->w[i]) < 0)) {
				snprintf(why, whysz, "worker %u died", i);
				rc = DXB_WORKERS_FAILED;
			} else if (tag == 'R') {
				ch[i].ready = 1;
			} else {
				ch[i].done = 1;
				if (!res->w[i].ok) {
					snprintf(why, whysz, "worker %u: %s", i, res->w[i].msg);
					res->code = res->w[i].code;
					rc = DXB_WORKERS_FAILED;
				}
			}
		}
		if (rc != DXB_WORKERS_OK)
			break;
	}
	free(pf);
	return rc;
}

/* Reaps the workers; a worker killed by a signal (the OOM killer's
 * SIGKILL) or exiting with an error fails the run.  A worker that does
 * not end (stuck in a read of a failing disk) is waited for until an
 * interrupt, after which stop_all kills it. */
static int reap(const dxb_workload_opts *o, child *ch, unsigned n, char *why, size_t whysz)
{
	int rc = DXB_WORKERS_OK;
	for (unsigned i = 0; i < n; i++) {
		int st = 0;
		while (waitpid(ch[i].pid, &st, 0) < 0 && errno == EINTR)
			if (stopped(o))
				return DXB_WORKERS_INTERRUPTED;
		ch[i].pid = 0;
		if (rc == DXB_WORKERS_OK && WIFSIGNALED(st)) {
			snprintf(why, whysz, "worker %u killed by signal %d%s", i, WTERMSIG(st),
			         WTERMSIG(st) == SIGKILL ? " (out of memory?)" : "");
			rc = DXB_WORKERS_FAILED;
		} else if (rc == DXB_WORKERS_OK && WEXITSTATUS(st) != 0) {
			snprintf(why, whysz, "worker %u exited with status %d", i, WEXITSTATUS(st));
			rc = DXB_WORKERS_FAILED;
		}
	}
	return rc;
}

int dxb_workers_run(const dxb_workload_opts *o, unsigned n, dxb_workers_result *res, char *why, size_t whysz)
{
	child *ch = calloc(n, sizeof *ch);
	int rc = DXB_WORKERS_OK;
	pid_t parent = getpid();
	memset(res, 0, sizeof *res);
	res->n = n;
	res->w = calloc(n, sizeof *res->w);
	res->mem = calloc(n, sizeof *res->mem);
	why[0] = '\0';
	if (!ch || !res->w || !res->mem) {
		snprintf(why, whysz, "out of memory");
		rc = DXB_WORKERS_FAILED;
		goto out;
	}
	/* Every worker has no pipes until it is started: the clean-up after
	 * a failed start closes only those that were opened (calloc's 0 is
	 * standard input). */
	for (unsigned i = 0; i < n; i++)
		ch[i].res = ch[i].ctl = -1;
	fflush(NULL);
	for (unsigned i = 0; i < n; i++) {
		int rp[2], cp[2];
		if (stopped(o)) {
			rc = DXB_WORKERS_INTERRUPTED;
			goto out;
		}
		if (pipe2(rp, O_CLOEXEC) < 0) {
			sys_why(why, whysz, i, "pipe", errno);
			rc = DXB_WORKERS_FAILED;
			goto out;
		}
		if (pipe2(cp, O_CLOEXEC) < 0) {
			sys_why(why, whysz, i, "pipe", errno);
			close(rp[0]);
			close(rp[1]);
			rc = DXB_WORKERS_FAILED;
			goto out;
		}
		pid_t pid = fork();
		if (pid == 0) {
			close(rp[0]);
			close(cp[1]);
			/* The ends of the earlier workers' pipes are not this
			 * worker's: closing them lets those workers see EOF. */
			for (unsigned k = 0; k < i; k++) {
				close(ch[k].res);
				close(ch[k].ctl);
			}
			child_main(o, i, n, rp[1], cp[0], parent);
		}
		close(rp[1]);
		close(cp[0]);
		ch[i].res = rp[0];
		ch[i].ctl = cp[1];
		if (pid < 0) {
			sys_why(why, whysz, i, "fork", errno);
			rc = DXB_WORKERS_FAILED;
			goto out;
		}
		ch[i].pid = pid;
	}
	if ((rc = wait_for(o, ch, n, 'R', res, why, whysz)) != DXB_WORKERS_OK)
		goto out;
	for (unsigned i = 0; i < n; i++)
		if (dx__write_full(ch[i].ctl, "G", 1) < 0) {
			snprintf(why, whysz, "worker %u died", i);
			rc = DXB_WORKERS_FAILED;
			goto out;
		}
	if ((rc = wait_for(o, ch, n, 'D', res, why, whysz)) != DXB_WORKERS_OK)
		goto out;
	for (unsigned i = 0; i < n; i++) {
		dx_err err;
		if (dxb_mem_usage_of(ch[i].pid, &res->mem[i], &err) < 0) {
			dx_describe(&err, why, whysz);
			rc = DXB_WORKERS_FAILED;
			goto out;
		}
	}
	dxb_meminfo_read(&res->machine);
	for (unsigned i = 0; i < n; i++) {
		close(ch[i].ctl);
		ch[i].ctl = -1;
	}
	rc = reap(o, ch, n, why, whysz);
out:
	if (ch) {
		stop_all(ch, n);
		for (unsigned i = 0; i < n; i++) {
			if (ch[i].res >= 0)
				close(ch[i].res);
			if (ch[i].ctl >= 0)
				close(ch[i].ctl);
		}
	}
	free(ch);
	if (rc != DXB_WORKERS_OK)
		dxb_workers_result_free(res);
	return rc;
}

void dxb_workers_result_free(dxb_workers_result *res)
{
	free(res->w);
	free(res->mem);
	res->w = NULL;
	res->mem = NULL;
}

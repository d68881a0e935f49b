/*
 * signals.h: the signals sent to end a process (SIGINT and SIGTERM always;
 * SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU,
 * SIGPWR when at their default) set a flag instead of killing the process,
 * so that long work can stop cleanly and exit EXIT_INTERRUPTED.  The flag
 * is the only state the commands share.  A forked worker resets those with
 * SIGINT's handler to their default.
 */
#ifndef DX_SIGNALS_H
#define DX_SIGNALS_H

void cli_catch_signals(void);
/* Whether one of them came since cli_catch_signals. */
int cli_interrupted(void);

#endif

/*
 * guard.h: reads of a mapped file that survive its being cut short
 * (internal).  A file truncated under its mapping, or a disk that fails a
 * read of a mapped page, raises SIGBUS at the reading instruction.  Once
 * the caller has installed dx_sigbus_guard_install's handler, a public
 * function that reads an index's or a corpus's mapping runs its work under
 * DX__GUARDED: a SIGBUS on this thread at an address within those mappings
 * jumps back to it, and it returns DX_ESTALE.  Without the handler the
 * guard costs a sigsetjmp and two stores.
 */
#ifndef DX_GUARD_H
#define DX_GUARD_H

#include <setjmp.h>

#include "docdex.h"

typedef struct dx__guard {
	sigjmp_buf jmp;
	struct dx__guard *outer;   /* the guard of the call this one is within */
	const dx_corpus *c;        /* whose mappings it covers (either may be NULL) */
	const dx_index *ix;
} dx__guard;

void dx__guard_push(dx__guard *g);
void dx__guard_pop(dx__guard *g);
/* Fills err for a fault under g (which the handler has popped). */
int dx__guard_failed(dx_err *err);

/* Whether addr lies in one of the mappings of ix, of c (its index's too). */
int dx__index_owns(const dx_index *ix, const void *addr);
int dx__corpus_owns(const dx_corpus *c, const void *addr);

/*
 * rc = call, unless a SIGBUS in the mappings of c or ix interrupts it:
 * rc = DX_ESTALE then.  The signal mask is not saved (sigsetjmp's 0, no
 * system call): the handler sets back the one of the code it interrupts.  What call had allocated when it faulted is its own business:
 * the functions guarded hold no lock and leave their object usable.
 */
#define DX__GUARDED(rc, corpus, index, err, call)                                  \
	do {                                                                       \
		dx__guard g_;                                                      \
		g_.c = (corpus);                                                   \
		g_.ix = (index);                                                   \
		if (sigsetjmp(g_.jmp, 0) == 0) {                                   \
			dx__guard_push(&g_);                                       \
			(rc) = (call);                                             \
			dx__guard_pop(&g_);                                        \
		} else {                                                           \
			(rc) = dx__guard_failed(err);                              \
		}                                                                  \
	} while (0)

#endif

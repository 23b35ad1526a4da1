/* ticker.h — the library's one background thread, as a timer other layers register work
 * with (ticker.c; snmalloc's ticker, jemalloc's background_thread): hole purging's sweep and
 * the parked purges' due times (heap/), the TLABs' scavenge, the idle CPUs' sweep and the
 * free count (cache/). Key `purge_thread` (named for its first user): off, no thread. */
#ifndef HL_TICKER_H
#define HL_TICKER_H

#include "base.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* Both kinds are registered at init, before the first malloc slow path, and run on the
 * thread only, holding no lock of the library; a few of each (one registered again keeps
 * its place). A registration is what makes the thread wanted.
 *
 * A watch: run() is called each time the thread wakes to something due, while *due (a time
 * on CLOCK_MONOTONIC, ns; UINT64_MAX: nothing) has come; it checks *due itself, as the slow
 * paths that share its work do. Whoever moves *due earlier calls hl_ticker_wake. */
void hl_ticker_watch(_Atomic uint64_t *due, void (*run)(void));
/* Periodic: fn() every `ms`, from the thread's start to the process's end; on the thread
 * alone, so a job may do what no program thread's slow path may (cpucache.c's idle sweep
 * pins the thread to each CPU in turn). */
void hl_ticker_every(void (*fn)(void), long ms);
/* A watched due moved to `at` (stored before): the thread, sleeping past it, is woken. */
void hl_ticker_wake(uint64_t at);

/* The thread is started by the first malloc slow path holding no lock of the library
 * (hl_ticker_poll: pthread_create allocates, so neither under a heap's lock nor in malloc's
 * bootstrap), whether or not anything is due yet: a program's frees may park memory and
 * then leave the threads idle, so the thread must be there before; and never by a free,
 * since the C library frees with its own locks held (a dead thread's TLS blocks under the
 * stack cache's lock, which pthread_create takes: a free that started the thread there
 * deadlocked the thread churn under decay). One load and a branch once decided (running,
 * failed, or unused: purge_thread = off, or nothing registered). */
enum { HL_TICKER_NONE, HL_TICKER_STARTING, HL_TICKER_RUNNING, HL_TICKER_FAILED,
       HL_TICKER_UNUSED };
extern _Atomic int hl_ticker_state;
void hl_ticker_start(void);
static inline void hl_ticker_poll(void)
{
    if (hl_unlikely(atomic_load_explicit(&hl_ticker_state, memory_order_relaxed) ==
                    HL_TICKER_NONE))
        hl_ticker_start();
}
/* How many times the thread has woken so far (a signal or its deadline): test_purge's count. */
size_t hl_ticker_wakes(void);
void hl_ticker_fork(int phase);          /* fork.c: a thread being started, and the child's */

#pragma GCC visibility pop

#endif

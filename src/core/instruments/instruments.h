/* instruments.h — instruments/'s face: the observers of every block handed out and given back
 * (the census, the trace, the heap log) and `checks = on`. They reach the layers below through
 * the hooks those offer (docs/architecture.md's Hooks table); only front/ calls them. */
#ifndef HL_INSTRUMENTS_H
#define HL_INSTRUMENTS_H

#include "base.h"

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* ---- observe.c, census.c, trace.c: observers of every block handed out and given back ------ */

/* True when census or trace is on; interpose.c then calls the hooks below. Off: one branch. */
extern bool hl_observing;
void hl_observe_init(void);             /* after config; sets hl_observing */
void hl_observe_alloc(void *p, size_t request, size_t usable, size_t align);
void hl_observe_free(void *p, size_t usable);
void hl_observe_at_exit(void);          /* trace: write the file */

/* census.c and trace.c, used by observe.c. */
bool hl_census_init(void);
void hl_census_alloc(struct hl_thread *t, void *p, size_t usable);
void hl_census_free(void *p, size_t usable);
void hl_census_touch(struct hl_thread *t, const void *object);
uint64_t hl_census_foreign_blocks(struct hl_thread *t, const void *start, size_t bytes);
void hl_census_thread_exit(struct hl_thread *t);
void hl_census_fork(int phase);
bool hl_trace_init(const char *path);
void hl_trace_alloc(struct hl_thread *t, void *p, size_t request, size_t usable, size_t align);
void hl_trace_free(struct hl_thread *t, void *p, size_t usable);
void hl_trace_write(void);
/* heaplog.c (heap_log): sets heap.h's hl_heap_observer; writes the file at exit. */
bool hl_heaplog_init(const char *path);
void hl_heaplog_write(void);

/* ---- checks.c: `checks = on`, double free and foreign-pointer detection for every strategy -- */

/* hl_check_init (init.c, after the config) sets hl_checking from the `checks` key; when it is
 * on, interpose.c records every block handed out and checks every free, and a double free or
 * a free of a pointer hoardlab never returned prints one line naming it and aborts. */
extern bool hl_checking;
void hl_check_init(void);
void hl_check_alloc(void *p);
void hl_check_free(void *p);
void hl_checks_fork(int phase);

#pragma GCC visibility pop

#endif

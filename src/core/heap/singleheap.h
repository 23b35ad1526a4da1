/* singleheap.h — the uC++ single heap (singleheap.c), for the strategies built on it. */
#ifndef HL_SINGLEHEAP_H
#define HL_SINGLEHEAP_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)     /* internal, as base.h's */

/* per_list_locks: false = one heap lock (serial), true = a lock per free list (concurrent). */
int    hl_sh_init(bool per_list_locks);
HL_DECLARE_PAIR(hl_sh_malloc, hl_sh_free)        /* malloc and free, built four ways (stats.h) */
void  *hl_sh_memalign(size_t align, size_t size);
size_t hl_sh_usable_size(const void *p);
void   hl_sh_fork(int phase);             /* HL_FORK_*: the heap lock, then the list locks */

#pragma GCC visibility pop

#endif

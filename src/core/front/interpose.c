/* interpose.c — the malloc family, checked once here for every strategy. The common call of
 * malloc and free is front.h's, inline; this file is everything else: a thread's first call
 * (init, registration), the bootstrap arena, size 0, overflow, huge sizes (NULL + ENOMEM),
 * alignment rules (EINVAL), large objects, routing of other pointers through the page map,
 * realloc, and the checks and observers, which see every call while they are on.
 * A strategy sees only well-formed requests: 0 < size <= hl_large_threshold. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "front.h"
#include "cache.h"
#include "instruments.h"

void *(*hl_entry_malloc_fn)(size_t size) = hl_malloc_slow;
void (*hl_entry_free_fn)(void *p) = hl_free_slow;

/* After init: the chosen paths' entries where the exported malloc and free jump, and their
 * way back here (the layers below the front do not name it). Done by the first call that
 * finds them not yet open, from any thread: each writes the same words, whole (a call that
 * reads the old entry just takes the slow path). */
static void open_entries(void)
{
    if (HL_WORD_LOAD(hl_entry_malloc_fn) == hl_paths->malloc_entry) return;
    __atomic_store_n(&hl_entry_exit_malloc, hl_malloc_slow, __ATOMIC_RELEASE);
    __atomic_store_n(&hl_entry_exit_free, hl_free_slow, __ATOMIC_RELEASE);
    __atomic_store_n(&hl_entry_free_fn, hl_paths->free_entry, __ATOMIC_RELEASE);
    __atomic_store_n(&hl_entry_malloc_fn, hl_paths->malloc_entry, __ATOMIC_RELEASE);
}

/* Checks or observers on: every call takes the slow path, which shows it to them. */
static bool watching(void) { return hl_checking || hl_observing; }

/* True once init is done and the calling thread is registered, with its fast path open. */
static bool ready(void)
{
    if (hl_unlikely(atomic_load_explicit(&hl_init_state, memory_order_acquire) != 2)) {
        hl_init_maybe(false);
        if (atomic_load(&hl_init_state) != 2) return false;
    }
    open_entries();
    struct hl_thread *t = hl_self();
    if (!t->tlab_bins) t->tlab_bins = hl_tlab_none;   /* before any path can reach a TLAB */
    if (!t->span && t->state == 1 && !watching()) {
        t->base = atomic_load_explicit(&hl_arena_base, memory_order_relaxed);
        t->span = atomic_load_explicit(&hl_arena_span, memory_order_relaxed);
        t->small_max = hl_large_threshold;
    }
    return true;
}

static size_t usable_of(const void *p, enum hl_owner owner)
{
    if (owner == HL_OWNER_STRATEGY) return hl_active->usable_size(p);
    if (owner == HL_OWNER_LARGE) return hl_large_usable(p);
    return hl_bootstrap_owns(p) ? hl_bootstrap_usable(p) : 0;
}

/* After init: a block of size bytes (> 0) aligned to align (a power of two, or 0 for the
 * default), from the strategy or as a large object; zero: a large object comes zeroed. */
static void *obtain(size_t size, size_t request, size_t align, bool zero)
{
    void *p;
    enum hl_owner owner = HL_OWNER_STRATEGY;
    if (align <= HL_ALIGN && size <= hl_large_threshold) {
        p = hl_front_malloc_fn(size);
    } else if (align > HL_ALIGN && hl_active->memalign && size <= hl_large_threshold &&
               align <= hl_large_threshold - size) {
        p = hl_active->memalign(align, size);
    } else {
        owner = HL_OWNER_LARGE;
        size_t a = align > HL_ALIGN ? align : HL_ALIGN;
        p = zero ? hl_large_alloc(size, a) : hl_large_alloc_dirty(size, a);
        if (p) hl_stats_malloc(p, hl_large_usable(p));
    }
    if (hl_unlikely(!p)) { errno = ENOMEM; return NULL; }
    if (hl_unlikely(hl_checking)) hl_check_alloc(p);
    if (hl_unlikely(hl_observing)) hl_observe_alloc(p, request, usable_of(p, owner), align);
    return p;
}

void *hl_malloc_slow(size_t size)
{
    if (hl_unlikely(!ready())) return hl_bootstrap_alloc(size, HL_ALIGN);
    return obtain(size ? size : 1, size, 0, false);
}

void hl_free_slow(void *p)
{
    if (!p) return;
    if (hl_unlikely(hl_checking)) hl_check_free(p);
    enum hl_owner owner = hl_pagemap_get(p);
    if (owner == HL_OWNER_NONE) {
        if (hl_bootstrap_owns(p)) return;         /* bootstrap blocks are simply never reused */
        hl_say("free(%p): not a block hoardlab handed out (strategy %s); aborting", p,
               hl_active ? hl_active->name : "none yet");
        abort();
    }
    ready();                                      /* registers a thread whose first call this is */
    if (hl_unlikely(hl_observing)) hl_observe_free(p, usable_of(p, owner));
    if (owner == HL_OWNER_STRATEGY) {
        hl_front_free_fn(p);
    } else {
        hl_stats_free(hl_large_usable(p));
        hl_large_free(p);
    }
}

void *hl_malloc(size_t size) { return hl_front_malloc(size); }
void hl_free(void *p) { hl_front_free(p); }

void *hl_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) { errno = ENOMEM; return NULL; }
    if (total > hl_large_threshold && ready())    /* cleared by large.c only where reused */
        return obtain(total, total, 0, true);
    void *p = hl_front_malloc(total);
    /* The bootstrap arena is fresh, zeroed pages. */
    if (p && !hl_bootstrap_owns(p)) memset(p, 0, total);
    return p;
}

size_t hl_malloc_usable_size(const void *p)
{
    return p ? usable_of(p, hl_pagemap_get(p)) : 0;
}

/* realloc keeps the block when the new size fits its usable size and would waste under half
 * of it: growth within the block, and shrinking by less than half (within its size class for
 * the power-of-two tables; geometric classes are closer than that, so such a shrink keeps
 * the block one or more classes above the new size's, never more than twice it). A smaller
 * request moves to a block of its own size, so that shrinking frees memory. */
static bool realloc_in_place(size_t size, size_t usable)
{
    return size <= usable && size > usable / 2;
}

/* One size lookup per call: the block's usable size, through the strategy for its own blocks
 * (the arena test, inline) and the page map otherwise. Kept in place: no other work. Moved:
 * malloc, copy of the smaller size, free. */
void *hl_realloc(void *p, size_t size)
{
    if (!p) return hl_front_malloc(size);
    if (size == 0) { hl_front_free(p); return NULL; }      /* as glibc does */
    enum hl_owner owner = hl_arena_owns(p) ? HL_OWNER_STRATEGY : hl_pagemap_get(p);
    size_t old = usable_of(p, owner);
    if (realloc_in_place(size, old)) {
        if (hl_unlikely(hl_checking)) { hl_check_free(p); hl_check_alloc(p); }  /* live? */
        return p;
    }
    if (owner == HL_OWNER_LARGE && size > hl_large_threshold && !hl_observing) {
        /* Grown or shrunk by the kernel (mremap), without a copy where it can. */
        if (hl_unlikely(hl_checking)) hl_check_free(p);
        ready();
        hl_stats_free(old);
        void *q = hl_large_realloc(p, size);
        hl_stats_malloc(q ? q : p, hl_large_usable(q ? q : p));
        if (hl_unlikely(hl_checking)) hl_check_alloc(q ? q : p);
        return q;
    }
    void *q = hl_front_malloc(size);
    if (!q) return NULL;                                   /* the old block stays intact */
    memcpy(q, p, size < old ? size : old);
    hl_front_free(p);
    return q;
}

void *hl_reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) { errno = ENOMEM; return NULL; }
    return hl_realloc(p, total);
}

/* align: a power of two. */
static void *aligned(size_t align, size_t size)
{
    if (hl_unlikely(!ready())) return hl_bootstrap_alloc(size, align);
    if (align <= HL_ALIGN) return hl_front_malloc(size);
    return obtain(size ? size : 1, size, align, false);
}

int hl_posix_memalign(void **out, size_t align, size_t size)
{
    if (!hl_is_pow2(align) || align % sizeof(void *)) return EINVAL;
    int saved = errno;
    void *p = aligned(align, size);
    if (!p) return ENOMEM;
    errno = saved;
    *out = p;
    return 0;
}

void *hl_aligned_alloc(size_t align, size_t size)
{
    if (!hl_is_pow2(align)) { errno = EINVAL; return NULL; }
    return aligned(align, size);
}

void *hl_memalign(size_t align, size_t size)
{
    if (align > (SIZE_MAX >> 1) + 1) { errno = EINVAL; return NULL; }
    size_t a = HL_ALIGN;
    while (a < align) a <<= 1;                             /* glibc rounds up, too */
    return aligned(a, size);
}

void *hl_valloc(size_t size) { return aligned(HL_PAGE, size); }

void *hl_pvalloc(size_t size)
{
    if (size > SIZE_MAX - HL_PAGE) { errno = ENOMEM; return NULL; }
    return aligned(HL_PAGE, hl_align_up(size ? size : 1, HL_PAGE));
}

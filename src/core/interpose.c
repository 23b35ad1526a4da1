/* interpose.c — the malloc family, checked once here for every strategy: init and the
 * bootstrap arena, size 0, overflow, huge sizes (NULL + ENOMEM), alignment rules (EINVAL),
 * large objects, routing of free through the page map, realloc, statistics and observers.
 * A strategy sees only well-formed requests: 0 < size <= hl_large_threshold. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hl.h"


static inline bool ready(void)
{
    if (hl_likely(atomic_load_explicit(&hl_init_state, memory_order_acquire) == 2)) return true;
    hl_init_maybe(false);
    return atomic_load(&hl_init_state) == 2;
}

static size_t usable_of(const void *p, enum hl_owner owner)
{
    if (owner == HL_OWNER_STRATEGY) return hl_active->usable_size(p);
    if (owner == HL_OWNER_LARGE) return hl_large_usable(p);
    return hl_bootstrap_owns(p) ? hl_bootstrap_usable(p) : 0;
}

/* Every block handed out passes here: count it, show it to the observers. */
static inline void *gave(void *p, size_t request, size_t align, enum hl_owner owner)
{
    if (hl_unlikely(!p)) { errno = ENOMEM; return NULL; }
#ifdef HL_STATS
    hl_self();
    HL_COUNT(mallocs, 1);
    hl_stats_in_use((int64_t)usable_of(p, owner));
#endif
    if (hl_unlikely(hl_checking)) hl_check_alloc(p);
    if (hl_unlikely(hl_observing)) hl_observe_alloc(p, request, usable_of(p, owner), align);
    (void)request, (void)align, (void)owner;
    return p;
}

static inline void took(void *p, enum hl_owner owner)
{
#ifdef HL_STATS
    hl_self();
    HL_COUNT(frees, 1);
    hl_stats_in_use(-(int64_t)usable_of(p, owner));
#endif
    if (hl_unlikely(hl_observing)) hl_observe_free(p, usable_of(p, owner));
    (void)p, (void)owner;
}

void *hl_malloc(size_t size)
{
    if (hl_unlikely(!ready())) return hl_bootstrap_alloc(size, HL_ALIGN);
    if (hl_likely(size <= hl_large_threshold))
        return gave(hl_active->malloc(size ? size : 1), size, 0, HL_OWNER_STRATEGY);
    return gave(hl_large_alloc(size, HL_ALIGN), size, 0, HL_OWNER_LARGE);
}

void hl_free(void *p)
{
    if (!p) return;
    if (hl_unlikely(hl_checking)) hl_check_free(p);
    enum hl_owner owner = hl_pagemap_get(p);
    if (hl_likely(owner == HL_OWNER_STRATEGY)) {
        took(p, owner);
        hl_active->free(p);
    } else if (owner == HL_OWNER_LARGE) {
        took(p, owner);
        hl_large_free(p);
    } else if (!hl_bootstrap_owns(p)) {       /* bootstrap blocks are simply never reused */
        hl_say("free(%p): not a block hoardlab handed out (strategy %s); aborting", p,
               hl_active ? hl_active->name : "none yet");
        abort();
    }
}

void *hl_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) { errno = ENOMEM; return NULL; }
    void *p = hl_malloc(total);
    /* Large objects and the bootstrap arena are fresh, zeroed pages. */
    if (p && hl_pagemap_get(p) == HL_OWNER_STRATEGY) memset(p, 0, total);
    return p;
}

size_t hl_malloc_usable_size(const void *p)
{
    return p ? usable_of(p, hl_pagemap_get(p)) : 0;
}

void *hl_realloc(void *p, size_t size)
{
    if (!p) return hl_malloc(size);
    if (size == 0) { hl_free(p); return NULL; }            /* as glibc does */
    size_t old = hl_malloc_usable_size(p);
    if (size <= old && size > old / 2) {                   /* fits, and wastes under half */
        if (hl_unlikely(hl_checking)) { hl_check_free(p); hl_check_alloc(p); }  /* live? */
        return p;
    }
    void *q = hl_malloc(size);
    if (!q) return NULL;                                   /* the old block stays intact */
    memcpy(q, p, size < old ? size : old);
    hl_free(p);
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
    if (align <= HL_ALIGN) return hl_malloc(size);
    if (hl_active->memalign && size <= hl_large_threshold && align <= hl_large_threshold - size)
        return gave(hl_active->memalign(align, size ? size : 1), size, align, HL_OWNER_STRATEGY);
    return gave(hl_large_alloc(size, align), size, align, HL_OWNER_LARGE);
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

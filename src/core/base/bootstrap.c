/* bootstrap.c — a static arena for the calls that arrive before the configuration is read
 * (the dynamic linker allocates while loading) or while init itself runs (init.c).
 *
 * Blocks carry their size in a 16-byte header so realloc and malloc_usable_size work; they
 * are never reused (free of one is a no-op), which is fine for the few early calls. */
#include <errno.h>
#include "base.h"

static char arena[256 * 1024] __attribute__((aligned(4096)));
static _Atomic size_t arena_used;

void *hl_bootstrap_alloc(size_t size, size_t align)
{
    if (align < HL_ALIGN) align = HL_ALIGN;
    if (size > sizeof arena) { errno = ENOMEM; return NULL; }
    size_t need = hl_align_up(size, HL_ALIGN) + align, old = atomic_load(&arena_used);
    do {
        if (old + need > sizeof arena) { errno = ENOMEM; return NULL; }
    } while (!atomic_compare_exchange_weak(&arena_used, &old, old + need));
    char *p = (char *)hl_align_up((uintptr_t)arena + old + HL_ALIGN, align);
    ((size_t *)p)[-1] = size;
    return p;
}

bool hl_bootstrap_owns(const void *p)
{
    return (const char *)p >= arena && (const char *)p < arena + sizeof arena;
}

size_t hl_bootstrap_usable(const void *p) { return ((const size_t *)p)[-1]; }

/* @NAME@ — TODO: one line saying what this strategy changes, and which Table 7 row you expect.
 * Made by `tools/hoardlab new @NAME@ --from @FROM@` (docs/lab.md): it starts as @FROM@, the
 * uC++ single heap (src/core/heap/singleheap.c) behind @LOCKS@. Put your policy in the two
 * paths below; `tools/hoardlab grade @NAME@` measures it.
 *
 * Each path is built twice by HL_MALLOC_PAIR / HL_FREE_PAIR (src/core/base/stats.h): `counted` is
 * a constant true in the build init installs by default and false in the one it installs with
 * counting = off, so `if (counted)` costs nothing at run time. A block your own code hands out
 * or takes back is counted with hl_stats_malloc_if / hl_stats_free_if (U, the bytes in use);
 * a block the heap hands out is counted by the heap's counted build (hl_sh_malloc), so call
 * the build that matches `counted` and never count one block twice. */
#include "heap.h"

static int @NAME@_init(void) { return hl_sh_init(@PER_LIST@); }

/* size: 0 < size <= the large threshold (core serves larger ones and checks the arguments). */
static inline __attribute__((always_inline)) void *@NAME@_path_malloc(size_t size, bool counted)
{
    return counted ? hl_sh_malloc(size) : hl_sh_malloc_uncounted(size);
}

/* HL_MALLOC_PAIR defines @NAME@_malloc, @NAME@_malloc_entry, @NAME@_malloc_uncounted,
 * @NAME@_malloc_uncounted_entry */
HL_MALLOC_PAIR(static, @NAME@_malloc, @NAME@_path_malloc)

/* p: a block this strategy handed out (hl_sh_usable_size(p) says how big). */
static inline __attribute__((always_inline)) void @NAME@_path_free(void *p, bool counted)
{
    if (counted) hl_sh_free(p);
    else hl_sh_free_uncounted(p);
}

/* HL_FREE_PAIR defines @NAME@_free, @NAME@_free_entry, @NAME@_free_uncounted,
 * @NAME@_free_uncounted_entry */
HL_FREE_PAIR(static, @NAME@_free, @NAME@_path_free)

const struct hl_strategy hl_strategy_@NAME@ = {
    .name = "@NAME@",
    .summary = "TODO: one line for hlconfig --strategies",
    .defaults = "size_classes=pow2",      /* as @FROM@; a key=value list, or NULL */
    .init = @NAME@_init,
    HL_ROW_PATHS(@NAME@_malloc, @NAME@_free),
    .memalign = hl_sh_memalign,
    .usable_size = hl_sh_usable_size,
    .thread_exit = NULL,                  /* a per-thread cache would give its blocks back here */
    .fork = hl_sh_fork,                   /* takes, releases, resets the heap's locks */
};

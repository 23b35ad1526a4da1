/* meta.c — memory for the allocator's own structures (heaps, descriptors, free-list heads):
 * bump-allocated from 1 MiB OS regions, zeroed, cache-line aligned, never freed. Counted in A
 * as metadata (HL_OS_META), by the pages handed out so far: the untouched rest of a region
 * costs no memory, so it is not counted. */
#include "base.h"

#define META_CHUNK (1u << 20)

static hl_lock meta_lock = HL_LOCK_INIT;
void (*hl_meta_touched)(const void *object);
uint64_t (*hl_meta_foreign_blocks)(const void *start, size_t bytes);
static char *cur, *end, *counted;       /* counted: the region's pages below it are in A */

void *hl_meta_alloc(size_t size)
{
    size = hl_align_up(size ? size : 1, HL_CACHE_LINE);
    if (size > META_CHUNK / 4) {
        void *p = hl_os_alloc(hl_align_up(size, HL_PAGE), HL_PAGE, HL_OS_META);
        if (!p) hl_die("out of memory for allocator metadata (%zu bytes)", size);
        return p;
    }
    hl_lock_acquire(&meta_lock);
    if (!cur || (size_t)(end - cur) < size) {
        cur = counted = hl_os_map(META_CHUNK, HL_PAGE);
        if (!cur) hl_die("out of memory for allocator metadata");
        end = cur + META_CHUNK;
    }
    void *p = cur;
    cur += size;
    if (cur > counted) {
        char *upto = (char *)hl_align_up((uintptr_t)cur, HL_PAGE);
        hl_os_account(HL_OS_META, upto - counted);
        counted = upto;
    }
    hl_lock_release(&meta_lock);
    return p;
}

void hl_meta_fork(int phase)
{
    if (phase == 0) hl_lock_acquire(&meta_lock);
    else if (phase == 1) hl_lock_release(&meta_lock);
    else hl_lock_init(&meta_lock);
}

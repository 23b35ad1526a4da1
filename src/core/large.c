/* large.c — objects above large_threshold: one OS mapping each, returned to the OS on free
 * (Hoard §3: "If sz > S/2, allocate the superblock from the OS"). A 16-byte header just below
 * the block records the mapping; the page map marks its pages HL_OWNER_LARGE. */
#include <errno.h>
#include <stdint.h>
#include "hl.h"

size_t hl_large_threshold;

struct large_header { size_t map_size, offset; };   /* offset: block - mapping start */

static struct large_header *header_of(const void *p) { return (struct large_header *)p - 1; }

void *hl_large_alloc(size_t size, size_t align)
{
    if (align < HL_ALIGN) align = HL_ALIGN;
    size_t offset = align;                       /* room for the header, keeping alignment */
    if (size > PTRDIFF_MAX - offset - HL_PAGE) { errno = ENOMEM; return NULL; }
    size_t map_size = hl_align_up(offset + size, HL_PAGE);
    char *base = hl_os_alloc(map_size, align);
    if (!base) return NULL;
    char *p = base + offset;
    *header_of(p) = (struct large_header){ map_size, offset };
    hl_pagemap_set(base, map_size, HL_OWNER_LARGE);
    HL_COUNT(large_allocs, 1);
    return p;
}

void hl_large_free(void *p)
{
    struct large_header h = *header_of(p);
    char *base = (char *)p - h.offset;
    hl_pagemap_set(base, h.map_size, HL_OWNER_NONE);
    hl_os_free(base, h.map_size);
}

size_t hl_large_usable(const void *p)
{
    const struct large_header *h = header_of(p);
    return h->map_size - h->offset;
}

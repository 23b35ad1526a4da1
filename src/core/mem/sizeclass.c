/* sizeclass.c — the size-class table: which block size serves a request.
 *
 * `pow2` is the uC++ allocator's: powers of two. `geometric` is Hoard's: each class is at
 * most b times the one below (b = size_class_base, 1.2 in the paper), which bounds internal
 * fragmentation by b. `pow2x4` is Hoard's of July 2026 (#107, #108): 16-byte steps to 128,
 * then 4 classes per power of two (a quarter of it apart: at most 25 % waste), 40 classes to
 * 32 KiB, continued the same way up to the largest request served. Every size is a multiple of
 * 16 so every block is 16-aligned; the last
 * class is exactly the largest request served (hl_large_threshold, rounded up to 16). */
#include "mem.h"

const struct hl_classes *hl_classes;

int hl_classes_init(size_t max_size)
{
    size_t top = hl_align_up(max_size < HL_ALIGN ? HL_ALIGN : max_size, HL_ALIGN);
    size_t granules = top / HL_ALIGN + 1;
    struct hl_classes *t = hl_meta_alloc(sizeof *t + granules * sizeof t->of16[0]);

    unsigned n = 0;
    for (size_t s = HL_ALIGN; ; ) {
        if (n == HL_MAX_CLASSES) {
            hl_say("size classes: more than %d classes up to %zu bytes; raise "
                   "size_class_base or lower large_threshold", HL_MAX_CLASSES, top);
            return -1;
        }
        t->size[n++] = s < top ? s : top;
        if (s >= top) break;
        size_t next;
        if (hl_cfg.size_classes == HL_CLASSES_POW2) next = s * 2;
        else if (hl_cfg.size_classes == HL_CLASSES_POW2X4)
            next = s < 128 ? s + HL_ALIGN : s + ((size_t)1 << (63 - __builtin_clzll(s))) / 4;
        else next = hl_align_up((size_t)((double)s * hl_cfg.size_class_base), HL_ALIGN);
        s = next > s ? next : s + HL_ALIGN;
    }
    t->count = n;
    t->granules = granules;

    unsigned c = 0;
    for (size_t g = 0; g < granules; g++) {
        while (t->size[c] < g * HL_ALIGN) c++;
        t->of16[g] = (uint16_t)c;
    }
    hl_classes = t;
    return 0;
}

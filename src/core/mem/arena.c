/* arena.c — one reserved address range that holds every block a strategy hands out
 * (superblocks, the single heap's regions), so free() knows a strategy's block by one
 * subtraction and one comparison (front.h) instead of a page-map lookup.
 *
 * At init the range is reserved with MAP_NORESERVE (`arena_reserve` bytes, halved until the
 * kernel agrees): address space only, no memory. Pieces are bump-allocated at any power-of-two
 * alignment and count in A (os.c) from then on; the kernel backs a page when it is first
 * touched, so taking a superblock costs no system call. A piece given back (release_empty)
 * is handed to the kernel with MADV_DONTNEED, leaves A, and is kept on a stack of pieces of
 * its size for the next request of that size and alignment. Large objects live outside the
 * range, in mappings of their own (large.c).
 *
 * `hugepages` (config.h): madvise and filler advise the whole range MADV_HUGEPAGE at init (its
 * base is 16 MiB aligned, so its 2 MiB regions are the kernel's huge-page frames); under filler
 * the arena also keeps, per 2 MiB region, the bytes of its pieces in use and of its freed
 * pieces still resident: a piece below 2 MiB never straddles a region (the bump pointer skips
 * to the next region), a freed piece keeps its pages (and stays in A) until its whole region
 * is free, then the region goes back whole, and a request takes the kept piece of the fullest
 * region first. A piece of 2 MiB or more starts a region and is given back as before. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "mem.h"

#define MAX_ALIGN  ((size_t)16 << 20)   /* the largest superblock_size */
#define MIN_RESERVE ((size_t)64 << 20)
#define SIZES 8                         /* distinct sizes of pieces kept for reuse */

_Atomic uintptr_t hl_arena_base, hl_arena_span;

/* epoch, use: filler's, of a piece below a region (the region's epoch when it was freed). */
struct piece { uintptr_t addr; struct piece *next; uint32_t epoch; uint32_t use; };

static hl_lock lock = HL_LOCK_INIT;
static uintptr_t next, end;
static struct { size_t size; struct piece *top; } kept[SIZES];
static struct piece *spare;             /* unused piece records */

#define REGION     HL_HUGE_REGION
#define SCAN       64                   /* kept pieces filler compares for the fullest region */
/* filler's per-region counts: bytes of pieces in use, freed but resident (by use), and the
 * number of times the region went back whole. */
struct region { uint32_t used, idle[2], epoch; };
static struct region *regions;          /* NULL unless hugepages = filler */
static int huge_mode;

/* The kernel's THP mode is `never` (the file says "[never]"): no region can be huge. */
static bool thp_never(void)
{
    char buf[128];
    int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return true;            /* no THP in this kernel */
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return true;
    buf[n] = 0;
    for (char *p = buf; *p; p++)
        if (p[0] == '[' && p[1] == 'n' && p[2] == 'e') return true;
    return false;
}

static void huge_init(uintptr_t base, size_t span)
{
    huge_mode = hl_cfg.hugepages;
    if (huge_mode == HL_HUGE_OFF) return;
    hl_os_set_huge(1);
    hl_stats_huge_fn = hl_arena_huge_regions;
    if (thp_never())
        hl_say("hugepages = %s: transparent huge pages are off in this kernel "
               "(/sys/kernel/mm/transparent_hugepage/enabled); huge-page coverage will be 0",
               hl_hugepages_modes[huge_mode]);
    else if (hl_os_madvise((void *)base, span, MADV_HUGEPAGE))
        hl_say("hugepages = %s: madvise(MADV_HUGEPAGE) refused; huge-page coverage will be 0",
               hl_hugepages_modes[huge_mode]);
    if (huge_mode != HL_HUGE_FILLER) return;
    size_t bytes = hl_align_up(span / REGION * sizeof *regions, HL_PAGE);
    void *r = hl_os_mmap(bytes, MAP_NORESERVE);
    if (r == MAP_FAILED)
        hl_die("hugepages = filler: cannot map %zu bytes for the regions' counts", bytes);
    regions = r;
}

static struct region *region_of(uintptr_t addr)
{
    return &regions[(addr - atomic_load_explicit(&hl_arena_base, memory_order_relaxed)) / REGION];
}

bool hl_arena_huge_aligned(void)
{
    return hl_arena_base % REGION == 0;
}

int hl_arena_huge_mode(void) { return huge_mode; }

void hl_arena_init(void)
{
    size_t want = hl_cfg.arena_reserve;
    void *raw = MAP_FAILED;
    for (; want >= MIN_RESERVE; want /= 2) {
        raw = hl_os_mmap(want + MAX_ALIGN, MAP_NORESERVE);
        if (raw != MAP_FAILED) break;
    }
    if (raw == MAP_FAILED)
        hl_die("cannot reserve %zu bytes of address space for the arena (arena_reserve)",
               (size_t)hl_cfg.arena_reserve);
    next = hl_align_up((uintptr_t)raw, MAX_ALIGN);
    end = next + want;
    huge_init(next, want);
    atomic_store_explicit(&hl_arena_base, next, memory_order_relaxed);
    /* Published last: whoever sees the span sees the base (front.h reads span first). */
    atomic_store_explicit(&hl_arena_span, want, memory_order_release);
}

/* filler: the kept piece of size and align in the fullest region among the first SCAN (NULL
 * if none, or if the best's region is empty while the bump pointer's is partly used: the bump
 * pointer then fills its region first); its record unlinked into *out. */
static void *reuse_fullest(unsigned i, size_t size, size_t align, struct piece **out)
{
    struct piece **best = NULL, **at = &kept[i].top;
    uint32_t most = 0;
    for (unsigned n = 0; *at && n < SCAN; at = &(*at)->next, n++) {
        if ((*at)->addr & (align - 1)) continue;
        uint32_t used = region_of((*at)->addr)->used;
        if (!best || used > most) { best = at; most = used; }
    }
    if (!best) return NULL;
    uintptr_t bump = hl_align_up(next, align);
    if (most == 0 && next % REGION && bump + size <= hl_align_up(next, REGION) && bump + size <= end)
        return NULL;
    *out = *best;
    *best = (*best)->next;
    return (void *)(*out)->addr;
}

/* filler's counts for a piece below a region taken for use; true if it was still resident
 * (and so still counted in A, as `was`). */
static bool region_take(uintptr_t addr, size_t size, const struct piece *pc, unsigned *was)
{
    struct region *r = region_of(addr);
    r->used += (uint32_t)size;
    if (!pc || pc->epoch != r->epoch) return false;
    r->idle[pc->use] -= (uint32_t)size;
    *was = pc->use;
    return true;
}

static void *reuse(size_t size, size_t align)
{
    for (unsigned i = 0; i < SIZES; i++) {
        if (kept[i].size != size || !kept[i].top || kept[i].top->addr & (align - 1)) continue;
        struct piece *pc = kept[i].top;
        kept[i].top = pc->next;
        pc->next = spare;
        spare = pc;
        return (void *)pc->addr;
    }
    return NULL;
}

/* A record for a kept piece (under the lock). */
static struct piece *record(void)
{
    struct piece *pc = spare;
    if (pc) spare = pc->next;
    else pc = hl_meta_alloc(sizeof *pc);
    return pc;
}

static void keep(struct piece *pc, size_t size)
{
    unsigned i = 0;
    while (i < SIZES && kept[i].size && kept[i].size != size) i++;
    if (i == SIZES) {                   /* more sizes than slots; the range is lost */
        pc->next = spare;
        spare = pc;
        return;
    }
    kept[i].size = size;
    pc->next = kept[i].top;
    kept[i].top = pc;
}

/* filler's hl_arena_alloc (regions set). */
static void *alloc_filler(size_t size, size_t align, enum hl_os_use use)
{
    if (align < HL_PAGE) align = HL_PAGE;
    bool small = size < REGION;
    if (!small && align < REGION) align = REGION;
    unsigned was = 0;
    bool resident = false;
    hl_lock_acquire(&lock);
    void *p = NULL;
    struct piece *pc = NULL;
    if (small) {
        for (unsigned i = 0; i < SIZES; i++)
            if (kept[i].size == size) { p = reuse_fullest(i, size, align, &pc); break; }
    } else {
        p = reuse(size, align);
    }
    if (!p) {
        uintptr_t at = hl_align_up(next, align);
        /* filler: a small piece never straddles a region; the skipped tail is address space */
        if (small && at / REGION != (at + size - 1) / REGION) at = hl_align_up(at, REGION);
        /* A growth is an OS call of its own for fault injection (fault.c): the kernel backs
         * the new piece, and running out of the range is the arena's out of memory. */
        if (at > end || end - at < size || hl_fault_now(HL_CALL_ARENA)) {
            hl_lock_release(&lock);
            errno = ENOMEM;
            return NULL;
        }
        next = at + size;
        if (!small) next = hl_align_up(next, REGION);   /* its regions are its own */
        p = (void *)at;
    }
    if (small) resident = region_take((uintptr_t)p, size, pc, &was);
    if (pc) { pc->next = spare; spare = pc; }
    hl_lock_release(&lock);
    if (resident) {                     /* still counted in A: move it to its new use */
        if (was != (unsigned)use) {
            hl_os_account((enum hl_os_use)was, -(ptrdiff_t)size);
            hl_os_account(use, (ptrdiff_t)size);
        }
        return p;
    }
    hl_os_place(p, size);
    hl_os_account(use, (ptrdiff_t)size);
    return p;
}

void *hl_arena_alloc(size_t size, size_t align, enum hl_os_use use)
{
    if (regions) return alloc_filler(size, align, use);
    if (align < HL_PAGE) align = HL_PAGE;
    hl_lock_acquire(&lock);
    void *p = reuse(size, align);
    if (!p) {
        uintptr_t at = hl_align_up(next, align);
        /* A growth is an OS call of its own for fault injection (fault.c): the kernel backs
         * the new piece, and running out of the range is the arena's out of memory. */
        if (at > end || end - at < size || hl_fault_now(HL_CALL_ARENA)) {
            hl_lock_release(&lock);
            errno = ENOMEM;
            return NULL;
        }
        next = at + size;
        p = (void *)at;
    }
    hl_lock_release(&lock);
    hl_os_place(p, size);
    hl_os_account(use, (ptrdiff_t)size);
    return p;
}

/* filler, a piece below a region: its pages stay until the region is all free; then the
 * region goes back whole, and what its freed pieces held leaves A. */
static void free_filler(void *p, size_t size, enum hl_os_use use)
{
    hl_lock_acquire(&lock);
    struct region *r = region_of((uintptr_t)p);
    r->used -= (uint32_t)size;
    r->idle[use] += (uint32_t)size;
    size_t gone[2] = { 0, 0 };
    bool whole = r->used == 0;
    struct piece *pc = record();        /* resident while the region's epoch stays this one */
    *pc = (struct piece){ (uintptr_t)p, NULL, r->epoch, (uint32_t)use };
    if (whole) {
        gone[0] = r->idle[0];
        gone[1] = r->idle[1];
        r->idle[0] = r->idle[1] = 0;
        r->epoch++;
    }
    keep(pc, size);
    /* under the lock: no piece of the region (kept or bumped) is handed out meanwhile */
    if (whole)
        hl_os_madvise((void *)((uintptr_t)p & ~(uintptr_t)(REGION - 1)), REGION, MADV_DONTNEED);
    hl_lock_release(&lock);
    if (!whole) return;
    for (unsigned u = 0; u < 2; u++)
        if (gone[u]) hl_os_account((enum hl_os_use)u, -(ptrdiff_t)gone[u]);
}

void hl_arena_free(void *p, size_t size, enum hl_os_use use)
{
    if (regions && size < REGION) {
        free_filler(p, size, use);
        return;
    }
    hl_os_madvise(p, size, MADV_DONTNEED);  /* if it fails, the pages stay: no harm */
    hl_os_account(use, -(ptrdiff_t)size);
    hl_lock_acquire(&lock);
    unsigned i = 0;
    while (i < SIZES && kept[i].size && kept[i].size != size) i++;
    if (i < SIZES) {                    /* else: more sizes than slots; the range is lost */
        struct piece *pc = spare;
        if (pc) spare = pc->next;
        else pc = hl_meta_alloc(sizeof *pc);
        kept[i].size = size;
        *pc = (struct piece){ (uintptr_t)p, kept[i].top, 0, 0 };
        kept[i].top = pc;
    }
    hl_lock_release(&lock);
}

void hl_arena_fork(int phase)
{
    if (phase == 0) hl_lock_acquire(&lock);
    else if (phase == 1) hl_lock_release(&lock);
    else hl_lock_init(&lock);
}

/* /proc/self/smaps, read through a fixed buffer (no malloc): the AnonHugePages of the VMAs
 * inside the arena's range, in kB; -1 if unreadable. */
static long arena_huge_kb(void)
{
    uintptr_t lo = atomic_load_explicit(&hl_arena_base, memory_order_relaxed);
    uintptr_t hi = lo + atomic_load_explicit(&hl_arena_span, memory_order_acquire);
    int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[8192];
    size_t have = 0;
    long kb = 0;
    bool inside = false;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
        if (n <= 0) break;
        have += (size_t)n;
        buf[have] = 0;
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = 0;
            if (!strncmp(line, "AnonHugePages:", 14)) {
                if (inside) kb += strtol(line + 14, NULL, 10);
            } else if ((*line >= '0' && *line <= '9') || (*line >= 'a' && *line <= 'f')) {
                char *dash;             /* a VMA's header: "start-end perms ..." in lower hex */
                uintptr_t a = strtoul(line, &dash, 16), b = 0;
                if (*dash == '-') b = strtoul(dash + 1, NULL, 16);
                inside = *dash == '-' && a >= lo && b <= hi;
            }
            line = nl + 1;
        }
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == sizeof buf - 1) have = 0;       /* an overlong line: drop it */
    }
    close(fd);
    return kb;
}

/* Read at most once per tick of the coarse clock (1-4 ms): a caller polling faster gets the
 * tick's count. Reading smaps costs about 160 us, and a program (rel_faults with its checks)
 * that reads the statistics after every operation spent 1.7 s of 2.2 in it. */
long hl_arena_huge_regions(void)
{
    static _Atomic uint64_t read_at;
    static _Atomic long regions;
    if (huge_mode == HL_HUGE_OFF || !atomic_load(&hl_arena_span)) return 0;
    uint64_t now = hl_coarse_ns();
    if (atomic_load_explicit(&read_at, memory_order_acquire) == now)
        return atomic_load_explicit(&regions, memory_order_relaxed);
    long kb = arena_huge_kb(), n = kb > 0 ? kb / (long)(REGION / 1024) : 0;
    atomic_store_explicit(&regions, n, memory_order_relaxed);
    atomic_store_explicit(&read_at, now, memory_order_release);
    return n;
}

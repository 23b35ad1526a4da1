/* os.c — memory from the operating system: page-granular mappings at any power-of-two
 * alignment, each counted in A (bytes held from the OS, now and at peak) as held for blocks or
 * as hoardlab's own metadata (base.h, enum hl_os_use), placed on NUMA nodes as the `numa` key
 * says. Every mmap, munmap, mremap and madvise the library makes goes through the four
 * hl_os_ calls below, so that the faults build (-Dfaults=true, fault.c) can fail any one of
 * them exactly as the kernel would: MAP_FAILED or -1, errno ENOMEM. */
#include <errno.h>
#include <sched.h>
#include <unistd.h>
#include <numa.h>
#include <numaif.h>
#include <sys/mman.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif
#include "base.h"

static _Atomic size_t os_now, os_peak, held_now, held_peak, meta_now;

static void raise_peak(_Atomic size_t *peak, size_t now)
{
    size_t seen = atomic_load_explicit(peak, memory_order_relaxed);
    while (now > seen && !atomic_compare_exchange_weak(peak, &seen, now)) { }
}

/* now += bytes (bytes may be negative: unsigned wrap-around subtracts); the new value. */
static size_t add(_Atomic size_t *now, ptrdiff_t bytes)
{
    return atomic_fetch_add(now, (size_t)bytes) + (size_t)bytes;
}

void hl_os_account(enum hl_os_use use, ptrdiff_t bytes)
{
    if (use == HL_OS_HELD) raise_peak(&held_peak, add(&held_now, bytes));
    else add(&meta_now, bytes);
    raise_peak(&os_peak, add(&os_now, bytes));
}

size_t hl_os_bytes(void) { return atomic_load(&os_now); }
size_t hl_os_bytes_peak(void) { return atomic_load(&os_peak); }
size_t hl_os_held(void) { return atomic_load(&held_now); }
size_t hl_os_held_peak(void) { return atomic_load(&held_peak); }
size_t hl_os_meta(void) { return atomic_load(&meta_now); }

void hl_os_reset_peak(void)
{
    atomic_store(&os_peak, atomic_load(&os_now));
    atomic_store(&held_peak, atomic_load(&held_now));
}

/* The `numa` key's value, which config.c hands over once it is loaded (os.c reads no key, so
 * that config.c, which asks hl_nprocs for `P`, and os.c do not use each other). Until then
 * HL_NUMA_OFF, the key's default and what the zeroed hl_cfg held before. */
static int numa_mode = HL_NUMA_OFF;

void hl_os_set_numa(int mode) { numa_mode = mode; }

/* numa_all_nodes_ptr is set by libnuma's constructor; a region mapped before it ran keeps the
 * kernel's default placement. mbind is the bare system call wrapper (no malloc, no stdio). */
void hl_os_place(void *p, size_t size)
{
    if (numa_mode == HL_NUMA_OFF) return;
    if (numa_mode == HL_NUMA_LOCAL)
        mbind(p, size, MPOL_LOCAL, NULL, 0, 0);
    else if (numa_mode == HL_NUMA_INTERLEAVE && numa_all_nodes_ptr)
        mbind(p, size, MPOL_INTERLEAVE, numa_all_nodes_ptr->maskp, numa_all_nodes_ptr->size + 1, 0);
}

/* ---- the system calls ---------------------------------------------------------------------- */

void *hl_os_mmap(size_t size, int flags)
{
    if (hl_fault_now(HL_CALL_MMAP)) { errno = ENOMEM; return MAP_FAILED; }
    return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
}

int hl_os_munmap(void *p, size_t size)
{
    if (hl_fault_now(HL_CALL_MUNMAP)) { errno = ENOMEM; return -1; }
    return munmap(p, size);
}

void *hl_os_mremap(void *p, size_t from, size_t to, void *dest)
{
    if (hl_fault_now(HL_CALL_MREMAP)) { errno = ENOMEM; return MAP_FAILED; }
    if (dest) return mremap(p, from, to, MREMAP_MAYMOVE | MREMAP_FIXED, dest);
    return mremap(p, from, to, MREMAP_MAYMOVE);
}

int hl_os_madvise(void *p, size_t size, int advice)
{
    if (hl_fault_now(HL_CALL_MADVISE)) { errno = ENOMEM; return -1; }
    return madvise(p, size, advice);
}

/* ---- aligned, counted regions ---------------------------------------------------------------- */

void *hl_os_map(size_t size, size_t align)
{
    if (align < HL_PAGE) align = HL_PAGE;
    size_t span = size + align - HL_PAGE;
    if (size == 0 || span < size) { errno = ENOMEM; return NULL; }
    char *raw = hl_os_mmap(span, 0);
    if (raw == MAP_FAILED) { errno = ENOMEM; return NULL; }
    char *p = (char *)hl_align_up((uintptr_t)raw, align);
    /* A trim that fails leaves the slack mapped: address space lost, nothing else. */
    if (p > raw) hl_os_munmap(raw, (size_t)(p - raw));
    if (raw + span > p + size) hl_os_munmap(p + size, (size_t)(raw + span - (p + size)));
    hl_os_place(p, size);
    return p;
}

/* `hugepages` (arena.c hands it over at init): large objects' mappings of 2 MiB or more are
 * advised MADV_HUGEPAGE too (those mremap grows, below), and placed at a 2 MiB boundary: the
 * kernel backs only whole aligned 2 MiB frames inside a mapping with a huge page, so an
 * unaligned 7 MiB mapping got two or three of them where an aligned one gets three (issue 50's
 * lost coverage). hoardlab's own structures are not advised. */
static int huge_advise;

void hl_os_set_huge(int on) { huge_advise = on; }

bool hl_os_huge(size_t size) { return huge_advise && size >= HL_HUGE_REGION; }

void *hl_os_alloc(size_t size, size_t align, enum hl_os_use use)
{
    bool huge = use == HL_OS_HELD && hl_os_huge(size);
    if (huge && align < HL_HUGE_REGION) align = HL_HUGE_REGION;
    void *p = hl_os_map(size, align);
    if (p) hl_os_account(use, (ptrdiff_t)size);
    if (p && huge) hl_os_advise_huge(p, size);
    return p;
}

/* Advice refused leaves small pages, no harm. Also for a large mapping grown by mremap, which
 * keeps its source's flags: a source under 2 MiB had none (issue 50: `hoard`'s chase array,
 * grown from a 36 KiB mapping under large_reuse = follow, sat on 4 KiB pages). */
void hl_os_advise_huge(void *p, size_t size)
{
    if (hl_os_huge(size)) hl_os_madvise(p, size, MADV_HUGEPAGE);
}

void hl_os_free(void *p, size_t size, enum hl_os_use use)
{
    /* A failed munmap leaves the region mapped and still counted in A: it is still held. */
    if (hl_os_munmap(p, size) == 0) hl_os_account(use, -(ptrdiff_t)size);
}

int hl_nprocs(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* valgrind runs no rseq (cpucache.c emulates it) and its CPUID hides PRFCHW, whose
 * PREFETCHW it runs (tlab.c): `cost` counts the paths a real CPU runs. */
bool hl_os_valgrind(void) { return RUNNING_ON_VALGRIND; }

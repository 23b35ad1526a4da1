/* os.c — memory from the operating system: page-granular mappings at any power-of-two
 * alignment, each counted in A (bytes held from the OS, now and at peak), placed on NUMA
 * nodes as the `numa` key says. */
#include <errno.h>
#include <sched.h>
#include <unistd.h>
#include <numa.h>
#include <numaif.h>
#include <sys/mman.h>
#include "hl.h"

static _Atomic size_t os_now, os_peak;

void hl_os_account(ptrdiff_t bytes)
{
    size_t now = atomic_fetch_add(&os_now, (size_t)bytes) + (size_t)bytes;
    size_t peak = atomic_load_explicit(&os_peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak(&os_peak, &peak, now)) { }
}

size_t hl_os_bytes(void) { return atomic_load(&os_now); }
size_t hl_os_bytes_peak(void) { return atomic_load(&os_peak); }
void hl_os_reset_peak(void) { atomic_store(&os_peak, atomic_load(&os_now)); }

/* numa_all_nodes_ptr is set by libnuma's constructor; a region mapped before it ran keeps the
 * kernel's default placement. mbind is the bare system call wrapper (no malloc, no stdio). */
void hl_os_place(void *p, size_t size)
{
    if (hl_cfg.numa == HL_NUMA_OFF) return;
    if (hl_cfg.numa == HL_NUMA_LOCAL)
        mbind(p, size, MPOL_LOCAL, NULL, 0, 0);
    else if (hl_cfg.numa == HL_NUMA_INTERLEAVE && numa_all_nodes_ptr)
        mbind(p, size, MPOL_INTERLEAVE, numa_all_nodes_ptr->maskp, numa_all_nodes_ptr->size + 1, 0);
}

void *hl_os_alloc(size_t size, size_t align)
{
    if (align < HL_PAGE) align = HL_PAGE;
    size_t span = size + align - HL_PAGE;
    if (size == 0 || span < size) { errno = ENOMEM; return NULL; }
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) { errno = ENOMEM; return NULL; }
    char *p = (char *)hl_align_up((uintptr_t)raw, align);
    if (p > raw) munmap(raw, (size_t)(p - raw));
    if (raw + span > p + size) munmap(p + size, (size_t)(raw + span - (p + size)));
    hl_os_place(p, size);
    hl_os_account((ptrdiff_t)size);
    return p;
}

void hl_os_free(void *p, size_t size)
{
    munmap(p, size);
    hl_os_account(-(ptrdiff_t)size);
}

int hl_nprocs(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

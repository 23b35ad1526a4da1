/* tlab_prefetch.c — whether the TLAB's malloc prefetches the next block (key tlab_prefetch;
 * tlab.h's hl_tlab_malloc does it, built again with it in tlab.c). Its PREFETCHW (base.h) is an
 * instruction of its own on x86-64 (CPUID PRFCHW: AMD since the K8, Intel since Broadwell);
 * on a CPU without it malloc does not prefetch, said once at start-up, rather than run an
 * instruction that CPU may not have. valgrind's emulated CPU runs it but does not report it
 * (os.c). */
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include "cache.h"

bool hl_tlab_prefetch_on(void)
{
    if (!hl_cfg.tlab_prefetch) return false;
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!hl_os_valgrind() && (!__get_cpuid(0x80000001u, &a, &b, &c, &d) || !(c & bit_PRFCHW))) {
        hl_say("tlab_prefetch = on: this CPU has no PREFETCHW (CPUID PRFCHW): malloc does not "
               "prefetch");
        return false;
    }
#endif
    return true;
}

/* fault.c — injected OS failures, compiled only into the faults build (-Dfaults=true, or the
 * test's own core in tests/reliability/meson.build). Every system call os.c makes for the
 * library (mmap, munmap, mremap, madvise) and every growth of the arena asks hl_fault_now
 * first; a call that is to fail returns what the kernel's failure would (MAP_FAILED or -1,
 * errno ENOMEM), so the library's own error paths run, as SQLite tests its every allocation.
 *
 * Calls are numbered from 1 in the order they are made. `fault_at = N` fails call N (one
 * call: the program should then recover); `fault_rate = p` fails each call with probability
 * p, a function of (fault_seed, its number) so a run repeats where the calls' order does.
 * `fault_count = on` prints the calls made and failed at exit: a test first counts the calls
 * of its workload, then fails each in turn (tests/reliability/faults.c). */
#include <stdio.h>
#include "base.h"

static _Atomic uint64_t calls, calls_of[HL_CALL_KINDS], failed_of[HL_CALL_KINDS];
static uint64_t fail_at, seed, threshold;   /* threshold: a draw below it fails */
static bool report;
static const char *const kind_names[HL_CALL_KINDS] = {
    "mmap", "munmap", "mremap", "madvise", "arena growth" };

void hl_fault_set(long at, double rate, long s, bool count)
{
    fail_at = (uint64_t)at;
    seed = (uint64_t)s;
    /* rate 1 must fail every call: the largest draw is 2^64 - 1. */
    threshold = rate >= 1.0 ? UINT64_MAX : (uint64_t)(rate * 18446744073709551616.0);
    report = count;
}

/* splitmix64: a well-mixed 64-bit value of (seed, n). */
static uint64_t draw(uint64_t n)
{
    uint64_t z = seed + n * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

bool hl_fault_now(enum hl_os_call kind)
{
    uint64_t n = atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed) + 1;
    atomic_fetch_add_explicit(&calls_of[kind], 1, memory_order_relaxed);
    bool fail = n == fail_at || (threshold && (threshold == UINT64_MAX || draw(n) < threshold));
    if (fail) atomic_fetch_add_explicit(&failed_of[kind], 1, memory_order_relaxed);
    return fail;
}

void hl_fault_counts(uint64_t c[HL_CALL_KINDS], uint64_t f[HL_CALL_KINDS])
{
    for (int k = 0; k < HL_CALL_KINDS; k++) {
        if (c) c[k] = atomic_load(&calls_of[k]);
        if (f) f[k] = atomic_load(&failed_of[k]);
    }
}

uint64_t hl_fault_calls(void) { return atomic_load(&calls); }

uint64_t hl_fault_failed(void)
{
    uint64_t f[HL_CALL_KINDS], sum = 0;
    hl_fault_counts(NULL, f);
    for (int k = 0; k < HL_CALL_KINDS; k++) sum += f[k];
    return sum;
}

/* At exit, after the program's own atexit handlers: the count covers the whole run. */
__attribute__((destructor)) static void fault_report(void)
{
    if (!report) return;
    uint64_t c[HL_CALL_KINDS], f[HL_CALL_KINDS];
    hl_fault_counts(c, f);
    char line[512];
    int n = 0;
    for (int k = 0; k < HL_CALL_KINDS; k++)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s%s %llu (%llu failed)", k ? ", " : "",
                      kind_names[k], (unsigned long long)c[k], (unsigned long long)f[k]);
    hl_say("faults: %llu OS calls, %llu failed: %s", (unsigned long long)hl_fault_calls(),
           (unsigned long long)hl_fault_failed(), line);
}

/* rel.h — what the reliability tests share: one source, two ways to reach the allocator, and
 * block stamps.
 *
 * Built plainly, a test calls malloc & co. and runs under LD_PRELOAD=libhoardlab.so with
 * HOARD_STRATEGY set (meson does both): the real interposition, as any program meets it.
 * Built with -DREL_DIRECT (the sanitizer variants), it links the allocator's static core and
 * calls hl_malloc & co., so AddressSanitizer / ThreadSanitizer keep their own malloc.
 *
 * Every test first checks that it really runs on hoardlab and on the strategy it was given,
 * so a broken preload fails instead of silently testing glibc.
 *
 * Longer soaks: RELIABILITY_SCALE=N multiplies the amount of work of every test (meson test
 * --setup soak sets it), and the stress test takes --duration SECONDS. */
#ifndef REL_H
#define REL_H

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <unistd.h>
#include "hoardlab.h"

#ifdef REL_DIRECT
#include "front.h"
#define r_malloc            hl_malloc
#define r_free              hl_free
#define r_calloc            hl_calloc
#define r_realloc           hl_realloc
#define r_reallocarray      hl_reallocarray
#define r_posix_memalign    hl_posix_memalign
#define r_aligned_alloc     hl_aligned_alloc
#define r_memalign          hl_memalign
#define r_valloc            hl_valloc
#define r_pvalloc           hl_pvalloc
#define r_usable            hl_malloc_usable_size
#else
#define r_malloc            malloc
#define r_free              free
#define r_calloc            calloc
#define r_realloc           realloc
#define r_reallocarray      reallocarray
#define r_posix_memalign    posix_memalign
#define r_aligned_alloc     aligned_alloc
#define r_memalign          memalign
#define r_valloc            valloc
#define r_pvalloc           pvalloc
#define r_usable            malloc_usable_size
#endif

/* Hide a value from the compiler, so tests of absurd sizes and of failed reallocs are not
 * rejected at compile time (-Walloc-size-larger-than, -Wuse-after-free). */
#define REL_OPAQUE(x) ({ __typeof__(x) v_ = (x); __asm__("" : "+r"(v_)); v_; })

__attribute__((format(printf, 1, 2), noreturn, unused))
static void rel_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    _exit(1);
}

#define REL_CHECK(cond, ...) do { if (!(cond)) rel_fail(__VA_ARGS__); } while (0)

/* The strategy in use; fails unless it is hoardlab's and the one HOARD_STRATEGY names. */
static __attribute__((unused)) const char *rel_require_hoardlab(void)
{
    const char *want = getenv("HOARD_STRATEGY");
#ifdef REL_DIRECT
    hl_init();
    const char *have = hoardlab_strategy();
#else
    const char *(*fn)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "hoardlab_strategy");
    if (!fn) rel_fail("libhoardlab is not loaded (run with LD_PRELOAD=libhoardlab.so)");
    const char *have = fn();
#endif
    if (want && strcmp(have, want))
        rel_fail("running strategy %s, but HOARD_STRATEGY=%s", have, want);
    return have;
}

/* Bytes hoardlab holds from the OS now (A), or 0 when statistics are unavailable. */
static __attribute__((unused)) uint64_t rel_os_bytes(void)
{
    struct hoardlab_stats s;
#ifdef REL_DIRECT
    hoardlab_stats(&s);
#else
    void (*fn)(struct hoardlab_stats *) =
        (void (*)(struct hoardlab_stats *))dlsym(RTLD_DEFAULT, "hoardlab_stats");
    if (!fn) return 0;
    fn(&s);
#endif
    return s.os_bytes;
}

/* Resident set size in bytes, from /proc/self/statm. */
static __attribute__((unused)) uint64_t rel_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &rss) != 2) rss = 0;
        fclose(f);
    }
    return (uint64_t)rss * 4096u;
}

static __attribute__((unused)) double rel_scale(void)
{
    const char *s = getenv("RELIABILITY_SCALE");
    double v = s ? atof(s) : 1.0;
    return v > 0 ? v : 1.0;
}

/* ---- stamps: the content of a block is a function of (seed, offset), not of its address, so
 * it survives realloc's moves. Word-at-a-time; blocks are at least 8-byte aligned. ---------- */

static inline uint64_t rel_word(uint64_t seed, size_t w)
{
    uint64_t x = seed ^ (w * 0x9E3779B97F4A7C15ull);
    return x ^ (x >> 31);
}

static inline uint8_t rel_byte(uint64_t seed, size_t i)
{
    return (uint8_t)(rel_word(seed, i >> 3) >> ((i & 7) * 8));
}

static __attribute__((unused)) void rel_stamp(void *p, size_t n, uint64_t seed)
{
    uint64_t *w = p;
    size_t words = n / 8;
    for (size_t i = 0; i < words; i++) w[i] = rel_word(seed, i);
    for (size_t i = words * 8; i < n; i++) ((uint8_t *)p)[i] = rel_byte(seed, i);
}

/* Offset of the first byte that differs from the stamp, or -1 when all n are intact. */
static __attribute__((unused)) long rel_damaged(const void *p, size_t n, uint64_t seed)
{
    const uint64_t *w = p;
    size_t words = n / 8;
    for (size_t i = 0; i < words; i++)
        if (w[i] != rel_word(seed, i)) {
            for (size_t b = i * 8;; b++)
                if (((const uint8_t *)p)[b] != rel_byte(seed, b)) return (long)b;
        }
    for (size_t i = words * 8; i < n; i++)
        if (((const uint8_t *)p)[i] != rel_byte(seed, i)) return (long)i;
    return -1;
}

/* A small fast PRNG (xorshift64*), one per thread. */
static inline uint64_t rel_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

#endif

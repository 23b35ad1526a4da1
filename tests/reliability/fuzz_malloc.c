/* fuzz_malloc.c — differential fuzzer of the malloc API (issue 29): libFuzzer target, built
 * with clang -fsanitize=fuzzer,address,undefined by tests/reliability/meson.build.
 *
 * Each input decodes into a sequence of operations — malloc, calloc, realloc, reallocarray,
 * free, posix_memalign, aligned_alloc, memalign, valloc, pvalloc, malloc_usable_size, running
 * the following operations on another thread, handing one operation to another thread, a
 * thread's exit — run against the strategy HOARD_STRATEGY names (with any HOARD_<KNOB>), and
 * checked against a model of what the API promises: every block keeps its contents (stamped
 * with a function of its id and the offset, verified before it is freed or reallocated, when
 * its usable size is asked and at the end of the input), is aligned as asked (at least
 * HL_ALIGN), overlaps no other live block (its whole usable size counts), has a usable size of
 * at least its request; calloc's bytes are zero; realloc keeps the prefix; bad arguments give
 * the documented error (EINVAL, ENOMEM for an overflowing count or a request no address space
 * holds, the old block kept by a failed realloc). A violation aborts, so libFuzzer keeps the
 * input.
 *
 * Why hl_malloc & co. and not malloc: AddressSanitizer owns the process's malloc (it must, to
 * check the fuzzer and the allocator's own code), so the allocator under test is linked in
 * statically (core and strategies, instrumented for coverage) and called through its entry
 * points, as rel.h's REL_DIRECT tests do. The configuration is read once, at the first call,
 * so one process fuzzes one strategy: fuzz_run.sh sets the environment per run.
 *
 * All operations run one at a time (a worker runs while the main thread waits), so an input
 * replays exactly: the threads exist to make frees remote and heaps orphaned, not to race.
 * The allocator's state carries over from one input to the next (as in a long-running
 * program); every block and worker thread of an input is gone at its end. At exit it prints
 * the operations it ran, for the CI log. FUZZ_MALLOC_OPS=N ends the run, with status 0, after
 * the input that reaches N operations: CI asks for a number of operations per strategy, with
 * -max_total_time as a cap (libFuzzer has no such limit, and takes exit() from the target for
 * a crash, hence _exit after the report). */
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#define REL_DIRECT
#include "rel.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_SLOTS    128
#define FZ_WORKERS  3
#define FZ_LIVE_MAX (48u << 20)        /* live bytes asked for; a larger request is skipped */
#define FZ_FULL     4096u              /* stamped in full up to here, then sampled */
#define FZ_HUGE     (((size_t)1 << 48) - 1)    /* beyond a 48-bit address space: must fail */

/* The model's own loops over block bytes and slots: neither coverage feedback (they would
 * make every byte a "feature" and most of the run time) nor ASan checks (they read the
 * allocator's memory, which ASan does not track); flatten inlines rel.h's stamp function,
 * which -O1 leaves out of line (and instrumented). */
#define FZ_UNINSTRUMENTED __attribute__((no_sanitize("coverage", "address"), flatten))

#define FZ_CHECK(cond, ...) do { if (!(cond)) fz_fail(__VA_ARGS__); } while (0)

enum fz_kind { FZ_MALLOC, FZ_CALLOC, FZ_FREE, FZ_REALLOC, FZ_REALLOCARRAY, FZ_POSIX_MEMALIGN,
               FZ_ALIGNED_ALLOC, FZ_MEMALIGN, FZ_VALLOC, FZ_PVALLOC, FZ_USABLE, FZ_SWITCH,
               FZ_HANDOFF, FZ_EXIT };
/* The operation byte's low four bits pick the kind (malloc, free and realloc twice as often),
 * its high four a flag or a thread. */
static const enum fz_kind fz_kinds[16] = {
    FZ_MALLOC, FZ_MALLOC, FZ_CALLOC, FZ_FREE, FZ_FREE, FZ_REALLOC, FZ_REALLOC, FZ_REALLOCARRAY,
    FZ_POSIX_MEMALIGN, FZ_ALIGNED_ALLOC, FZ_MEMALIGN, FZ_USABLE, FZ_SWITCH, FZ_HANDOFF,
    FZ_EXIT, FZ_VALLOC };

struct fz_op { enum fz_kind kind; unsigned flags, slot; size_t size, n, align; };

/* A live block of the model. len: bytes stamped (the request, or the usable size when the
 * operation asked to use the block to its end); id: the stamp's (0 only while calloc's zeros
 * are checked). */
struct fz_block { unsigned char *p; size_t len, usable, align; uint64_t id; };

static struct fz_block fz_slot[FZ_SLOTS];
static size_t fz_live_bytes;
static uint64_t fz_next_id;
static unsigned long long fz_ops, fz_inputs, fz_budget;
static double fz_t0;
static const char *fz_strategy;

struct fz_worker {
    pthread_t tid;
    bool alive, quit;
    sem_t go, done;
    const struct fz_op *ops;
    size_t n;
};
static struct fz_worker fz_workers[FZ_WORKERS];

__attribute__((format(printf, 1, 2), noreturn))
static void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_malloc FAIL (strategy %s): ", fz_strategy);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* ---- stamps: rel.h's function of (id, offset), written in full up to FZ_FULL bytes, then
 * only the first 64 bytes of each 4 KiB up to 64 KiB and of each 64 KiB beyond (a 1 MiB block
 * costs about what a 6 KiB one does, and touches 31 of its pages, not 256);
 * which bytes are stamped depends on the offset only, so realloc can extend a stamp. Id 0
 * stands for zeros (calloc). Blocks are 16-aligned: whole words where they fit. ----------- */

static inline size_t fz_next_stamped(size_t off)
{
    size_t period = off < 65536 ? 4096 : 65536;
    if (off < FZ_FULL || off % period < 64) return off;
    return (off | (period - 1)) + 1;
}

FZ_UNINSTRUMENTED static void fz_stamp(unsigned char *p, size_t from, size_t to, uint64_t id)
{
    for (size_t off = fz_next_stamped(from); off < to;) {
        if (off % 8 == 0 && to - off >= 8) {
            uint64_t w = rel_word(id, off / 8);
            memcpy(p + off, &w, 8);
            off += 8;
        } else {
            p[off] = rel_byte(id, off);
            off++;
        }
        off = fz_next_stamped(off);
    }
}

/* Offset of the first stamped byte below `upto` that is not as stamped with `id`, or -1. */
FZ_UNINSTRUMENTED static long fz_damaged(const unsigned char *p, size_t upto, uint64_t id)
{
    for (size_t off = fz_next_stamped(0); off < upto;) {
        if (off % 8 == 0 && upto - off >= 8) {
            uint64_t w, want = id ? rel_word(id, off / 8) : 0;
            memcpy(&w, p + off, 8);
            if (w != want)
                for (size_t b = off;; b++)
                    if (p[b] != (id ? rel_byte(id, b) : 0)) return (long)b;
            off += 8;
        } else {
            if (p[off] != (id ? rel_byte(id, off) : 0)) return (long)off;
            off++;
        }
        off = fz_next_stamped(off);
    }
    return -1;
}

static void fz_verify(const struct fz_block *b, size_t upto, const char *when)
{
    long bad = fz_damaged(b->p, upto, b->id);
    FZ_CHECK(bad < 0, "%s: block %p (id %llu, %zu bytes stamped, usable %zu) damaged at byte "
             "%ld: %#x, not %#x", when, (void *)b->p, (unsigned long long)b->id, b->len,
             b->usable, bad, b->p[bad], b->id ? rel_byte(b->id, (size_t)bad) : 0);
}

/* ---- the model: a new block is aligned, large enough and overlaps no live block ---------- */

/* The slot of a live block (other than slot `except`) whose usable bytes meet [p, p + u), or
 * -1: the live blocks as a set of intervals, searched in full (there are only FZ_SLOTS). */
FZ_UNINSTRUMENTED static int fz_overlap(const void *p, size_t u, unsigned except)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + u;
    for (unsigned i = 0; i < FZ_SLOTS; i++) {
        const struct fz_block *o = &fz_slot[i];
        if (o->p && i != except && lo < (uintptr_t)o->p + o->usable && (uintptr_t)o->p < hi)
            return (int)i;
    }
    return -1;
}

#ifdef FZ_PLANT_OVERLAP
/* A planted bug, compiled only into fuzz_malloc_planted (tests rel-fuzz-catches-overlap*):
 * every 8th malloc hands out a live block again, as a strategy that returns a block twice
 * would. The model must catch it and fuzz_run.sh must exit with a failure meson counts. */
static void *fz_hand_out(size_t n, unsigned s)
{
    static unsigned calls;
    if (++calls % 8 == 0)
        for (unsigned i = 0; i < FZ_SLOTS; i++)
            if (i != s && fz_slot[i].p && fz_slot[i].usable >= n) return fz_slot[i].p;
    return hl_malloc(n);
}
#else
#define fz_hand_out(n, s) hl_malloc(n)
#endif

/* Whether n more live bytes stay within FZ_LIVE_MAX (a larger request is skipped). */
static bool fz_fits(size_t n)
{
    return fz_live_bytes <= FZ_LIVE_MAX && n <= FZ_LIVE_MAX - fz_live_bytes;
}

static void fz_admit(unsigned s, void *p, size_t req, size_t align, bool to_end, bool zeroed,
                     const char *call)
{
    size_t a = align > HL_ALIGN ? align : HL_ALIGN;
    FZ_CHECK((uintptr_t)p % a == 0, "%s(%zu, align %zu) = %p: misaligned", call, req, align, p);
    size_t u = hl_malloc_usable_size(p);
    FZ_CHECK(u >= req, "%s(%zu) = %p: usable size %zu", call, req, p, u);
    int o = fz_overlap(p, u, s);
    FZ_CHECK(o < 0, "%s(%zu) = %p (usable %zu) overlaps live block %p (usable %zu, id %llu)",
             call, req, p, u, o < 0 ? NULL : (void *)fz_slot[o].p, o < 0 ? 0 : fz_slot[o].usable,
             o < 0 ? 0ull : (unsigned long long)fz_slot[o].id);
    struct fz_block *b = &fz_slot[s];
    *b = (struct fz_block){ p, req, u, align, 0 };
    if (zeroed) fz_verify(b, req, call);             /* id 0: the request must be zeros */
    b->len = to_end ? u : req;
    b->id = ++fz_next_id;
    fz_stamp(b->p, 0, b->len, b->id);
    fz_live_bytes += b->len;
}

static void fz_release(unsigned s, const char *when)
{
    struct fz_block *b = &fz_slot[s];
    fz_verify(b, b->len, when);
    FZ_CHECK(hl_malloc_usable_size(b->p) == b->usable, "%s: usable size of %p changed from "
             "%zu to %zu", when, (void *)b->p, b->usable, hl_malloc_usable_size(b->p));
    fz_live_bytes -= b->len;
}

static void fz_free(unsigned s)
{
    if (!fz_slot[s].p) return;
    fz_release(s, "before free");
    hl_free(fz_slot[s].p);
    fz_slot[s].p = NULL;
}

static void fz_realloc(const struct fz_op *o, bool array)
{
    struct fz_block *b = &fz_slot[o->slot];
    size_t k = array ? o->n : 1, total;
    bool overflow = __builtin_mul_overflow(k, o->size, &total);
    if (!b->p) {
        if (overflow || !fz_fits(total)) return;
        void *p = array ? hl_reallocarray(NULL, k, o->size) : hl_realloc(NULL, total);
        FZ_CHECK(p, "realloc(NULL, %zu) failed", total);
        fz_admit(o->slot, p, total, 0, o->flags & 1, false, "realloc(NULL)");
        return;
    }
    fz_release(o->slot, "before realloc");
    if (overflow) {
        errno = 0;
        void *q = hl_reallocarray(b->p, k, o->size);
        FZ_CHECK(!q && errno == ENOMEM, "reallocarray(%p, %zu, %zu) overflows: got %p, errno "
                 "%d", (void *)b->p, k, o->size, q, errno);
        fz_live_bytes += b->len;
        fz_verify(b, b->len, "after a failed reallocarray");
        return;
    }
    if (!fz_fits(total)) { fz_live_bytes += b->len; return; }
    void *q = array ? hl_reallocarray(b->p, k, o->size) : hl_realloc(b->p, total);
    if (total == 0) {                                  /* frees, as glibc does */
        FZ_CHECK(!q, "realloc(%p, 0) = %p: expected the block freed and NULL", (void *)b->p, q);
        b->p = NULL;
        return;
    }
    FZ_CHECK(q, "realloc(%p, %zu) failed", (void *)b->p, total);
    struct fz_block old = *b;
    b->p = NULL;                                       /* out of the overlap check */
    size_t keep = old.len < total ? old.len : total;
    struct fz_block moved = { q, keep, 0, 0, old.id };
    fz_verify(&moved, keep, "prefix after realloc");
    size_t u = hl_malloc_usable_size(q);
    FZ_CHECK((uintptr_t)q % HL_ALIGN == 0 && u >= total, "realloc(%zu) = %p: usable %zu", total,
             q, u);
    int x = fz_overlap(q, u, FZ_SLOTS);
    FZ_CHECK(x < 0, "realloc(%zu) = %p (usable %zu) overlaps live block %p", total, q, u,
             x < 0 ? NULL : (void *)fz_slot[x].p);
    size_t len = (o->flags & 1) ? u : total;           /* extend the stamp of the same id */
    fz_stamp(q, keep, len, old.id);
    *b = (struct fz_block){ q, len, u, 0, old.id };
    fz_live_bytes += len;
}

/* align: posix_memalign and aligned_alloc reject what is not a power of two (and posix_memalign
 * what is not a multiple of a pointer) with EINVAL; memalign rounds it up, as glibc does. */
static void fz_aligned(const struct fz_op *o)
{
    size_t n = o->size, al = o->align;
    bool pow2 = hl_is_pow2(al);
    void *p = (void *)&fz_slot;                        /* must stay unchanged on error */
    errno = 0;
    switch (o->kind) {
    case FZ_POSIX_MEMALIGN: {
        int r = hl_posix_memalign(&p, al, n);
        if (!pow2 || al % sizeof(void *)) {
            FZ_CHECK(r == EINVAL && p == (void *)&fz_slot, "posix_memalign(align %zu): %d", al, r);
            return;
        }
        FZ_CHECK(r == 0, "posix_memalign(%zu, %zu) = %d", al, n, r);
        break;
    }
    case FZ_ALIGNED_ALLOC:
        p = hl_aligned_alloc(al, n);
        if (!pow2) {
            FZ_CHECK(!p && errno == EINVAL, "aligned_alloc(align %zu) = %p", al, p);
            return;
        }
        break;
    case FZ_MEMALIGN:
        p = hl_memalign(al, n);
        while (!hl_is_pow2(al)) al++;
        break;
    case FZ_VALLOC: p = hl_valloc(n); al = HL_PAGE; break;
    default:
        p = hl_pvalloc(n);
        al = HL_PAGE;
        n = (n + HL_PAGE - 1) / HL_PAGE * HL_PAGE;     /* pvalloc: whole pages usable */
        break;
    }
    FZ_CHECK(p, "aligned allocation (kind %d) of %zu bytes, align %zu failed", o->kind, n, al);
    fz_admit(o->slot, p, n, al, o->flags & 1, false, "aligned allocation");
}

static void fz_calloc(const struct fz_op *o)
{
    size_t k = o->n, total;
    if (__builtin_mul_overflow(k, o->size, &total)) {
        errno = 0;
        void *p = hl_calloc(k, o->size);
        FZ_CHECK(!p && errno == ENOMEM, "calloc(%zu, %zu) overflows: got %p", k, o->size, p);
        return;
    }
    if (!fz_fits(total)) return;
    void *p = hl_calloc(k, o->size);
    FZ_CHECK(p, "calloc(%zu, %zu) failed", k, o->size);
    fz_admit(o->slot, p, total, 0, o->flags & 1, true, "calloc");
}

/* A request of FZ_HUGE bytes or more fails with ENOMEM (EINVAL first for a bad alignment),
 * and a realloc's block stays as it was. */
static void fz_huge(const struct fz_op *o)
{
    struct fz_block *b = &fz_slot[o->slot];
    size_t n = o->size, al = o->align;
    void *p = NULL;
    int err = ENOMEM, r = 0;
    errno = 0;
    switch (o->kind) {
    case FZ_MALLOC: p = hl_malloc(n); break;
    case FZ_CALLOC: p = hl_calloc(o->n, n); break;
    case FZ_REALLOC: case FZ_REALLOCARRAY:
        if (b->p) fz_release(o->slot, "before a huge realloc");
        p = o->kind == FZ_REALLOC ? hl_realloc(b->p, n) : hl_reallocarray(b->p, 1, n);
        break;
    case FZ_POSIX_MEMALIGN:
        if (!hl_is_pow2(al) || al % sizeof(void *)) err = EINVAL;
        r = hl_posix_memalign(&p, al, n);
        FZ_CHECK(r == err && !p, "posix_memalign(%zu, %zu) = %d, not %d", al, n, r, err);
        return;
    case FZ_ALIGNED_ALLOC:
        if (!hl_is_pow2(al)) err = EINVAL;
        p = hl_aligned_alloc(al, n);
        break;
    case FZ_MEMALIGN: p = hl_memalign(al, n); break;
    case FZ_VALLOC: p = hl_valloc(n); break;
    default: p = hl_pvalloc(n); break;
    }
    FZ_CHECK(!p && errno == err, "a call of kind %d for %zu bytes (align %zu) = %p, errno %d, "
             "not NULL and %d", o->kind, n, al, p, errno, err);
    if ((o->kind == FZ_REALLOC || o->kind == FZ_REALLOCARRAY) && b->p) {
        fz_live_bytes += b->len;
        fz_verify(b, b->len, "after a failed realloc");
    }
}

/* One operation on the calling thread (switches and exits are the driver's). */
static void fz_run(const struct fz_op *o)
{
    struct fz_block *b = &fz_slot[o->slot];
    fz_ops++;
    if (o->kind != FZ_USABLE && o->kind != FZ_REALLOC && o->kind != FZ_REALLOCARRAY)
        fz_free(o->slot);                             /* a new block replaces the slot's */
    if (o->size >= FZ_HUGE && o->kind != FZ_USABLE && o->kind != FZ_FREE) {
        fz_huge(o);
        return;
    }
    if (o->kind >= FZ_POSIX_MEMALIGN && o->kind <= FZ_PVALLOC) {
        if (fz_fits(o->size)) fz_aligned(o);
        return;
    }
    switch (o->kind) {
    case FZ_MALLOC:
        if (!fz_fits(o->size)) return;
        void *p = fz_hand_out(o->size, o->slot);
        FZ_CHECK(p, "malloc(%zu) failed", o->size);
        fz_admit(o->slot, p, o->size, 0, o->flags & 1, false, "malloc");
        break;
    case FZ_CALLOC: fz_calloc(o); break;
    case FZ_REALLOC: fz_realloc(o, false); break;
    case FZ_REALLOCARRAY: fz_realloc(o, true); break;
    case FZ_USABLE:
        if (!b->p) { FZ_CHECK(hl_malloc_usable_size(NULL) == 0, "usable size of NULL"); break; }
        fz_release(o->slot, "usable size");
        fz_live_bytes += b->len;
        break;
    default: break;                                    /* FZ_FREE: done above */
    }
}

/* ---- worker threads: each runs a stretch of operations while the main thread waits -------- */

static void *fz_worker_main(void *arg)
{
    struct fz_worker *w = arg;
    for (;;) {
        while (sem_wait(&w->go)) {}
        if (w->quit) return NULL;
        for (size_t i = 0; i < w->n; i++) fz_run(&w->ops[i]);
        sem_post(&w->done);
    }
}

static void fz_on_worker(unsigned t, const struct fz_op *ops, size_t n)
{
    struct fz_worker *w = &fz_workers[t];
    if (!w->alive) {
        w->quit = false;
        FZ_CHECK(!pthread_create(&w->tid, NULL, fz_worker_main, w), "pthread_create");
        w->alive = true;
    }
    w->ops = ops;
    w->n = n;
    sem_post(&w->go);
    while (sem_wait(&w->done)) {}
}

static void fz_exit_worker(unsigned t)
{
    struct fz_worker *w = &fz_workers[t];
    if (!w->alive) return;
    w->quit = true;
    sem_post(&w->go);
    pthread_join(w->tid, NULL);
    w->alive = false;
}

/* ---- decoding: op byte, then slot byte (its high bit: use the block to its usable end), then
 * the arguments its kind takes; a size is two bytes: three bits of range, thirteen of value. */

static size_t fz_size(const uint8_t *d)
{
    size_t v = ((size_t)(d[0] & 31) << 8) | d[1];
    switch (d[0] >> 5) {
    case 6: return v;                                 /* an eighth .. 8 KiB */
    case 7:                                           /* a sixteenth .. 64 KiB, .. 1 MiB, */
        if (v >= 8160) return SIZE_MAX >> (v - 8160) % 17;   /* or one no space can hold */
        return v < 4096 ? v * 16 : v * 128;
    default: return v % 257;                          /* three quarters 0 .. 256 */
    }
}

static size_t fz_align(uint8_t a)
{
    return (a & 0x80) ? (size_t)(a & 0x7f) : (size_t)1 << (a % 21);   /* any, or 1 .. 1 MiB */
}

/* Count n for calloc/reallocarray: small, or (flags 8 and 2) one that makes n x size overflow. */
static size_t fz_count(uint8_t c, unsigned flags, size_t size)
{
    if ((flags & 10) == 10 && size) return SIZE_MAX / size + 1 + c % 16;
    return size > 65536 ? 1 : 1 + c % 16;          /* calloc's memset: at most 1 MiB */
}

static size_t fz_decode(const uint8_t *d, size_t len, struct fz_op *out, size_t max)
{
    static const unsigned char need[] = {
        [FZ_MALLOC] = 4, [FZ_CALLOC] = 5, [FZ_FREE] = 2, [FZ_REALLOC] = 4,
        [FZ_REALLOCARRAY] = 5, [FZ_POSIX_MEMALIGN] = 5, [FZ_ALIGNED_ALLOC] = 5,
        [FZ_MEMALIGN] = 5, [FZ_VALLOC] = 4, [FZ_PVALLOC] = 4, [FZ_USABLE] = 2,
        [FZ_SWITCH] = 1, [FZ_HANDOFF] = 1, [FZ_EXIT] = 1 };
    size_t n = 0;
    for (size_t i = 0; i < len && n < max;) {
        struct fz_op o = { .kind = fz_kinds[d[i] & 15], .flags = d[i] >> 4 };
        if (o.kind == FZ_VALLOC && (o.flags & 4)) o.kind = FZ_PVALLOC;
        if (i + need[o.kind] > len) break;
        const uint8_t *a = d + i + 1;
        if (need[o.kind] > 1) {
            o.slot = a[0] % FZ_SLOTS;
            o.flags = (o.flags & ~1u) | (a[0] >> 7);
        }
        switch (o.kind) {
        case FZ_CALLOC: case FZ_REALLOCARRAY:
            o.size = fz_size(a + 2);
            o.n = fz_count(a[1], o.flags, o.size);
            break;
        case FZ_POSIX_MEMALIGN: case FZ_ALIGNED_ALLOC: case FZ_MEMALIGN:
            o.align = fz_align(a[1]);
            o.size = fz_size(a + 2);
            break;
        case FZ_MALLOC: case FZ_REALLOC: case FZ_VALLOC: case FZ_PVALLOC:
            o.size = fz_size(a + 1);
            break;
        default: break;
        }
        i += need[o.kind];
        out[n++] = o;
    }
    return n;
}

/* ---- the driver ------------------------------------------------------------------------ */

static double fz_clock(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void fz_report(void)
{
    double s = fz_clock(CLOCK_MONOTONIC) - fz_t0, cpu = fz_clock(CLOCK_PROCESS_CPUTIME_ID);
    fprintf(stderr, "fuzz_malloc: strategy %s: %llu operations in %llu inputs, %.1f s (%.1f s "
            "CPU), %.0f operations/s%s\n", fz_strategy, fz_ops, fz_inputs, s, cpu,
            s > 0 ? fz_ops / s : 0.0, fz_budget && fz_ops < fz_budget ?
            " (fewer than FUZZ_MALLOC_OPS: the time limit came first)" : "");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_strategy = rel_require_hoardlab();
    for (unsigned t = 0; t < FZ_WORKERS; t++) {
        sem_init(&fz_workers[t].go, 0, 0);
        sem_init(&fz_workers[t].done, 0, 0);
    }
    const char *budget = getenv("FUZZ_MALLOC_OPS");
    fz_budget = budget ? strtoull(budget, NULL, 10) : 0;
    fz_t0 = fz_clock(CLOCK_MONOTONIC);
    atexit(fz_report);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fz_op ops[8192];
    size_t n = fz_decode(data, size, ops, sizeof ops / sizeof ops[0]);
    unsigned cur = 0;                                  /* 0: main thread, 1..: a worker */
    fz_inputs++;
    for (size_t i = 0; i < n;) {
        const struct fz_op *o = &ops[i];
        if (o->kind == FZ_SWITCH) {
            cur = o->flags % (FZ_WORKERS + 1);
            i++;
        } else if (o->kind == FZ_EXIT) {
            unsigned t = o->flags % FZ_WORKERS;
            fz_exit_worker(t);
            if (cur == t + 1) cur = 0;
            i++;
        } else if (o->kind == FZ_HANDOFF) {            /* the next operation, on a worker */
            if (i + 1 < n && ops[i + 1].kind < FZ_SWITCH)
                fz_on_worker(o->flags % FZ_WORKERS, &ops[i + 1], 1);
            i += 2;
        } else {                                       /* a stretch on the current thread */
            size_t j = i;
            while (j < n && ops[j].kind < FZ_SWITCH) j++;
            if (cur) fz_on_worker(cur - 1, &ops[i], j - i);
            else for (size_t k = i; k < j; k++) fz_run(&ops[k]);
            i = j;
        }
    }
    for (unsigned t = 0; t < FZ_WORKERS; t++) fz_exit_worker(t);
    for (unsigned s = 0; s < FZ_SLOTS; s++) {
        if (!fz_slot[s].p) continue;
        fz_release(s, "at the end of the input");
        hl_free(fz_slot[s].p);
        fz_slot[s].p = NULL;
    }
    fz_live_bytes = 0;
    if (fz_budget && fz_ops >= fz_budget) {            /* done: see the file's comment */
        fz_report();
        fflush(NULL);
        _exit(0);
    }
    return 0;
}

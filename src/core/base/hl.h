/* hl.h — the one internal header of libhoardlab: glossary, then the prototypes of every core
 * mechanism grouped under the file that defines them, so a name leads straight to its file.
 *
 * Glossary
 *   block        what malloc hands out; its usable size is its size class's size.
 *   size class   a block size; a table of them (pow2 or geometric) maps a request to a class.
 *   heap         a set of free blocks / superblocks a thread allocates from; may be shared.
 *   superblock   an S-aligned region of S bytes holding blocks of one size class; its header
 *                sits at its start, so (block & ~(S-1)) finds it.
 *   owner        the heap a superblock (and so each of its blocks) belongs to now.
 *   global heap  heap 0 of `hoard`: where per-processor heaps park mostly-empty superblocks.
 *   fullness group  a bin of superblocks whose fraction in use lies in one range.
 *   u_i, a_i     bytes in use in heap i, bytes held by heap i (Hoard §3).
 *   large object a request above large_threshold: one OS mapping of its own, kept in a bounded
 *                cache when freed (large.c).
 *   arena        the one reserved address range holding every strategy block (arena.c):
 *                free() knows a strategy block by one subtraction and comparison.
 *   page map     which mechanism owns each OS page outside the arena: how free() routes a
 *                large object or a foreign pointer (pagemap.c).
 *   front        the fast path of malloc and free: one indirect jump (front.h) to the
 *                strategy's entry, whose inlined comparison (entry.h) sends everything else
 *                to interpose.c's slow path.
 *   bootstrap    a static arena serving calls that arrive while init is in progress.
 *   strategy     one row of the dispatch table: a complete allocator built from the above.
 *
 * Files are named below by their name alone: src/core/FOLDER/NAME, a folder per layer (the
 * layer comment after the dispatch table's section).
 */
#ifndef HL_H
#define HL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "hoardlab.h"

/* Everything declared from here on is internal to the library: hidden, so that code reaches
 * it without going through the GOT (the public API says HL_EXPORT). */
#pragma GCC visibility push(hidden)

#include "config.h"

#define HL_ALIGN      16u      /* every block is aligned to at least this */
#define HL_CACHE_LINE 64u
#define HL_PAGE       4096u

#define hl_likely(x)   __builtin_expect(!!(x), 1)
#define hl_unlikely(x) __builtin_expect(!!(x), 0)
#define HL_EXPORT      __attribute__((visibility("default")))
#define HL_COLD        __attribute__((noinline, cold))   /* a slow path: keep it out of the fast one */
#define HL_TLS         __thread __attribute__((tls_model("initial-exec")))
#define HL_CACHE_ALIGNED __attribute__((aligned(HL_CACHE_LINE)))

/* Ask for p's cache line in this core's cache, exclusive (to be written), without waiting and
 * without faulting whatever p is (NULL too). x86-64's PREFETCHW is written out because GCC
 * makes __builtin_prefetch(p, 1) a read prefetch (PREFETCHT0) unless built for a CPU with
 * PRFCHW; tlab.c checks the running CPU has it (tlab_prefetch). */
static inline __attribute__((always_inline)) void hl_prefetch_write(const void *p)
{
#if defined(__x86_64__)
    __asm__ volatile("prefetchw (%0)" : : "r"(p));
#else
    __builtin_prefetch(p, 1);
#endif
}

static inline size_t hl_align_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }
static inline bool hl_is_pow2(size_t n) { return n && !(n & (n - 1)); }
static inline uint64_t hl_clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
/* CLOCK_MONOTONIC_COARSE in ns: the vDSO's, no system call; it moves in ticks of 1-4 ms. */
static inline uint64_t hl_coarse_ns(void) { return hl_clock_ns(CLOCK_MONOTONIC_COARSE); }
/* CLOCK_MONOTONIC in ns: the same clock, precise (also the vDSO's). */
static inline uint64_t hl_now_ns(void) { return hl_clock_ns(CLOCK_MONOTONIC); }

/* ---- dispatch.c: the dispatch table (its rows: front/registry.c) ---------------------------- */

struct hl_thread;

/* A strategy's malloc and free, each built twice by stats.h's HL_MALLOC_PAIR / HL_FREE_PAIR:
 * plain, for the core's own calls, and as the entry that the exported malloc and free jump
 * to, with entry.h's test of the call inlined before the fast path (one function: the
 * thread's TLS address is loaded once for both). */
struct hl_paths {
    /* 0 < size <= hl_large_threshold. Counts the block (hl_stats_malloc) with the size it
     * knows (the counted build); NULL with errno ENOMEM when the OS refuses memory. */
    void  *(*malloc)(size_t size);
    void   (*free)(void *p);                      /* p is the strategy's own; hl_stats_free */
    void  *(*malloc_entry)(size_t size);          /* any size: hl_malloc_slow if not its */
    void   (*free_entry)(void *p);                /* any pointer: hl_free_slow if not its */
};

struct hl_strategy {
    const char *name, *summary;
    /* Config values this strategy's paper uses where the table default differs, applied
     * below the config file and the environment, e.g. "size_classes=pow2". NULL: none. */
    const char *defaults;
    int    (*init)(void);                         /* 0 or -1 (message already printed) */
    /* Its malloc and free (struct hl_paths), counted and built without counting (stats.h:
     * HL_MALLOC_PAIR), for counting = off. */
    struct hl_paths counted, uncounted;
    /* 16 < align, size + align <= hl_large_threshold. NULL: core serves it as a large object. */
    void  *(*memalign)(size_t align, size_t size);
    size_t (*usable_size)(const void *p);
    void   (*thread_exit)(struct hl_thread *t);   /* NULL: nothing per thread */
    void   (*fork)(int phase);                    /* fork.c: take, release, reset its locks */
    void   (*stats)(struct hoardlab_stats *s);    /* add strategy-level figures; may be NULL */
};

/* The paths of a malloc and a free made by stats.h's HL_MALLOC_PAIR and HL_FREE_PAIR, named
 * as they name them; a row's, counted and uncounted. */
#define HL_PATHS(m, f) { m, f, m##_entry, f##_entry }
#define HL_ROW_PATHS(m, f)                                                                    \
    .counted = HL_PATHS(m, f), .uncounted = HL_PATHS(m##_uncounted, f##_uncounted)

/* The rows, NULL-terminated, and a row by name: front/registry.c, the top of the core (below
 * it, the configuration knows the strategies by name: hl_strategy_names, config.h). */
extern const struct hl_strategy *const hl_strategies[];
const struct hl_strategy *hl_strategy_find(const char *name);
/* The active row, set by init (dispatch.c, as the pointers below). */
extern const struct hl_strategy *hl_active;
/* The paths every call reaches: the active row's (counted or not, by `counting`), chosen
 * by init before the row's init runs, which may choose others for its knobs (hoard: tlab =
 * on). The core's own calls (interpose.c) use hl_front_malloc_fn and hl_front_free_fn, set
 * by init; the exported malloc and free jump to the entries (front.h), which leave for
 * interpose.c's slow paths through hl_entry_exit_malloc and _free: both set by interpose.c
 * when the first call after init opens the entries (the layers below the front do not name
 * the front, and init is below interpose). */
extern const struct hl_paths *hl_paths;
extern void *(*hl_front_malloc_fn)(size_t size);
extern void (*hl_front_free_fn)(void *p);
extern void *(*hl_entry_exit_malloc)(size_t size);
extern void (*hl_entry_exit_free)(void *p);

/* The layers, bottom up, are src/core's folders: base (this header's), ds, mem, heap, remote,
 * heaps, cache, then src/strategies, then instruments and front. A file uses only files of its
 * folder or below; every folder is on the include path, so the sections below name files by
 * their name alone. The order is written once, SRC_FOLDERS in
 * tools/hoardlab_lib/layers/order.py (README "Layers" shows it; `hoardlab layers` checks it). */

/* ---- msg.c: messages ------------------------------------------------------------------------ */

/* One line "hoardlab: <msg>" on stderr, without stdio or malloc; then _exit(2). */
_Noreturn void hl_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same line without exiting (for checks that abort themselves). */
void hl_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* pattern with each "%p" replaced by the process id, into dst (cap bytes): trace's and
 * heap_log's file, one per process. */
void hl_msg_path(const char *pattern, char *dst, size_t cap);

/* ---- bootstrap.c: the arena serving calls before and during init --------------------------- */

void *hl_bootstrap_alloc(size_t size, size_t align);
bool hl_bootstrap_owns(const void *p);
size_t hl_bootstrap_usable(const void *p);

/* ---- init.c: start-up and exit; fork.c: the one fork path -------------------------------- */

/* 0 not started, 1 in progress, 2 done. Everything below init.c may assume 2 unless noted. */
extern _Atomic int hl_init_state;
void hl_init(void);                     /* idempotent; other threads wait for the first */
void hl_init_maybe(bool force);         /* from malloc: waits for `environ` unless force */
void hl_at_exit(void);                  /* trace and HOARD_STATS output */
/* Fork phases of every lock-holding part's hl_*_fork(phase), called by fork.c only. */
enum { HL_FORK_PREPARE, HL_FORK_PARENT, HL_FORK_CHILD };
void hl_fork_init(void);                /* init: atfork(fork.c's prepare, parent, child) */

/* ---- os.c: aligned regions from the OS, counted as A --------------------------------------- */

/* What memory from the OS is for. HELD: the memory a strategy holds for blocks (superblocks
 * with their headers, single-heap regions, hyperblocks, large objects): the policy's A, as
 * the Hoard paper measures it. META: hoardlab's own structures (heaps, descriptors, size-class
 * table, page map, checks tables), counted as the pages touched. os_bytes is the sum. */
enum hl_os_use { HL_OS_HELD, HL_OS_META };
/* size a multiple of HL_PAGE, align a power of two >= HL_PAGE. NULL on failure (errno set). */
void *hl_os_alloc(size_t size, size_t align, enum hl_os_use use);
void hl_os_free(void *p, size_t size, enum hl_os_use use);
void *hl_os_map(size_t size, size_t align);   /* the same, counted by the caller */
/* The system calls, each a possible injected fault: mmap(NULL, size, read/write, private,
 * anonymous | flags), munmap, mremap(MREMAP_MAYMOVE, and MREMAP_FIXED at dest unless dest
 * is NULL), madvise. Return values as the kernel's. */
void *hl_os_mmap(size_t size, int flags);
int hl_os_munmap(void *p, size_t size);
void *hl_os_mremap(void *p, size_t from, size_t to, void *dest);
int hl_os_madvise(void *p, size_t size, int advice);
void hl_os_place(void *p, size_t size); /* NUMA placement by the `numa` key */
void hl_os_set_numa(int mode);          /* the `numa` key (HL_NUMA_*), from config.c */
void hl_os_set_huge(int on);            /* `hugepages` != off, from arena.c: advise large maps */
bool hl_os_huge(size_t size);           /* hugepages != off and size >= 2 MiB: advised */
void hl_os_advise_huge(void *p, size_t size);  /* MADV_HUGEPAGE if hl_os_huge(size) */
#define HL_HUGE_REGION ((size_t)2 << 20)   /* what a transparent huge page backs */
int hl_nprocs(void);                    /* processors this process may run on: P */
bool hl_os_valgrind(void);              /* running under valgrind, whose CPU is emulated */
void hl_os_account(enum hl_os_use use, ptrdiff_t bytes);   /* count bytes in or out */
size_t hl_os_bytes(void), hl_os_bytes_peak(void);
size_t hl_os_held(void), hl_os_held_peak(void), hl_os_meta(void);
void hl_os_reset_peak(void);

/* ---- fault.c: injected OS failures (the faults build only) ------------------------------ */

/* Whether this OS call (an hl_os_ system call above, or an arena growth) fails. Built with
 * -Dfaults=true, fault.c counts the calls and fails the one numbered fault_at, and each with
 * probability fault_rate (fault_seed); otherwise a constant false: no code, not even a branch.
 * config.c hands the keys over with HL_FAULT_CONFIGURE, the only mention of them outside. */
enum hl_os_call { HL_CALL_MMAP, HL_CALL_MUNMAP, HL_CALL_MREMAP, HL_CALL_MADVISE, HL_CALL_ARENA,
                  HL_CALL_KINDS };
#ifdef HL_FAULTS
bool hl_fault_now(enum hl_os_call kind);
void hl_fault_set(long at, double rate, long seed, bool count);
/* Calls made and failed so far, in all and (if the arrays are not NULL) of each kind. */
uint64_t hl_fault_calls(void), hl_fault_failed(void);
void hl_fault_counts(uint64_t calls[HL_CALL_KINDS], uint64_t failed[HL_CALL_KINDS]);
#define HL_FAULT_CONFIGURE(cfg) \
    hl_fault_set((cfg).fault_at, (cfg).fault_rate, (cfg).fault_seed, (cfg).fault_count)
#else
static inline bool hl_fault_now(enum hl_os_call kind) { (void)kind; return false; }
#define HL_FAULT_CONFIGURE(cfg) ((void)0)
#endif

/* ---- arena.c: the address range holding every strategy block ------------------------------ */

void hl_arena_init(void);               /* reserve arena_reserve bytes of address space */
/* size a multiple of HL_PAGE, align a power of two; counted in A as `use`. NULL (ENOMEM) when
 * full. */
void *hl_arena_alloc(size_t size, size_t align, enum hl_os_use use);
/* Back to the OS; the range is kept for reuse. */
void hl_arena_free(void *p, size_t size, enum hl_os_use use);
void hl_arena_fork(int phase);          /* 0 prepare, 1 parent, 2 child */
/* `hugepages` (config.h): the mode in effect; the number of the arena's 2 MiB regions on huge
 * pages now (AnonHugePages of its VMAs in /proc/self/smaps; 0 under off; stats.c reads it
 * through hl_stats_huge_fn, which arena.c sets); whether the arena's base is region-aligned. */
int hl_arena_huge_mode(void);
long hl_arena_huge_regions(void);
bool hl_arena_huge_aligned(void);
extern _Atomic uintptr_t hl_arena_base, hl_arena_span;
static inline bool hl_arena_owns(const void *p)
{
    uintptr_t span = atomic_load_explicit(&hl_arena_span, memory_order_acquire);
    return (uintptr_t)p - atomic_load_explicit(&hl_arena_base, memory_order_relaxed) < span;
}

/* ---- pagemap.c: which mechanism owns each OS page outside the arena ------------------------ */

enum hl_owner { HL_OWNER_NONE = 0, HL_OWNER_LARGE, HL_OWNER_STRATEGY };
/* Mark [p, p + size) as owner's. false (and no page marked) when the OS refused memory for the
 * page map; clearing (HL_OWNER_NONE) never fails. */
bool hl_pagemap_set(const void *p, size_t size, enum hl_owner owner);
/* Map ahead the page map's memory for any one range of size bytes, so that the next set of
 * such a range cannot fail; false when the OS refused it. */
bool hl_pagemap_prepare(size_t size);
/* Who owns p: HL_OWNER_STRATEGY inside the arena, else the page map's entry for p's page
 * (HL_OWNER_LARGE, or HL_OWNER_NONE for memory hoardlab never handed out). */
enum hl_owner hl_pagemap_get(const void *p);

/* ---- meta.c: memory for the allocator's own structures ---------------------------------- */

/* Zeroed, HL_CACHE_LINE-aligned, never freed (heaps and descriptors are pooled and reused). */
void *hl_meta_alloc(size_t size);
void hl_meta_fork(int phase);           /* 0 prepare, 1 parent, 2 child */
/* Non-NULL while the census watches: a strategy touched one of its metadata objects (a
 * free-list head), and the census counts touches of a cache line last touched by another
 * thread for another object. Set by observe.c. */
extern void (*hl_meta_touched)(const void *object);
/* Non-NULL while the census watches: how many blocks starting in [start, start + bytes) a
 * live thread other than the caller holds (Hoard Table 3's count, when a heap takes a
 * superblock from the global heap). Set by observe.c. */
extern uint64_t (*hl_meta_foreign_blocks)(const void *start, size_t bytes);

/* large.c's objects above large_threshold (heap/) are declared in large.h, which the files
 * that use them include: this header, at the bottom, includes only base/'s. */

/* ---- sizeclass.c: request size -> class ------------------------------------------------- */

#define HL_MAX_CLASSES 512
struct hl_classes {
    unsigned count;                      /* classes 0 .. count-1 */
    size_t   granules;                   /* entries of of16 */
    size_t   size[HL_MAX_CLASSES];       /* block size of each class, multiples of 16 */
    uint16_t of16[];                     /* class of a request of (n+15)/16 granules */
};
/* Build the table selected by size_classes / size_class_base up to max_size (inclusive). */
int hl_classes_init(size_t max_size);
extern const struct hl_classes *hl_classes;
static inline unsigned hl_class_of(size_t n) { return hl_classes->of16[(n + 15) >> 4]; }
static inline size_t hl_class_size(unsigned c) { return hl_classes->size[c]; }

/* ---- thread.c: the thread registry ----------------------------------------------------------- */

/* Per-thread counters, written by their own thread only (stats.h's HL_OWN_ADD), so the fast
 * path never writes a shared cache line; hoardlab_stats() sums them with relaxed loads. They
 * are the statistics of HOARDLAB_STATS (include/hoardlab.h) whose `from` is `thread`, in its
 * order: HL_IF_COUNTER(from, ...) keeps its other arguments for those only. */
#define HL_IF_COUNTER(from, ...) HL_IF_COUNTER_##from(__VA_ARGS__)
#define HL_IF_COUNTER_thread(...) __VA_ARGS__
#define HL_IF_COUNTER_total(...)

struct hl_counters {
#define HL_COUNTER_FIELD(name, from, across, help) HL_IF_COUNTER(from, uint64_t name;)
    HOARDLAB_STATS(HL_COUNTER_FIELD)
#undef HL_COUNTER_FIELD
    int64_t malloc_credit, free_credit;  /* stats.h: bytes left of stats_batch, each way */
};

struct hl_thread {
    /* front.h: malloc(n) with n - 1 < small_max and free(p) with p - base < span go straight
     * to the strategy. Zero until the thread's first call registers it (and for good while
     * checks or observers are on), so that first call takes the slow path. */
    size_t small_max;
    uintptr_t base, span;
    unsigned id;                 /* dense: the lowest id no live thread holds, reused */
    int state;                   /* 0 unregistered, 1 live, 2 exited (TLS teardown) */
    void *heap;                  /* the strategy's per-thread data, NULL until it sets it */
    /* tlab.h: the thread's TLAB bins: NULL until its first slow call (interpose.c's ready,
     * before any path can reach a TLAB), then hl_tlab_none until it has its own. Here, not
     * a TLS variable of its own, so that a fast path loads one TLS address. */
    struct hl_tlab_bin *tlab_bins;
    /* tlab_scavenge_ms: 1 while the thread is inside a TLAB fast path (tlab.h's Scavenging) */
    uint32_t tlab_in;
    void *census, *trace;        /* per-thread buffers of those mechanisms */
    struct hl_counters ctr;
    struct hl_thread *next;      /* registry list of live threads */
};

extern HL_TLS struct hl_thread hl_me;
extern struct hl_tlab_bin *const hl_tlab_none;   /* tlab.c: the bins of a thread without */
#include "entry.h"
void hl_thread_register(void);          /* slow path of hl_self(); sets state 1 */
static inline struct hl_thread *hl_self(void)
{
    if (hl_unlikely(hl_me.state == 0)) hl_thread_register();
    return &hl_me;
}
/* Visit every live thread under the registry lock (stats aggregation). */
void hl_thread_foreach(void (*fn)(struct hl_thread *t, void *arg), void *arg);
unsigned hl_thread_count(void);         /* highest id ever + 1 */
void hl_thread_fork(int phase);
/* Non-NULL while the census watches: told of each thread's exit. Set by observe.c. */
extern void (*hl_thread_exit_observer)(struct hl_thread *t);
/* The statistics' (stats.c, set at init), so that the registry calls up to them without
 * using them: a thread registers (its counters start), a thread exits (under the registry
 * lock: its counts are kept). */
extern void (*hl_thread_start_hook)(struct hl_thread *t);
extern void (*hl_thread_fold_hook)(struct hl_thread *t);

/* ---- lock.h: spin or futex mutex ----------------------------------------------------------- */
#include "lock.h"

/* ---- stats.h, stats.c: counters, U and A, counted locks, the exit report ------------------- */

#include "stats.h"
void hl_stats_init(void);               /* before any thread registers: the thread hooks */
void hl_stats_at_exit(void);            /* HOARD_STATS output */
void hl_stats_sum(struct hoardlab_stats *out);   /* api.c's hoardlab_stats, after init */
void hl_stats_reset_peaks(void);
/* U as published so far (within threads x stats_batch bytes; 0 with counting = off): the
 * heap log's live bytes. */
int64_t hl_stats_in_use_published(void);
/* U's change that no credit holds yet, in bytes: tlab.c's bins (hl_tlab_unseen), set by
 * hl_tlab_start when the TLAB's fast paths leave U to them; NULL otherwise. mine: the calling
 * thread's bins, which it marks seen (stats.c publishes it with the thread's credit); else
 * every live thread's, read only. */
extern int64_t (*hl_stats_unseen_fn)(bool mine);
extern long (*hl_stats_huge_fn)(void);  /* huge_regions, set by arena.c; NULL: 0 */
/* Bytes in large.c's cache of freed mappings, stored by large.c under its lock whenever they
 * change, read by the statistics without it (stats does not call into large.c: large.c sits
 * above it, on the page map and the purge). */
extern _Atomic size_t hl_stats_large_cached;

/* ---- interpose.c: the malloc family, checked once for every strategy -------------------------
 * libhoardlab.so exports these under the libc names (export.c); tests call them directly. */
void  *hl_malloc(size_t size);
void   hl_free(void *p);
void  *hl_malloc_slow(size_t size);     /* front.h's way out: init, size 0, large, observers */
void   hl_free_slow(void *p);
void  *hl_calloc(size_t n, size_t size);
void  *hl_realloc(void *p, size_t size);
void  *hl_reallocarray(void *p, size_t n, size_t size);
int    hl_posix_memalign(void **out, size_t align, size_t size);
void  *hl_aligned_alloc(size_t align, size_t size);
void  *hl_memalign(size_t align, size_t size);
void  *hl_valloc(size_t size);
void  *hl_pvalloc(size_t size);
size_t hl_malloc_usable_size(const void *p);


/* ---- observe.c, census.c, trace.c: observers of every block handed out and given back ------ */

/* True when census or trace is on; interpose.c then calls the hooks below. Off: one branch. */
extern bool hl_observing;
void hl_observe_init(void);             /* after config; sets hl_observing */
void hl_observe_alloc(void *p, size_t request, size_t usable, size_t align);
void hl_observe_free(void *p, size_t usable);
void hl_observe_at_exit(void);          /* trace: write the file */

/* census.c and trace.c, used by observe.c. */
bool hl_census_init(void);
void hl_census_alloc(struct hl_thread *t, void *p, size_t usable);
void hl_census_free(void *p, size_t usable);
void hl_census_touch(struct hl_thread *t, const void *object);
uint64_t hl_census_foreign_blocks(struct hl_thread *t, const void *start, size_t bytes);
void hl_census_thread_exit(struct hl_thread *t);
void hl_census_fork(int phase);
bool hl_trace_init(const char *path);
void hl_trace_alloc(struct hl_thread *t, void *p, size_t request, size_t usable, size_t align);
void hl_trace_free(struct hl_thread *t, void *p, size_t usable);
void hl_trace_write(void);
/* heaplog.c (heap_log): sets heap.h's hl_heap_observer; writes the file at exit. */
bool hl_heaplog_init(const char *path);
void hl_heaplog_write(void);

/* ---- superblock.c, heap.c, heapselect.c, remote frees: private heaps ----------------------
 * Their prototypes are in superblock.h, heap.h, heapselect.h and remote.h, included by the
 * strategies that use them: `private`, `ownership`, `hoard`. A strategy's own functions that
 * tests call are in its header beside it (src/strategies/hoard.h). */

/* ---- checks.c: `checks = on`, double free and foreign-pointer detection for every strategy -- */

/* hl_check_init (init.c, after the config) sets hl_checking from the `checks` key; when it is
 * on, interpose.c records every block handed out and checks every free, and a double free or
 * a free of a pointer hoardlab never returned prints one line naming it and aborts. */
extern bool hl_checking;
void hl_check_init(void);
void hl_check_alloc(void *p);
void hl_check_free(void *p);
void hl_checks_fork(int phase);

#pragma GCC visibility pop

#endif

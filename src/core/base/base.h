/* base.h — base/'s face, and the core's glossary: what every other file may use (messages,
 * memory from the OS, the lock, the bootstrap arena, the configuration, the dispatch table,
 * the thread registry, the statistics), grouped under the file that defines each name. The
 * layers above include their folder's face (F/F.h), which includes this one.
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
 *   large object a request above large_threshold: one OS mapping of its own (heap/large.c).
 *   arena        the one reserved address range holding every strategy block (mem/arena.c).
 *   page map     which mechanism owns each OS page outside the arena (mem/pagemap.c).
 *   front        the fast path of malloc and free: one indirect jump (front.h) to the
 *                strategy's entry, whose inlined comparison (entry.h) sends everything else
 *                to interpose.c's slow path.
 *   bootstrap    a static arena serving calls that arrive while init is in progress.
 *   strategy     one row of the dispatch table: a complete allocator built from the above.
 */
#ifndef HL_BASE_H
#define HL_BASE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "hoardlab.h"

/* Everything below is internal: hidden, reached without the GOT (the public API: HL_EXPORT). */
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

/* p's cache line, exclusive, without waiting or faulting (NULL too). PREFETCHW is written out:
 * GCC makes __builtin_prefetch(p, 1) a read prefetch unless built for a CPU with PRFCHW. */
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
/* CLOCK_MONOTONIC in ns, from the vDSO: coarse (ticks of 1-4 ms, cheaper) or precise. */
static inline uint64_t hl_coarse_ns(void) { return hl_clock_ns(CLOCK_MONOTONIC_COARSE); }
static inline uint64_t hl_now_ns(void) { return hl_clock_ns(CLOCK_MONOTONIC); }

/* ---- dispatch.c: the dispatch table (its rows: front/registry.c) ---------------------------- */
struct hl_thread;

/* A strategy's malloc and free, each built twice by stats.h's HL_MALLOC_PAIR / HL_FREE_PAIR:
 * plain, for the core's own calls, and as the entry the exported ones jump to (entry.h). */
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
    /* Its paper's values where the table's default differs ("size_classes=pow2"), below the
     * config file and the environment. NULL: none. */
    const char *defaults;
    int    (*init)(void);                         /* 0 or -1 (message already printed) */
    /* Its malloc and free, counted and not (counting = off), by stats.h's HL_MALLOC_PAIR. */
    struct hl_paths counted, uncounted;
    /* 16 < align, size + align <= hl_large_threshold. NULL: core serves it as a large object. */
    void  *(*memalign)(size_t align, size_t size);
    size_t (*usable_size)(const void *p);
    void   (*thread_exit)(struct hl_thread *t);   /* NULL: nothing per thread */
    void   (*fork)(int phase);                    /* fork.c: take, release, reset its locks */
    void   (*stats)(struct hoardlab_stats *s);    /* add strategy-level figures; may be NULL */
};

/* The paths HL_MALLOC_PAIR and HL_FREE_PAIR make, named as they name them; a row's, both. */
#define HL_PATHS(m, f) { m, f, m##_entry, f##_entry }
#define HL_ROW_PATHS(m, f)                                                                    \
    .counted = HL_PATHS(m, f), .uncounted = HL_PATHS(m##_uncounted, f##_uncounted)

/* The active row, set by init (dispatch.c, as the pointers below). */
extern const struct hl_strategy *hl_active;
/* The paths every call reaches: the active row's (counted or not), chosen by init before the
 * row's init, which may choose others for its knobs. The core's own calls use hl_front_*_fn
 * (set by init); the entries (front.h) leave for interpose.c's slow paths through
 * hl_entry_exit_* (set by interpose.c when the first call after init opens the entries). */
extern const struct hl_paths *hl_paths;
extern void *(*hl_front_malloc_fn)(size_t size);
extern void (*hl_front_free_fn)(void *p);
extern void *(*hl_entry_exit_malloc)(size_t size);
extern void (*hl_entry_exit_free)(void *p);

/* The phases of every lock-holding part's hl_*_fork(phase), called by front/fork.c only. */
enum { HL_FORK_PREPARE, HL_FORK_PARENT, HL_FORK_CHILD };

/* ---- msg.c: messages ------------------------------------------------------------------------ */
/* One line "hoardlab: <msg>" on stderr, without stdio or malloc; then _exit(2), or not (say). */
_Noreturn void hl_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hl_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* pattern with each "%p" replaced by the process id, into dst (cap bytes): a file a process. */
void hl_msg_path(const char *pattern, char *dst, size_t cap);

/* ---- bootstrap.c: the arena serving calls before and during init --------------------------- */
void *hl_bootstrap_alloc(size_t size, size_t align);
bool hl_bootstrap_owns(const void *p);
size_t hl_bootstrap_usable(const void *p);

/* ---- os.c: aligned regions from the OS, counted as A --------------------------------------- */
/* What memory from the OS is for. HELD: what a strategy holds for blocks, the policy's A as
 * the Hoard paper measures it. META: hoardlab's own structures, counted as the pages touched. */
enum hl_os_use { HL_OS_HELD, HL_OS_META };
/* size a multiple of HL_PAGE, align a power of two >= HL_PAGE. NULL on failure (errno set). */
void *hl_os_alloc(size_t size, size_t align, enum hl_os_use use);
void hl_os_free(void *p, size_t size, enum hl_os_use use);
void *hl_os_map(size_t size, size_t align);   /* the same, counted by the caller */
/* The system calls, each a possible injected fault, returning as the kernel's: a private
 * anonymous read/write mmap, munmap, mremap (MAYMOVE, and FIXED at dest unless NULL), madvise. */
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
/* Whether this OS call (an hl_os_ system call above, or an arena growth) fails: with
 * -Dfaults=true, the one numbered fault_at and each with probability fault_rate; otherwise a
 * constant false, no code. config.c hands the keys over with HL_FAULT_CONFIGURE. */
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

/* ---- meta.c: memory for the allocator's own structures ---------------------------------- */
/* Zeroed, HL_CACHE_LINE-aligned, never freed (heaps and descriptors are pooled and reused). */
void *hl_meta_alloc(size_t size);
void hl_meta_fork(int phase);           /* 0 prepare, 1 parent, 2 child */
/* Set by observe.c while the census watches: a strategy touched one of its metadata objects
 * (the census counts a cache line touched by two threads for two objects). */
extern void (*hl_meta_touched)(const void *object);
/* Set by observe.c while the census watches: how many blocks in [start, start + bytes) a live
 * thread other than the caller holds (Hoard Table 3's count). */
extern uint64_t (*hl_meta_foreign_blocks)(const void *start, size_t bytes);

/* ---- thread.c: the thread registry ----------------------------------------------------------- */
/* Per-thread counters, written by their own thread only (stats.h's HL_OWN_ADD), summed by
 * hoardlab_stats(): HOARDLAB_STATS's (include/hoardlab.h) whose `from` is `thread`. */
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
     * to the strategy; zero until the thread registers (and while checks or observers are on). */
    size_t small_max;
    uintptr_t base, span;
    unsigned id;                 /* dense: the lowest id no live thread holds, reused */
    int state;                   /* 0 unregistered, 1 live, 2 exited (TLS teardown) */
    void *heap;                  /* the strategy's per-thread data, NULL until it sets it */
    /* tlab.h: the thread's TLAB bins, NULL until its first slow call, then hl_tlab_none until
     * it has its own; here so that a fast path loads one TLS address. */
    struct hl_tlab_bin *tlab_bins;
    /* tlab_scavenge_ms: 1 while the thread is inside a TLAB fast path (tlab.h's Scavenging) */
    uint32_t tlab_in;
    void *census, *trace;        /* per-thread buffers of those mechanisms */
    struct hl_counters ctr;
    struct hl_thread *next;      /* registry list of live threads */
};

extern HL_TLS struct hl_thread hl_me;
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
/* Set by stats.c's init: a thread registers (its counters start), exits (its counts are kept,
 * under the registry lock). */
extern void (*hl_thread_start_hook)(struct hl_thread *t);
extern void (*hl_thread_fold_hook)(struct hl_thread *t);

#include "lock.h"                       /* spin or futex mutex */
#include "stats.h"                      /* counters, U and A, counted locks, the exit report */

#pragma GCC visibility pop

#endif

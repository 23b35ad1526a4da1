/* hoardlab.h — the public introspection API of libhoardlab.so.
 *
 * A program linked against libhoardlab, or one running under LD_PRELOAD of it, can read the
 * allocator's statistics. A program that only may be preloaded looks the functions up with
 * dlsym(RTLD_DEFAULT, "hoardlab_stats"), so it runs unchanged under any other allocator.
 */
#ifndef HOARDLAB_H
#define HOARDLAB_H

#include <stddef.h>
#include <stdint.h>

/* Every statistic, declared once: X(name, from, across, help). The same list expands into the
 * struct below, the per-thread counters of the core (src/core/base/base.h), the JSON written at exit
 * (HOARD_STATS), the harness's record and `hlconfig --stats`, which the tools read for the
 * columns of their results. All are counts or bytes.
 *   from    thread: counted by each thread in its own counters (HL_COUNT), summed over the
 *                   threads, live and exited, by hoardlab_stats();
 *           total:  set whole by hoardlab_stats() or by the strategy's stats function.
 *   across  how the tools combine the records of a program's processes: sum (events), largest
 *           (taken from the process with the largest held_bytes_peak, A), max (the most of any). */
#define HOARDLAB_STATS(X)                                                                         \
    X(mallocs, thread, sum,                                                                       \
      "allocation calls that returned a block")                                                   \
    X(frees, thread, sum,                                                                         \
      "free calls on a non-NULL block")                                                           \
    X(in_use, total, largest,                                                                     \
      "bytes in live blocks now, counted at their usable size")                                   \
    X(in_use_peak, total, largest,                                                                \
      "U: peak of in_use (exact to threads x stats_batch bytes)")                                 \
    X(os_bytes, total, largest,                                                                   \
      "bytes held from the OS now: held_bytes + meta_bytes")                                      \
    X(os_bytes_peak, total, largest,                                                              \
      "peak of os_bytes: all the memory hoardlab took, at its most")                              \
    X(held_bytes, total, largest,                                                                 \
      "of os_bytes, those held for blocks: superblocks, heap regions, "                           \
      "large objects and the cache of their mappings")                                            \
    X(held_bytes_peak, total, largest,                                                            \
      "A: peak of held_bytes, the policy's A (Hoard Table 4)")                                    \
    X(meta_bytes, total, largest,                                                                 \
      "of os_bytes, hoardlab's own structures (heaps, descriptors, "                              \
      "page map, tables), counted by the pages written")                                          \
    X(large_allocs, thread, sum,                                                                  \
      "blocks above large_threshold served straight from the OS")                                 \
    X(large_cached_bytes, total, largest,                                                         \
      "freed large objects' mappings kept for reuse (large_reuse): counted in A, and "            \
      "their written pages in RSS")                                                               \
    X(lock_acquisitions, thread, sum,                                                             \
      "allocator lock acquisitions")                                                              \
    X(lock_contended, thread, sum,                                                                \
      "acquisitions that found the lock held")                                                    \
    X(global_to, thread, sum,                                                                     \
      "superblocks moved to the global heap")                                                     \
    X(global_from, thread, sum,                                                                   \
      "superblocks taken from the global heap")                                                   \
    X(remote_frees, thread, sum,                                                                  \
      "frees of a block owned by another heap")                                                   \
    X(cas_attempts, thread, sum,                                                                  \
      "compare-and-swap (or exchange) operations on shared allocator "                            \
      "structures (lock-free strategies, remote_free = list | queue)")                            \
    X(cas_retries, thread, sum,                                                                   \
      "of those, attempts that failed and were repeated")                                         \
    X(cas_free_attempts, thread, sum,                                                             \
      "of cas_attempts, those made by free (the rest: malloc)")                                   \
    X(cas_free_retries, thread, sum,                                                              \
      "of cas_retries, those made by free")                                                       \
    X(tlab_sb_hits, thread, sum,                                                                  \
      "frees of blocks of a superblock the TLAB's heap no longer owns that the TLAB's "           \
      "superblock cache let into a bin (tlab_sb_cache)")                                          \
    X(tlab_sb_fills, thread, sum,                                                                 \
      "entries of the TLAB's superblock cache filled by a refill or a flush of a bin")            \
    X(cpu_refills, thread, sum,                                                                   \
      "cache = cpu: batches taken from a heap into an empty CPU stack (by malloc)")               \
    X(cpu_flushes, thread, sum,                                                                   \
      "cache = cpu: batches given back from a full CPU stack to the heaps (by free)")             \
    X(rseq_restarts, total, sum,                                                                  \
      "cache = cpu: critical sections the kernel restarted (preemption, migration or a signal "   \
      "inside one)")                                                                              \
    X(remote_pending, thread, largest,                                                            \
      "bytes freed by a thread other than the owner's and not yet "                               \
      "collected by the owner heap (remote_free = list | queue)")                                 \
    X(tlab_bytes, total, largest,                                                                 \
      "bytes of free blocks held in the caches before the heaps: the threads' TLABs "             \
      "(cache = thread) or the per-CPU caches (cache = cpu)")                                     \
    X(heaps_free_bytes, total, largest,                                                           \
      "heap rows: free bytes in the superblocks of the thread / processor heaps "                 \
      "(a - u; a block in a TLAB counts as used)")                                                \
    X(heaps_empty_bytes, total, largest,                                                          \
      "the empty superblocks among them, S bytes each (a heap never purges them)")              \
    X(global_free_bytes, total, largest,                                                          \
      "hoard rows: free bytes in the global heap's superblocks, every shard (a - u)")             \
    X(parked_bytes, total, largest,                                                               \
      "hoard purge: kept unpurged within retain: empty superblocks parked in the global "         \
      "heap, and freed large mappings' ranges (also in large_cached_bytes)")                      \
    X(purged_bytes, total, largest,                                                               \
      "hoard purge: empty superblocks parked with their pages given back (still in A), and "     \
      "hole_purged_bytes")                                                                        \
    X(hole_purged_bytes, total, largest,                                                          \
      "purge_holes: free pages inside superblocks that still hold blocks given back, not yet "   \
      "taken back by malloc (still in A)")                                                        \
    X(sb_live, total, largest,                                                                    \
      "heap rows: superblocks holding at least one block (in use or in a TLAB), in every "        \
      "heap and global-heap shard")                                                               \
    X(sb_live_used_bytes, total, largest,                                                         \
      "the bytes of the blocks out of them (the heaps' u summed): over sb_live x (S - "           \
      "header), their mean fullness, to within the classes' tail waste")                          \
    X(huge_regions, total, largest,                                                               \
      "hugepages = madvise | filler: the arena's 2 MiB regions on huge pages now, whole (its "    \
      "AnonHugePages in /proc/self/smaps / 2 MiB; read at most once per 1-4 ms tick of the "    \
      "coarse clock); 0 under off")                                                               \
    X(sb_active, total, largest,                                                                  \
      "lockfree: superblocks in state ACTIVE")                                                    \
    X(sb_partial, total, largest,                                                                 \
      "lockfree: superblocks in state PARTIAL")                                                   \
    X(sb_full, total, largest,                                                                    \
      "lockfree: superblocks in state FULL")                                                      \
    X(sb_empty, total, largest,                                                                   \
      "lockfree: superblocks in state EMPTY, not yet retired")                                    \
    X(descriptors, total, largest,                                                                \
      "lockfree: superblock descriptors in use")                                                  \
    X(census_false_blocks, thread, sum,                                                           \
      "blocks handed to a thread while another thread held a live "                               \
      "block on the same cache line")                                                             \
    X(census_false_lines, thread, sum,                                                            \
      "cache lines on which that happened at least once")                                         \
    X(census_meta_false, thread, sum,                                                             \
      "touches of allocator metadata (e.g. a free-list head) on a cache "                         \
      "line last touched by another thread for another object")                                   \
    X(census_paper, thread, largest,                                                              \
      "blocks other live threads held in superblocks when a heap took "                           \
      "them from the global heap (Hoard Table 3's count; hoard)")                                 \
    X(threads, total, max,                                                                        \
      "most threads registered with the allocator at one time")                                   \
    X(counting, total, max,                                                                       \
      "1: the fast paths count (key counting); 0: they count nothing, and every statistic "       \
      "counted by the threads (from: thread) and in_use, in_use_peak read 0 (not counted)")

struct hoardlab_stats {
#define HOARDLAB_STATS_FIELD(name, from, across, help) uint64_t name;
    HOARDLAB_STATS(HOARDLAB_STATS_FIELD)
#undef HOARDLAB_STATS_FIELD
};

/* Fill *out with the current totals over all threads, live and exited. */
void hoardlab_stats(struct hoardlab_stats *out);

/* Forget the peaks (in_use_peak, os_bytes_peak) so the next phase is measured on its own. */
void hoardlab_stats_reset_peaks(void);

/* Give back to the OS, now, everything the allocator holds free that it can give back, as
 * jemalloc's mallctl("arena.<all>.purge") and mimalloc's mi_collect(true) do: a program that
 * has just finished a burst says so. From any thread, at any time; it waits for the locks it
 * takes (one at a time), so it is not for a signal handler. It
 *   - gives the calling thread's TLAB back to the heaps (cache = thread; other threads' TLABs
 *     and the per-CPU caches of cache = cpu are left as they are);
 *   - purges every empty superblock of the heap rows (private, ownership, hoard, hoard2026,
 *     hoard202607): those parked in hoard's global heap whatever purge, retain, decay_ms
 *     and purge_delay say (under purge = off too, where nothing parks otherwise), with
 *     MADV_DONTNEED (re-advising those an earlier MADV_FREE purged), counted in purged_bytes;
 *     and the empty ones the thread / processor heaps keep, formatted afresh in place;
 *   - under purge_holes = on, gives back the free pages inside superblocks that still hold
 *     blocks (MADV_DONTNEED), counted in hole_purged_bytes and purged_bytes;
 *   - unmaps the cached large mappings (large_reuse).
 * Pages given back stay reserved and counted in os_bytes (A); RSS drops. serial, concurrent
 * and lockfree have nothing of the second kind to give. Returns the bytes given back (of
 * superblocks newly purged and cached large mappings; 0 before the library started). */
size_t hoardlab_collect(void);

/* Name of the active strategy, e.g. "hoard". */
const char *hoardlab_strategy(void);

/* The effective value of a configuration key as text ("8192", "hash", "0.25"), or NULL for an
 * unknown key. */
const char *hoardlab_config_get(const char *key);

/* Lock statistics of heap number `heap` of the private-heap strategies (private, ownership,
 * hoard; heap 0 is hoard's global heap): acquisitions of its lock and those that found it
 * held. Returns 0 (zero counts for a number no heap has, such as 0 without a global heap),
 * or -1 past the last heap and under strategies without such heaps. */
int hoardlab_heap_contention(unsigned heap, uint64_t *acquisitions, uint64_t *contended);

#endif

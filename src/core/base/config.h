/* config.h — the one table of configuration keys.
 *
 * Every design element is a key here:
 *     X(name, section, file, kind, default, min, max, choices, acts, help),
 * `file` being the one file, from the repository's root, that implements the key (where its
 * value acts; tests/tools/test_config_files.py checks that the file reads it).
 * The table drives INI parsing (key `name` in section `[section]`), the environment
 * (HOARD_<NAME>, upper case), validation, `hlconfig --list`, HOARD_VERBOSE and the docs
 * (docs/config.md is `hlconfig --markdown`; a test keeps it current). Sizes accept K/M/G suffixes; reals accept "1/4".
 * Strategy-specific defaults (struct hl_strategy.defaults, handed down by the registry)
 * override the table default.
 *
 * `acts` says where the key has an effect (a small language, acts.c): "all", or clauses
 * separated by "; ", each a list of strategies ("hoard, hoard2026") optionally followed by
 * " if KEY=VALUE[|VALUE...]" naming the value another key must have (effective value,
 * whatever its source). A key set explicitly (file or environment) where it acts nowhere is
 * an error at start-up, like any bad input: it would change nothing, and an experiment
 * varying it would measure noise.
 *
 * Kinds: BOOL (on/off, 1/0, true/false, yes/no) -> int; INT -> long; SIZE -> size_t;
 *        REAL -> double; ENUM -> int index into choices; STR -> const char *;
 *        PCOUNT (N, or NP meaning N x processors) -> long; POW2 -> size_t power of two;
 *        OUTPUT ("stderr", "off" or empty, or a path containing '/') -> const char *.
 * For ENUM, `min`/`max` are unused; `strategy`'s choices are the strategies
 * compiled in (hl_strategy_names, config.c).
 */
#ifndef HL_CONFIG_H
#define HL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define HL_KB 1024.0
#define HL_MB (1024.0 * 1024.0)

/* hoard, unless the Meson option `strategies` leaves it out (src/meson.build). */
#ifndef HL_DEFAULT_STRATEGY
#define HL_DEFAULT_STRATEGY "hoard"
#endif

/* The rows built on hoard's code (src/strategies/hoard*.c), where hoard's keys act. */
#define HL_HOARD_ROWS "hoard, hoard2026, hoard202607"
/* The rows with the key `tlab` (and `cache`): those whose init calls fronts.c's hl_fronts_start. */
#define HL_TLAB_ROWS "ownership, " HL_HOARD_ROWS

#define HL_OPTIONS(X)                                                                          \
  X(strategy,        allocator,    "src/core/front/init.c",                                    \
    ENUM,  HL_DEFAULT_STRATEGY, 0, 0, NULL, "all",                                             \
    "allocation strategy (see hlconfig --strategies)")                                         \
  X(verbose,         allocator,    "src/core/front/init.c",                                    \
    BOOL,  "off",      0, 1, NULL, "all",                                                      \
    "print the effective configuration to stderr at start-up")                                 \
  X(stats,           allocator,    "src/core/base/stats.c",                                    \
    OUTPUT, "",        0, 0, NULL, "all",                                                      \
    "write statistics as one JSON object at exit: 'stderr', a path with a '/', or off")        \
  X(counting,        allocator,    "src/core/front/init.c",                                    \
    BOOL,  "on",       0, 1, NULL, "all",                                                      \
    "count mallocs, frees and U on the fast paths; off: init installs fast paths that count "  \
    "nothing, and hoardlab_stats reports those statistics as not counted (the cost table's "   \
    "'uncounted' column)")                                                                     \
  X(stats_batch,     allocator,    "src/core/base/stats.c",                                    \
    SIZE,  "64K",      0, 64 * HL_MB, NULL,                                                    \
    "all if counting=on",                                                                      \
    "bytes a thread's in-use count may drift before it is published; 0 = exact U peak")        \
  X(lock,            allocator,    "src/core/base/lock.c",                                     \
    ENUM,  "spin",     0, 0, hl_lock_kinds, "all",                                             \
    "lock kind for every allocator lock")                                                      \
  X(numa,            allocator,    "src/core/base/os.c",                                       \
    ENUM,  "off",      0, 0, hl_numa_modes, "all",                                             \
    "NUMA placement of memory from the OS (libnuma)")                                          \
  X(large_threshold, allocator,    "src/core/front/init.c",                                    \
    SIZE,  "0",        0, 64 * HL_MB, NULL, "all",                                             \
    "requests above this many bytes get an OS mapping of their own; 0 = S/2")                  \
  X(large_cache,     allocator,    "src/core/heap/large.c",                                    \
    SIZE,  "32M",      0, 64 * 1024 * HL_MB, NULL,                                             \
    "all if large_reuse=fixed|follow",                                                         \
    "freed large mappings kept for reuse (still counted in A); 0 = none. 32M: glibc's top "    \
    "mmap threshold, a few MiB-sized buffers, small next to the memory of a large-object run") \
  X(large_reuse,     allocator,    "src/core/heap/large.c",                                    \
    ENUM,  "follow",   0, 0, hl_large_reuses, "all",                                           \
    "freed large mappings: unmap at once (the paper), keep up to large_cache with the 2x fit " \
    "rule (fixed), or keep what A <= (1 + large_follow) x the large live set's peak allows, "  \
    "merged with neighbours, any one trimmed or grown with mremap to fit (follow: largebuf "   \
    "below glibc's CPU time, unmap 3.5x)")                                                     \
  X(large_follow,    allocator,    "src/core/heap/large.c",                                    \
    REAL,  "1/2",      0.0, 4.0, NULL,                                                         \
    "all if large_reuse=follow",                                                               \
    "large_reuse=follow: A of large objects <= (1 + this) x their live bytes' recent peak "    \
    "(decaying 1/256 of the way per free), or large_cache if more")                            \
  X(arena_reserve,   allocator,    "src/core/mem/arena.c",                                                 \
    SIZE,  "256G",     64 * HL_MB, 64.0 * 1024 * 1024 * HL_MB, NULL, "all",                                \
    "address space reserved for strategy blocks (no memory until used); halved if refused")    \
  X(hugepages,       allocator,    "src/core/mem/arena.c",                                     \
    ENUM,  "off",      0, 0, hl_hugepages_modes, "all",                                        \
    "transparent huge pages for the arena (every strategy's superblocks and heap regions) "   \
    "and large objects' mappings of 2 MiB or more: off; madvise: MADV_HUGEPAGE on them (the "  \
    "arena's range at init), whose 2 MiB "                                                     \
    "regions the kernel may then back with huge pages as they are touched (THP never: said "  \
    "once, no effect); filler: madvise, and freed pieces are reused fullest region first and " \
    "a piece's pages go back to the OS only when its whole 2 MiB region is free (they stay in " \
    "A until then), and a large mapping of 2 MiB or more is whole regions (its tail's slack " \
    "in A). Both place such mappings at a 2 MiB boundary and advise them, grown ones too "    \
    "(realloc; follow grows no cached mapping under 2 MiB into one). purge/retain act as they " \
    "do under off: purging a parked superblock splits its huge page; purge=off keeps regions " \
    "whole")                                                                                   \
  X(size_classes,    size_classes, "src/core/mem/sizeclass.c",                                 \
    ENUM,  "geometric",0, 0, hl_class_tables, "all",                                           \
    "size-class table: pow2 (uC++), geometric with base b (Hoard 2000), or pow2x4: 16-byte "   \
    "steps to 128, then 4 classes per power of two (Hoard #107/#108)")                         \
  X(size_class_base, size_classes, "src/core/mem/sizeclass.c",                                 \
    REAL,  "1.2",      1.01, 4.0, NULL,                                                        \
    "all if size_classes=geometric",                                                           \
    "b: ratio between neighbouring geometric size classes")                                    \
  X(superblock_size, superblock,   "src/core/mem/superblock.c",                                \
    POW2,  "8K",       4 * HL_KB, 16 * HL_MB, NULL, "all",                                     \
    "S: bytes in a superblock (also the unit the single heap grows by, times heap_grow)")      \
  X(heap_grow,       single_heap,  "src/core/heap/singleheap.c",                               \
    INT,   "128",      1, 65536, NULL,                                                         \
    "serial, concurrent",                                                                      \
    "single heap: superblock_size units added each time the heap region grows")                \
  X(padding,         single_heap,  "src/core/heap/singleheap.c",                               \
    BOOL,  "off",      0, 1, NULL,                                                             \
    "concurrent",                                                                              \
    "concurrent: give each size class's free-list head and lock its own cache line")           \
  X(free_list,       allocator,    "src/core/mem/superblock.c",                                \
    ENUM,  "lifo",     0, 0, hl_list_orders,                                                   \
    "serial, concurrent, ownership, " HL_HOARD_ROWS,                                           \
    "order in which freed blocks are reused")                                                  \
  X(heaps,           heaps,        "src/core/heaps/selector.c",                                \
    PCOUNT,"2P",       1, 4096, NULL,                                                          \
    "private, ownership, " HL_HOARD_ROWS ", lockfree if heap_select=hash|cpu|home",            \
    "number of per-processor heaps: N, or NP for N times the processor count")                 \
  X(heap_select,     heaps,        "src/core/heaps/selector.c",                                \
    ENUM,  "hash",     0, 0, hl_heap_selects,                                                  \
    "private, ownership, " HL_HOARD_ROWS ", lockfree",                                         \
    "which heap a thread uses: own heap per thread, thread-id hash, current CPU, or a home "   \
    "heap given out round-robin at the thread's first call and kept for its life (Hoard #103)") \
  X(empty_fraction,  superblock,   "src/strategies/hoard.c",                                   \
    REAL,  "1/4",      0.01, 0.99, NULL,                                                       \
    HL_HOARD_ROWS "; ownership if remote_free=list",                                           \
    "f: a heap may hold this fraction of its memory free before it gives a superblock away")   \
  X(release_threshold, superblock, "src/strategies/hoard.c",                                   \
    INT,   "4",        0, 1 << 20, NULL,                                                       \
    HL_HOARD_ROWS "; ownership if remote_free=queue|batch",                                    \
    "K: superblocks a heap may hold free regardless of f")                                     \
  X(fullness_groups, superblock,   "src/core/heap/heap.c",                                     \
    INT,   "4",        1, 64, NULL,                                                            \
    "ownership, " HL_HOARD_ROWS,                                                               \
    "bins of superblocks by fraction in use; allocation takes from the fullest")               \
  X(free_lists,      superblock,   "src/core/mem/superblock.c",                                \
    ENUM,  "single",   0, 0, hl_free_lists,                                                    \
    "ownership, " HL_HOARD_ROWS,                                                               \
    "a superblock's free blocks on one list (Hoard), or sharded as mimalloc's: malloc pops "   \
    "`free`, the owner frees onto `local_free`, others push onto `thread_free` (needs "        \
    "remote_free=list); malloc stays on one superblock per class until it runs dry")           \
  X(accounting,      superblock,   "src/core/heap/heap.c",                                     \
    ENUM,  "class",    0, 0, hl_accountings,                                                   \
    HL_HOARD_ROWS,                                                                             \
    "hoard: u and a of the emptiness threshold per size class of a heap, or per heap over "    \
    "all its classes (the paper's u_i and a_i)")                                               \
  X(release_empty,   superblock,   "src/strategies/hoard.c",                                   \
    BOOL,  "off",      0, 1, NULL,                                                             \
    "ownership, " HL_HOARD_ROWS ", lockfree",                                                  \
    "return completely empty superblocks to the OS instead of keeping them for reuse")         \
  X(remote_free,     heaps,        "src/core/remote/mailbox.c",                                \
    ENUM,  "lock",     0, 0, hl_remote_frees,                                                  \
    "ownership, " HL_HOARD_ROWS,                                                               \
    "ownership, hoard: a free by a thread other than the owner's: lock the owner heap (the "   \
    "paper), push onto the superblock's atomic list, post to the owner heap's queue, or send " \
    "a hashed bucket of the freeing thread whole when it holds remote_batch_bytes (snmalloc)") \
  X(tlab,            tlab,         "src/core/base/config.c",                                   \
    BOOL,  "off",      0, 1, NULL,                                                             \
    HL_TLAB_ROWS,                                                                              \
    "the older name of `cache`: on is cache = thread, off cache = none; it reads back as "     \
    "cache's value (config.c's one_cache)")                                                    \
  X(cache,           cache,        "src/core/cache/fronts.c",                                  \
    ENUM,  "none",     0, 0, hl_caches, HL_TLAB_ROWS,                                          \
    "hoard, ownership: the cache of free blocks in front of the heap: none, a thread-local "   \
    "allocation buffer per size class (thread: the TLAB of Hoard 2026), or a stack per CPU "   \
    "and size class popped and pushed in Linux restartable sequences (cpu: TCMalloc's; "       \
    "x86-64, needs glibc's rseq registration)")                                                \
  X(cpu_cache_bytes, cache,        "src/core/cache/cpucache.c",                                \
    SIZE,  "32K",      0, 64 * HL_MB, NULL,                                                    \
    HL_TLAB_ROWS " if cache=cpu",                                                              \
    "cache = cpu: free bytes a CPU's cache may hold per size class (at most 65535 blocks), "   \
    "as tlab_budget per thread")                                                               \
  X(cpu_cache_idle_ms, cache,      "src/core/cache/cpucache.c",                                \
    INT,   "0",        0, 3600000, NULL,                                                       \
    HL_TLAB_ROWS " if cache=cpu",                                                              \
    "cache = cpu: a CPU on whose stacks no block moved for this long (taken within twice it) " \
    "gives back what each holds beyond a sixteenth of its limit to the heaps: the purge "      \
    "thread (started for it; none under purge_thread=off) pins itself there and pops them "    \
    "(TCMalloc's reclaim of idle CPU caches); 0 = off")                                        \
  X(tlab_budget,     tlab,         "src/core/cache/tlab.c",                                    \
    SIZE,  "64K",      0, 64 * HL_MB, NULL,                                                    \
    HL_TLAB_ROWS " if tlab=on",                                                                \
    "hoard tlab: free bytes a thread's TLAB may hold per size class before it overflows")      \
  X(global_shards,   heaps,        "src/core/heaps/heapselect.c",                              \
    INT,   "1",        1, 64, NULL,                                                            \
    HL_HOARD_ROWS,                                                                             \
    "hoard: the global heap split into this many shards, each with its lock (1 = the paper)")  \
  X(global_shard_key, heaps,       "src/core/heaps/globalheap.c",                              \
    ENUM,  "cpu",      0, 0, hl_shard_keys,                                                    \
    HL_HOARD_ROWS,                                                                             \
    "hoard, global_shards > 1: the shard a heap puts to and first takes from: the CPU's "      \
    "(#88), node x shards_per_node + cpu mod shards_per_node, stealing within the node first " \
    "(#89), or the thread id's (#95); then two random shards, then all")                       \
  X(tlab_foreign,    tlab,         "src/core/cache/tlab.c",                                    \
    ENUM,  "home",     0, 0, hl_tlab_foreigns,                                                 \
    HL_TLAB_ROWS " if tlab=on",                                                                \
    "hoard tlab: a freed block whose superblock the TLAB's heap does not own goes to its "     \
    "owner heap (home: today's, and Hoard #103) or into the freeing thread's TLAB (adopt)")    \
  X(tlab_adaptive,   tlab,         "src/core/cache/tlab_adaptive.h",                           \
    BOOL,  "off",      0, 1, NULL,                                                             \
    HL_TLAB_ROWS " if tlab=on",                                                                \
    "hoard tlab: a thread's budget starts at tlab_budget and doubles after every 16 "         \
    "refills, up to 16 MiB a class and 16 MiB more in all of its TLAB (Hoard #98)")           \
  X(tlab_refill,     tlab,         "src/core/cache/cache.h",                                   \
    ENUM,  "half",     0, 0, hl_tlab_batches,                                                  \
    HL_TLAB_ROWS " if tlab=on",                                                                \
    "hoard tlab: blocks an empty bin takes under one lock: half its limit, at most 64 "        \
    "(half), or min(64, budget / (8 x class size)), at least 1 (batch: Hoard #99)")            \
  X(tlab_flush,      tlab,         "src/core/cache/cache.h",                                   \
    ENUM,  "half",     0, 0, hl_tlab_batches,                                                  \
    HL_TLAB_ROWS " if tlab=on",                                                                \
    "hoard tlab: blocks a full bin gives back under one lock: half its limit, at most 64 "     \
    "(half), or up to 64 (batch: Hoard #111)")                                                 \
  X(tlab_sb_cache,   tlab,         "src/core/cache/tlab_sb_cache.c",                           \
    INT,   "0",        0, 64, NULL,                                                            \
    HL_TLAB_ROWS " if tlab=on",                                                                \
    "hoard tlab: entries (0 = off, or a power of two) of a direct-mapped cache of the "        \
    "superblocks the bins refilled from, whose blocks enter the TLAB after the superblock "    \
    "moved to another heap (Hoard #95, #123: 16; kept off the fast path)")                    \
  X(tlab_prefetch,   tlab,         "src/core/cache/tlab_prefetch.c",                           \
    BOOL,  "off",      0, 1, NULL,                                                             \
    HL_TLAB_ROWS " if tlab=on",                                                                \
    "hoard tlab: malloc asks for the bin's next block's cache line, to be written (x86-64 "   \
    "PREFETCHW; a CPU without it: said once, no prefetch), so a block another core freed (a " \
    "remote free's link) is here by the next malloc of its class (snmalloc prefetches its "   \
    "free list's next; one instruction a malloc)")                                            \
  X(tlab_scavenge_ms, tlab,        "src/core/cache/tlab_scavenge.c",                           \
    INT,   "0",        0, 3600000, NULL,                                                       \
    HL_TLAB_ROWS " if tlab=on",                                                                \
    "hoard tlab: a thread whose bins' room did not move for this long (taken within twice "    \
    "it) gives back what each bin holds beyond a sixteenth of its starting limit to the "      \
    "heaps: the purge thread (started for it; none under purge_thread=off) keeps its fast "    \
    "paths out with a flag and one membarrier a sweep, which costs each fast path two stores " \
    "and a test (tools/hoardlab cost: 59 a pair against 47); 0 = off")                         \
  X(remote_queue_cap, heaps,       "src/core/remote/mailbox.c",                                \
    INT,   "0",        0, 1 << 20, NULL,                                                       \
    "ownership, " HL_HOARD_ROWS " if remote_free=queue",                                       \
    "remote_free=queue: blocks an owner heap's inbox may hold uncollected; a free that finds " \
    "it full takes the owner's lock instead (Hoard #98: 256); 0 = unbounded")                  \
  X(remote_batch_bytes, heaps,     "src/core/remote/sender.c",                                 \
    SIZE,  "64K",      1 * HL_KB, 16 * HL_MB, NULL,                                            \
    "ownership, " HL_HOARD_ROWS " if remote_free=batch",                                       \
    "remote_free=batch: bytes of blocks a bucket of the freeing thread's remote cache (16 "    \
    "buckets, hashed by owner heap) holds before it is sent whole in one CAS (snmalloc's "     \
    "remote cache: 16 x 64K = 1 MiB a thread)")                                                \
  X(purge,           superblock,   "src/core/heap/purge.c",                                    \
    ENUM,  "off",      0, 0, hl_purges,                                                        \
    HL_HOARD_ROWS,                                                                             \
    "hoard: pages of empty superblocks parked in the global heap go back to the OS with "      \
    "madvise MADV_FREE or MADV_DONTNEED, beyond `retain` bytes kept as they are (Hoard #99, "  \
    "#116), or with MADV_FREE along a curve over decay_ms (decay: jemalloc's); they stay "     \
    "counted in A; so are freed large mappings' pages in the large cache, beyond what retain " \
    "leaves, once cached purge_delay ms (or 500 ms with purge_delay = 0 and retain > 0)")    \
  X(retain,          superblock,   "src/core/heap/purge.c",                                    \
    SIZE,  "64M",      0, 64 * 1024 * HL_MB, NULL,                                             \
    HL_HOARD_ROWS " if purge=free|dontneed|decay",                                             \
    "hoard purge: bytes of parked empty superblocks and of cached freed large mappings "       \
    "kept unpurged, for a fast reuse")                                                         \
  X(retain_counts,   superblock,   "src/core/heap/purge.c",                                    \
    ENUM,  "parked",   0, 0, hl_retain_counts,                                                 \
    HL_HOARD_ROWS " if purge=free|dontneed|decay",                                             \
    "what retain bounds: parked (parked empty superblocks and cached large mappings, Hoard's " \
    "#116) or free (those and every other free byte the heaps hold: partly used superblocks' " \
    "free space, thread heaps' empty ones, TLABs and per-CPU caches, counted by the purge "    \
    "thread every 100 ms; only parked memory is purged to meet it, oldest first once parked "  \
    "500 ms when untimed; a memory limit on free bytes); free needs "                         \
    "purge_thread=on")                                                                         \
  X(decay_ms,        superblock,   "src/core/heap/purge.c",                                    \
    INT,   "1000",     1, 3600000, NULL,                                                       \
    HL_HOARD_ROWS " if purge=decay",                                                           \
    "purge=decay: ms over which what parks beyond retain is purged along 1 - smoothstep(t / "  \
    "decay_ms) (half at decay_ms / 2), due purges done on slow paths and by purge_thread "     \
    "(jemalloc's dirty_decay_ms)")                                                             \
  X(purge_delay,     superblock,   "src/core/heap/purge.c",                                    \
    INT,   "0",        0, 3600000, NULL,                                                       \
    HL_HOARD_ROWS " if purge=free|dontneed",                                                   \
    "hoard purge: ms a superblock stays parked empty before it is purged, checked on slow "    \
    "paths and by purge_thread (mimalloc's purge_delay); 0 = as it parks")                     \
  X(purge_thread,    superblock,   "src/core/heap/ticker.c",                                   \
    BOOL,  "on",       0, 1, NULL,                                                             \
    HL_HOARD_ROWS " if purge=free|dontneed|decay",                                             \
    "hoard with purge=decay, purge_delay > 0 or retain > 0, or purge_holes=on (nothing to "  \
    "do elsewhere): one background thread also does the due purges (decay, purge_delay, "    \
    "cached large mappings, the sweep of holes), waking when the next falls due (at most "    \
    "once a step of the coarse clock, 1-4 ms), so idle threads' memory is purged too "         \
    "(jemalloc's background_thread); started by the first malloc slow path (never a free); "  \
    "off: slow paths only")                                                                    \
  X(purge_holes,     superblock,   "src/core/heap/holes.c",                                    \
    BOOL,  "off",      0, 1, NULL,                                                             \
    "ownership; " HL_HOARD_ROWS " if purge=free|dontneed|decay",                               \
    "hole purging: free pages inside superblocks that still hold blocks go back to the OS "    \
    "(madvise as purge says; MADV_FREE under decay and ownership), their free blocks off the " \
    "free list until malloc takes the page back: when a free moves a superblock into the "     \
    "lowest fullness group (at most once per max(10 ms, purge_delay, or decay_ms under "       \
    "decay) a superblock) and each time frees then quarter its used blocks there; by the "    \
    "purge thread (started for it whatever purge says, unless purge_thread=off) in those "     \
    "freed into since, every max(500 ms, purge_delay, or decay_ms under decay) while frees "   \
    "go on; and by hoardlab_collect (MADV_DONTNEED); retain does not bound them; counted in "  \
    "purged_bytes and hole_purged_bytes")                                                      \
  X(partial_list,    lockfree,     "src/strategies/lockfree.c",                                \
    ENUM,  "fifo",     0, 0, hl_list_orders,                                                   \
    "lockfree",                                                                                \
    "lockfree: order of a size class's list of PARTIAL superblocks (Michael 2004 prefers fifo)") \
  X(partial_slots,   lockfree,     "src/strategies/lockfree.c",                                \
    INT,   "1",        1, 64, NULL, "lockfree",                                                \
    "lockfree: Partial slots per processor heap and size class, a ring taken oldest first; "   \
    "a superblock goes to the class list only when they are full (Michael 2004: 1, 'multiple " \
    "slots can be used if desired')")                                                          \
  X(census,          observe,      "src/core/instruments/census.c",                            \
    BOOL,  "off",      0, 1, NULL, "all",                                                      \
    "count allocator-induced false sharing: blocks on a cache line another thread holds")      \
  X(trace,           observe,      "src/core/instruments/trace.c",                             \
    STR,   "",         0, 0, NULL, "all",                                                      \
    "record every operation to this file at exit, for hlbench replay")                         \
  X(heap_log,        observe,      "src/core/instruments/heaplog.c",                           \
    STR,   "",         0, 0, NULL,                                                             \
    "private, ownership, " HL_HOARD_ROWS,                                                      \
    "write each superblock's moves between heaps and fullness groups, with its heap's "        \
    "superblocks per group, held and in-use bytes, to this file at exit, %p: the process id "  \
    "(the heap map: `tools/hoardlab heapmap`)")                                                \
  X(heap_log_interval, observe,    "src/core/instruments/heaplog.c",                           \
    INT,   "0",        0, 60000, NULL,                                                         \
    "private, ownership, " HL_HOARD_ROWS,                                                      \
    "heap_log: ms between a heap's lines for fullness-group changes (moves between heaps are " \
    "always written); 0 = every change")                                                       \
  X(checks,          observe,      "src/core/instruments/checks.c",                            \
    BOOL,  "off",      0, 1, NULL, "all",                                                      \
    "detect double frees and frees of pointers hoardlab never returned, and abort")            \
  HL_FAULT_OPTIONS(X)

/* Keys of the faults build only (-Dfaults=true, fault.c): elsewhere HOARD_FAULT_AT & co. are
 * unknown variables, so a release build can never run with faults it does not inject. */
#ifdef HL_FAULTS
#define HL_FAULT_OPTIONS(X)                                                                    \
  X(fault_at,        faults,       "src/core/base/fault.c",                                    \
    INT,   "0",        0, 1e15, NULL, "all",                                                   \
    "faults build: fail the Nth OS call (mmap, munmap, mremap, madvise, arena growth); 0 = none") \
  X(fault_rate,      faults,       "src/core/base/fault.c",                                    \
    REAL,  "0",        0.0, 1.0, NULL, "all",                                                  \
    "faults build: fail each OS call with this probability (drawn from fault_seed)")           \
  X(fault_seed,      faults,       "src/core/base/fault.c",                                    \
    INT,   "1",        0, 1e15, NULL, "all",                                                   \
    "faults build: seed of fault_rate's draws")                                                \
  X(fault_count,     faults,       "src/core/base/fault.c",                                    \
    BOOL,  "off",      0, 1, NULL, "all",                                                      \
    "faults build: print the OS calls made and failed to stderr at exit")
#else
#define HL_FAULT_OPTIONS(X)
#endif

/* The ENUM keys' choices, each written once: E(NAMES, choices) with C(CONSTANT, "name") per
 * choice, in order (the value of hl_cfg's field). Below, it makes the constants and declares
 * NAMES, the NULL-terminated array of names that the key's row in HL_OPTIONS gives as its
 * choices; config.c defines NAMES from the same list. */
#define HL_ENUMS(E, C)                                                                         \
  E(hl_lock_kinds, C(HL_LOCK_SPIN, "spin") C(HL_LOCK_MUTEX, "mutex"))                          \
  E(hl_numa_modes, C(HL_NUMA_OFF, "off") C(HL_NUMA_LOCAL, "local")                             \
    C(HL_NUMA_INTERLEAVE, "interleave"))                                                       \
  E(hl_class_tables, C(HL_CLASSES_GEOMETRIC, "geometric") C(HL_CLASSES_POW2, "pow2")           \
    C(HL_CLASSES_POW2X4, "pow2x4"))                                                            \
  E(hl_list_orders, C(HL_LIST_LIFO, "lifo") C(HL_LIST_FIFO, "fifo"))                           \
  E(hl_heap_selects, C(HL_SELECT_THREAD, "thread") C(HL_SELECT_HASH, "hash")                   \
    C(HL_SELECT_CPU, "cpu") C(HL_SELECT_HOME, "home"))                                         \
  E(hl_remote_frees, C(HL_REMOTE_LOCK, "lock") C(HL_REMOTE_LIST, "list")                       \
    C(HL_REMOTE_QUEUE, "queue") C(HL_REMOTE_BATCH, "batch"))                                   \
  E(hl_accountings, C(HL_ACCOUNT_CLASS, "class") C(HL_ACCOUNT_HEAP, "heap"))                   \
  E(hl_large_reuses, C(HL_LARGE_UNMAP, "unmap") C(HL_LARGE_FIXED, "fixed")                     \
    C(HL_LARGE_FOLLOW, "follow"))                                                              \
  E(hl_shard_keys, C(HL_SHARD_CPU, "cpu") C(HL_SHARD_NODE, "node")                             \
    C(HL_SHARD_THREAD, "thread"))                                                              \
  E(hl_tlab_foreigns, C(HL_FOREIGN_HOME, "home") C(HL_FOREIGN_ADOPT, "adopt"))                 \
  E(hl_tlab_batches, C(HL_TLAB_HALF, "half") C(HL_TLAB_BATCH, "batch"))                        \
  E(hl_purges, C(HL_PURGE_OFF, "off") C(HL_PURGE_FREE, "free")                                 \
    C(HL_PURGE_DONTNEED, "dontneed") C(HL_PURGE_DECAY, "decay"))                               \
  E(hl_retain_counts, C(HL_RETAIN_PARKED, "parked") C(HL_RETAIN_FREE, "free"))               \
  E(hl_free_lists, C(HL_FREE_LISTS_SINGLE, "single") C(HL_FREE_LISTS_SHARDED, "sharded"))      \
  E(hl_caches, C(HL_CACHE_NONE, "none") C(HL_CACHE_THREAD, "thread") C(HL_CACHE_CPU, "cpu")) \
  E(hl_hugepages_modes, C(HL_HUGE_OFF, "off") C(HL_HUGE_MADVISE, "madvise")                   \
    C(HL_HUGE_FILLER, "filler"))

#define HL_ENUM_CONSTANT(constant, name) constant,
#define HL_ENUM_DECLARE(names, choices) enum { choices }; extern const char *const names[];
HL_ENUMS(HL_ENUM_DECLARE, HL_ENUM_CONSTANT)
#undef HL_ENUM_DECLARE
#undef HL_ENUM_CONSTANT

#define HL_CTYPE_BOOL   int
#define HL_CTYPE_INT    long
#define HL_CTYPE_SIZE   size_t
#define HL_CTYPE_POW2   size_t
#define HL_CTYPE_REAL   double
#define HL_CTYPE_ENUM   int
#define HL_CTYPE_STR    const char *
#define HL_CTYPE_PCOUNT long
#define HL_CTYPE_OUTPUT const char *

/* The effective configuration: one typed field per key. Read-only after init. */
struct hl_config {
#define HL_CONFIG_FIELD(name, section, file, kind, def, min, max, choices, acts, help)       \
    HL_CTYPE_##kind name;
    HL_OPTIONS(HL_CONFIG_FIELD)
#undef HL_CONFIG_FIELD
};
extern struct hl_config hl_cfg;

/* The strategies compiled in, by name, in the registry's order (NULL-terminated): the
 * `strategy` key's choices. */
extern const char *const hl_strategy_names[];
/* Parse the config file (HOARD_CONFIG), the environment and the strategy's defaults into
 * hl_cfg; on any bad input print one line and _exit(2). Uses no malloc. defaults[i]: the
 * paper defaults of strategy i ("key=value ...", or NULL), from its row. */
void hl_config_load_with(const char *const defaults[]);
/* Parse INI text into hl_cfg on top of what is there; on bad input write the one-line
 * message ("name:line: ...") to err and return -1. Never exits (the fuzzer's entry). */
int hl_config_parse_text(const char *name, const char *text, char *err, size_t len);
/* 0 if every `acts` entry names known strategies and conditions on enum or bool keys; else -1
 * and a line in err (for the unit test). */
int hl_config_check_table(char *err, size_t len);
/* Text of the effective value of key, or NULL if there is no such key. */
const char *hl_config_value(const char *key, char *buf, size_t len);

/* acts.c, the language of the `acts` column (above), and what it asks of the option table
 * (config.c gives it): [key, key + n) names a key. */
struct hl_acts_table {
    /* the key's effective value as text in buf, or NULL if there is no such key */
    const char *(*value)(const char *key, size_t n, char *buf, size_t len);
    /* the values an ENUM or BOOL key can take (NULL-terminated), or NULL for another key */
    const char *const *(*values)(const char *key, size_t n);
    const char *const *strategies;       /* the strategies' names, NULL-terminated */
};

/* Whether an `acts` string holds under `strategy` with the effective configuration. */
bool hl_acts_hold(const struct hl_acts_table *t, const char *acts, const char *strategy);
/* " (key=value, ...)": the effective values of the keys acts's conditions name, or "". */
void hl_acts_conditions(const struct hl_acts_table *t, const char *acts, char *buf,
                        size_t len);
/* 0 if acts names only known strategies (or "all") and conditions on enum or bool keys with
 * values they can take; else -1. */
int hl_acts_check(const struct hl_acts_table *t, const char *acts);

/* For hlconfig: print the table (text or JSON) and the effective values with their source. */
enum { HL_TABLE_TEXT, HL_TABLE_JSON, HL_TABLE_MARKDOWN };
void hl_config_print_table(int fd, int format);
void hl_config_print_effective(int fd);

#endif

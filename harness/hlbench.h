/* hlbench.h — the workloads' header: everything below them (record.h, which includes the
 * run machinery, the samplers and the utilities) and the list of workloads, which declares
 * each one and from which hlbench.c, the driver, builds its table.
 *
 * The harness is a one-way stack, bottom up (tools/hoardlab_lib/layers/order.py, checked by
 * `hoardlab layers`): utilities (util.c, json.c, histogram.c; util.h), topology (topology.c),
 * samplers (latency.c, series.c; sample.h), the run machinery (run.c, params.c, blocks.c;
 * run.h), the record (record.c), the workloads (workloads/<family>.c) and the driver (hlbench.c:
 * main and the table). A file uses only files of its own layer or below. */
#ifndef HLBENCH_H
#define HLBENCH_H

#include "record.h"

extern const struct hb_workload hb_workloads[];   /* terminated by a row with name NULL */

/* ---- workloads (workloads/<family>.c) ---------------------------------------------------- */

/* The one list of workloads, in the order of `hlbench --list`:
 *   X(name, function, min_threads, summary)
 * A workload is `int function(struct hb_run *)` with its parameter table `function_params`,
 * defined in workloads/<family>.c; the table in hlbench.c, the declarations below and the
 * tests' list of workloads (tests/harness/meson.build reads the names here) come from it. */
#define HB_WORKLOADS(X)                                                                        \
  X("threadtest", hb_threadtest, 1, "t threads each allocate N/t blocks of s bytes, then "      \
    "free them all, for I rounds (Hoard)")                                                     \
  X("shbench", hb_shbench, 1, "each thread allocates and frees random-sized blocks in "         \
    "random order; many stay live (SmartHeap)")                                                \
  X("larson", hb_larson, 1, "server simulation: threads replace random slots of their table "  \
    "with new random-sized blocks; successor threads inherit the table (Larson)")              \
  X("larson-replace", hb_larson_replace, 1, "larson as Larson's program runs it: each thread "  \
    "creates its successor and exits; blocks 8..1000 B, 5000 per thread")                     \
  X("active-false", hb_active_false, 1, "each thread allocates a small object, writes it "      \
    "many times, frees it (actively induced false sharing)")                                   \
  X("passive-false", hb_passive_false, 1, "one thread hands a small object to each thread, "    \
    "which frees it, then runs active-false (passively induced false sharing)")               \
  X("linux-scalability", hb_linux_scalability, 1, "each thread does malloc/free pairs of s "    \
    "bytes in a tight loop; samples latency")                                                  \
  X("prodcons", hb_prodcons, 1, "one producer allocates tasks (index block, task, queue "       \
    "node); consumers do local work and free them (Michael)")                                  \
  X("blowup-prodcons", hb_blowup_prodcons, 2, "producers allocate K blocks a round, their "     \
    "consumers free them; memory held vs live per round")                                      \
  X("blowup-roundrobin", hb_blowup_roundrobin, 1, "round k: thread k mod P allocates K "        \
    "blocks, thread k+1 mod P frees them (K live); memory held vs live per round")            \
  X("ucpp-random", hb_ucpp_random, 1, "threads allocate and free batches of random sizes "      \
    "8..1024 (uC++ report: free-list lock contention)")                                        \
  X("ucpp-unique", hb_ucpp_unique, 1, "each thread allocates only its own size class, so no "   \
    "two threads share a free list (uC++ report)")                                             \
  X("realloc-churn", hb_realloc_churn, 1, "each thread grows and shrinks many buffers with "     \
    "realloc, checking their contents survive")                                                \
  X("replay", hb_replay, 1, "replays a trace recorded with HOARD_TRACE=path (one thread, or "  \
    "the original threads); reports U, A and A/U")                                              \
  X("xfree", hb_xfree, 1, "T producers allocate batches of blocks, T consumers (2T threads) "   \
    "free each batch at once: remote frees per second (issue 18)")                             \
  X("stall", hb_stall, 2, "thread 0 is stopped for delay_us inside malloc/free again and "     \
    "again; the other threads' throughput delayed / undelayed (issue 11)")                     \
  X("largebuf", hb_largebuf, 1, "each thread keeps a score of MiB-sized buffers and "        \
    "replaces one at a time, zero-initialised (issue 24: large-object reuse)")                \
  X("signal-malloc", hb_signal_malloc, 1, "a signal handler mallocs and frees while threads "  \
    "allocate; a watchdog reports a deadlock instead of hanging (Michael)")                    \
  X("phased", hb_phased, 1, "server-like: sizes and lifetimes from a distribution; steady, "   \
    "spike, drain, steady phases; memory over time (issue 28)")                                \
  X("migrate", hb_migrate, 1, "threads replace random blocks of a live set and move to the "  \
    "next CPU every N operations; A and RSS per epoch (issue 27, Hoard #103)")                  \
  X("migrating-objects", hb_migrating, 1, "threads come and go, hand a share of their "      \
    "blocks (8 B..32 KiB, most small) to each other; the live set grows and shrinks (issue 51)") \
  X("chase", hb_chase, 1, "threads build ~190 MiB of 64-byte nodes, link them in random "      \
    "order and chase the chain: nodes visited/s, TLB-bound (issue 50: huge pages)")           \
  X("drain", hb_drain, 1, "a cache after a mass delete: fill mixed sizes, free a random 3/4 "  \
    "(survivors on every page), hold, read memory, time the next fill (issue 65)")

#define HB_DECLARE(name, fn, min_threads, summary)                                             \
    int fn(struct hb_run *r);                                                                  \
    extern const struct hb_param fn##_params[];
HB_WORKLOADS(HB_DECLARE)
#undef HB_DECLARE

#endif

/* phased.h — the phased workload's state, shared by its files:
 *   phased.c              the workload: its parameters, phases, threads and drain;
 *   phased_lane.h         a thread's table of live blocks and its two heap orders;
 *   phased_trace.c        the distribution learned from a hoardlab trace (`trace`);
 *   phased_checkpoints.c  what comes back after the drain: the checkpoints read by an extra
 *                         thread, and the record of them.
 * The workload itself is described at the head of phased.c. */
#ifndef HB_PHASED_H
#define HB_PHASED_H

#include "../hlbench.h"
#include "phased_lane.h"

/* BURST, the next burst, only with next_burst (else it takes no time and is not recorded) */
enum { STEADY, SPIKE, DRAIN, BURST, STEADY2, PHASES };
enum { CHECKPOINTS_MAX = 8 };

struct drawn { size_t size; uint64_t life; };   /* one allocation of a trace */

struct phased {
    struct hb_run *r;
    struct lane *lane;
    /* phase p runs until end[p] seconds after the start; with `hold`, the reader moves the
     * ends from DRAIN on before it sets `waited`, and the threads read them only after */
    double end[PHASES];
    bool hold;                      /* next_burst: held in the drain until `waited` */
    _Atomic bool waited;            /* the last checkpoint is read (or there is none) */
    _Atomic int drained;            /* threads that have reached (or passed) the drain */
    double *drained_at;             /* a thread's end of its drain from t0, -1: none */
    int n_cp;                       /* the checkpoints: seconds after the drain */
    double cp[CHECKPOINTS_MAX];
    struct hb_series_row cp_row[CHECKPOINTS_MAX];
    unsigned long long cp_live[CHECKPOINTS_MAX];   /* the threads' live bytes then */
    long long cp_cache[CHECKPOINTS_MAX];           /* hb_cache_bytes then (-1: unknown) */
    struct hoardlab_stats cp_stats[CHECKPOINTS_MAX];   /* libhoardlab's then, if cp_hl */
    bool cp_hl[CHECKPOINTS_MAX];
    bool cp_read[CHECKPOINTS_MAX];
    double drained_s;               /* the last thread's end of its drain, -1: none */
    const char *collect;            /* `collect`: the allocator's call (hb_collect_find), or
                                     * NULL: none, or not asked for */
    bool collect_asked;
    long long keep;                 /* keep_every or keep_first: 1 of keep survives, else 0 */
    bool together;                  /* keep_first: the first 1/keep, not every keep-th */
    long long churn;                /* threads a lane is run by in turn, 0: off */
    _Atomic unsigned long long drain_in[6];   /* live blocks, kept blocks, live and kept bytes
                                               * at the drain, all threads (with keep); the
                                               * tables' resident kB before and after it
                                               * (with keep or churn) */
    _Atomic int threads_made;       /* with churn: the threads created */
    _Atomic bool pre_taken;         /* with keep or churn: the first thread at the drain read */
    struct hb_series_row pre_row;   /* RSS, ... then, before its frees: the peak the spike's
                                     * samples miss when the live set grows to its end */
    double *collect_s;              /* a thread's time in it, -1: not called */
    _Atomic unsigned long long ops_in[PHASES];
    double t0;
    uint64_t salt;
    struct drawn *learned;          /* with `trace`: its allocations, else NULL */
    size_t n_learned;
    _Atomic unsigned long long peak[PHASES];   /* all threads' live bytes, at most */
};

/* ---- phased_trace.c ------------------------------------------------------------------------- */

/* Every allocation of the trace at `path` as (size, lifetime) into *learned (from malloc, *n
 * of them); returns their mean lifetime. A bad trace is a usage error. */
double hb_phased_learn(const char *path, struct drawn **learned, size_t *n);

/* ---- phased_checkpoints.c ------------------------------------------------------------------- */

/* The checkpoints from their text ("0.1,1,5"): whole milliseconds, ascending. */
void hb_phased_parse_checkpoints(struct phased *P, const char *text);
/* The checkpoint reader, run by the thread after the workload's. */
void hb_phased_read_checkpoints(struct phased *P);
/* extra's keys of what came back after the drain, and the throughput of the bursts. */
void hb_phased_record_checkpoints(struct phased *P);

#endif

/* phased_checkpoints.c — what comes back after phased's drain, and when (issue 36): an extra
 * thread reads RSS, Private_Dirty, LazyFree and A (hb_series_read), the threads' live bytes
 * and what the allocator's front caches hold (hb_cache_bytes: hoardlab's TLABs), at each of
 * `checkpoints` seconds after the drain -- counted from the moment the last thread finished
 * freeing its share, not from the phase's planned start -- into extra.after_drain_<t>_*; a
 * checkpoint the run ends before is null. Under libhoardlab it also reads where the rest is
 * (null elsewhere): the heaps' free bytes and empty superblocks, the global heap's free,
 * parked and purged bytes, the large objects' cached mappings, and the superblocks holding a
 * live block with the bytes out of them (how thinly the live blocks are spread: a purge of
 * whole superblocks reaches none of those). With `next_burst` the reader holds the threads in
 * the drain until the last checkpoint is read (phased.c says what follows).
 *
 * The record also takes the rest of what the drain leaves to say: extra.drained_s, when it
 * ended; with `collect`, extra.collect_call names the call (null: none), extra.collect_s_max
 * is the longest call; with keep_every / keep_first, extra.drain_live_blocks,
 * drain_kept_blocks, drain_live_bytes and drain_kept_bytes count the survivors (all threads);
 * with keep_* or churn, extra.drain_rss_kb and drain_lazyfree_kb are read as the first thread
 * reaches the drain, before its frees (with long lifetimes the live set grows to the spike's
 * end, past the spike's last sample: this is the peak), and drain_table_kb and kept_table_kb
 * are the threads' tables of live blocks resident before and after their drains (mincore):
 * the harness's own memory in those RSS numbers, to take out of them (the report does); with
 * churn, extra.churn_threads counts the threads created; and the throughput of the spike and
 * of the next burst (extra.spike_ops_per_s, next_burst_ops_per_s). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "phased.h"

/* The checkpoints from their text ("0.1,1,5"): whole milliseconds, ascending. */
void hb_phased_parse_checkpoints(struct phased *P, const char *text)
{
    const char *s = text;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        double ms = v * 1000;
        if (end == s || !(v > 0) || fabs(ms - round(ms)) > 1e-6 || P->n_cp == CHECKPOINTS_MAX ||
            (P->n_cp && v <= P->cp[P->n_cp - 1]) || (*end && *end != ','))
            hb_usage("phased: checkpoints '%s': at most %d ascending times in seconds, each a "
                     "whole number of ms, separated by commas (e.g. 0.1,1,5)", text,
                     CHECKPOINTS_MAX);
        P->cp[P->n_cp++] = v;
        s = *end ? end + 1 : end;
    }
}

/* The checkpoint reader (one thread more than the workload's): once every thread has
 * reached its drain, a row at each checkpoint after the last drain ended; with `hold`, then
 * the later phases' ends moved by what the reading ran over the planned drain, and the
 * threads let out of it. */
void hb_phased_read_checkpoints(struct phased *P)
{
    int n = P->r->threads;
    hb_sleep_until(P->t0 + P->end[SPIKE]);
    while (atomic_load_explicit(&P->drained, memory_order_acquire) < n)
        hb_sleep_until(hb_now() + 0.001);
    double last = -1;
    for (int i = 0; i < n; i++)
        if (P->drained_at[i] > last) last = P->drained_at[i];
    P->drained_s = last;
    for (int k = 0; k < P->n_cp && last >= 0; k++) {
        double at = P->t0 + last + P->cp[k];
        if (!P->hold && !P->churn && at > P->t0 + P->end[STEADY2])
            break;                                             /* after the run: null */
        hb_sleep_until(at);
        hb_series_read(&P->cp_row[k]);
        P->cp_cache[k] = hb_cache_bytes();
        P->cp_hl[k] = hb_hoardlab_stats(&P->cp_stats[k]);
        for (int i = 0; i < n; i++)
            P->cp_live[k] += atomic_load_explicit(&P->lane[i].live_bytes, memory_order_relaxed);
        P->cp_read[k] = true;
    }
    if (P->hold) {
        double late = hb_now() - P->t0 - P->end[DRAIN];
        for (int p = DRAIN; p < PHASES && late > 0; p++) P->end[p] += late;
        atomic_store_explicit(&P->waited, true, memory_order_release);
    }
}


/* extra.after_drain_<t>_{rss_kb,private_dirty_kb,lazyfree_kb,held_bytes,live_bytes,
 * cache_bytes,heaps_free_bytes,heaps_empty_bytes,global_free_bytes,parked_bytes,purged_bytes,
 * large_cached_bytes,sb_live,sb_live_used_bytes}, <t> as 100ms or 1s; the throughput of the
 * spike and of the next burst; when the drain ended. */
void hb_phased_record_checkpoints(struct phased *P)
{
    static const struct { const char *key; int col; } seen[] = {
        { "rss_kb", HB_SER_RSS }, { "private_dirty_kb", HB_SER_PRIVATE_DIRTY },
        { "lazyfree_kb", HB_SER_LAZYFREE }, { "held_bytes", HB_SER_HELD },
    };
    struct hb_json *j = P->r->extra;
    if (P->drained_s >= 0) hb_json_real(j, "drained_s", P->drained_s);
    else hb_json_null(j, "drained_s");
    for (int k = 0; k < P->n_cp; k++) {
        long long ms = llround(P->cp[k] * 1000);
        char t[24], key[64];
        if (ms % 1000) snprintf(t, sizeof t, "%lldms", ms);
        else snprintf(t, sizeof t, "%llds", ms / 1000);
        for (size_t s = 0; s < sizeof seen / sizeof seen[0]; s++) {
            snprintf(key, sizeof key, "after_drain_%s_%s", t, seen[s].key);
            long long v = P->cp_read[k] ? P->cp_row[k].v[seen[s].col] : -1;
            if (v < 0) hb_json_null(j, key);
            else hb_json_int(j, key, v);
        }
        snprintf(key, sizeof key, "after_drain_%s_live_bytes", t);
        if (P->cp_read[k]) hb_json_uint(j, key, P->cp_live[k]);
        else hb_json_null(j, key);
        snprintf(key, sizeof key, "after_drain_%s_cache_bytes", t);
        if (P->cp_read[k] && P->cp_cache[k] >= 0) hb_json_int(j, key, P->cp_cache[k]);
        else hb_json_null(j, key);
        const struct hoardlab_stats *st = &P->cp_stats[k];
        const struct { const char *key; uint64_t v; } where[] = {
            { "heaps_free_bytes", st->heaps_free_bytes },
            { "heaps_empty_bytes", st->heaps_empty_bytes },
            { "global_free_bytes", st->global_free_bytes },
            { "parked_bytes", st->parked_bytes }, { "purged_bytes", st->purged_bytes },
            { "large_cached_bytes", st->large_cached_bytes },
            { "sb_live", st->sb_live }, { "sb_live_used_bytes", st->sb_live_used_bytes },
        };
        for (size_t s = 0; s < sizeof where / sizeof where[0]; s++) {
            snprintf(key, sizeof key, "after_drain_%s_%s", t, where[s].key);
            if (P->cp_read[k] && P->cp_hl[k]) hb_json_uint(j, key, where[s].v);
            else hb_json_null(j, key);
        }
    }
    if (P->collect_asked) {         /* the call made after the drain, and its longest */
        double most = -1;
        for (int i = 0; i < P->r->threads; i++)
            if (P->collect_s[i] > most) most = P->collect_s[i];
        if (P->collect) hb_json_str(j, "collect_call", P->collect);
        else hb_json_null(j, "collect_call");
        if (most >= 0) hb_json_real(j, "collect_s_max", most);
        else hb_json_null(j, "collect_s_max");
    }
    if (P->keep) {                  /* the survivors: blocks and bytes, all threads */
        static const char *const kept[4] = { "drain_live_blocks", "drain_kept_blocks",
                                             "drain_live_bytes", "drain_kept_bytes" };
        for (int k = 0; k < 4; k++) hb_json_uint(j, kept[k], atomic_load(&P->drain_in[k]));
    }
    if (P->keep || P->churn) {      /* as the first thread reached the drain */
        long long rss = P->pre_taken ? P->pre_row.v[HB_SER_RSS] : -1,
                  lazy = P->pre_taken ? P->pre_row.v[HB_SER_LAZYFREE] : -1;
        if (rss >= 0) hb_json_int(j, "drain_rss_kb", rss);
        else hb_json_null(j, "drain_rss_kb");
        if (lazy >= 0) hb_json_int(j, "drain_lazyfree_kb", lazy);
        else hb_json_null(j, "drain_lazyfree_kb");
        hb_json_uint(j, "drain_table_kb", atomic_load(&P->drain_in[4]));
        hb_json_uint(j, "kept_table_kb", atomic_load(&P->drain_in[5]));
    }
    if (P->churn) hb_json_int(j, "churn_threads", atomic_load(&P->threads_made));
    static const struct { const char *key; int phase; } rate[] = {
        { "spike_ops_per_s", SPIKE }, { "next_burst_ops_per_s", BURST } };
    for (size_t k = 0; k < sizeof rate / sizeof rate[0]; k++) {
        int p = rate[k].phase;
        double len = P->end[p] - P->end[p - 1];         /* 0: no next burst */
        if (len > 0) hb_json_real(j, rate[k].key, (double)atomic_load(&P->ops_in[p]) / len);
        else hb_json_null(j, rate[k].key);
    }
}

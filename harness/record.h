/* record.h — the record writer: one JSON record per run (the schema is in README.md), and
 * the pieces of it a workload writes itself. Above the run machinery; below the workloads. */
#ifndef HB_RECORD_H
#define HB_RECORD_H

#include "run.h"

/* ---- record.c ------------------------------------------------------------------------------- */

/* The record's head, from `{` through "params" (what a record says before its results); a
 * workload that must write its own record (signal-malloc's watchdog) starts with it. */
void hb_record_head(struct hb_json *j, const struct hb_run *r);
/* The whole record of a finished run on stdout, one line: its head, the results, peak_rss_kb
 * = rss, libhoardlab's statistics, the workload's extra object, latency and series. */
void hb_record_write(const struct hb_run *r, const struct hb_json *extra, long rss);

/* One JSON object per round of a blowup workload: live bytes, os bytes (A now, or null),
 * RSS and LazyFree (null without smaps_rollup). The caller has opened an array. */
void hb_round_record(struct hb_json *j, int round, size_t live_bytes);
/* "floor_kb": RSS less LazyFree now (before a measured phase: the memory that is not the
 * phase's), from outside the allocator; blowup of any allocator is read against it. */
void hb_floor_record(struct hb_json *j);

#endif

/* observe.c — the observers of every block handed out and given back: the false-sharing
 * census (census.c) and the trace recorder (trace.c). interpose.c calls the hooks below only
 * while hl_observing is true, so with both off the cost is one predictable branch per call.
 * The heap log (heaplog.c) watches superblocks, not blocks: heap.c calls it, not interpose.c.
 *
 * Observers run inside malloc and free: they never call malloc or stdio, and take their
 * memory straight from mmap so that it counts neither in U nor in A. */
#include "instruments.h"

bool hl_observing;
static bool census_on, trace_on, heaplog_on;

static void touched(const void *object) { hl_census_touch(hl_self(), object); }
static uint64_t foreign(const void *start, size_t bytes)
{
    return hl_census_foreign_blocks(hl_self(), start, bytes);
}

void hl_observe_init(void)
{
    census_on = hl_cfg.census && hl_census_init();
    trace_on = hl_cfg.trace && hl_cfg.trace[0] && hl_trace_init(hl_cfg.trace);
    heaplog_on = hl_cfg.heap_log && hl_cfg.heap_log[0] && hl_heaplog_init(hl_cfg.heap_log);
    hl_observing = census_on || trace_on;
    /* The parts below call the census through these hooks, not upward. */
    if (census_on) {
        hl_meta_touched = touched;
        hl_meta_foreign_blocks = foreign;
        hl_thread_exit_observer = hl_census_thread_exit;
    }
}

void hl_observe_alloc(void *p, size_t request, size_t usable, size_t align)
{
    struct hl_thread *t = hl_self();
    if (census_on) hl_census_alloc(t, p, usable);
    if (trace_on) hl_trace_alloc(t, p, request, usable, align);
}

void hl_observe_free(void *p, size_t usable)
{
    if (census_on) hl_census_free(p, usable);
    if (trace_on) hl_trace_free(hl_self(), p, usable);
}

void hl_observe_at_exit(void)
{
    if (trace_on) hl_trace_write();
    if (heaplog_on) hl_heaplog_write();
}

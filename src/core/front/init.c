/* init.c — start-up inside a preloaded allocator, and exit: the order in which the core's
 * parts come up. It only orchestrates; the parts are below it (docs/layout.md, "Layers").
 *
 * The first malloc may arrive before libc has set up the environment (the dynamic linker
 * allocates while loading), and initialisation itself may allocate. So: an init state
 * (not started / in progress / done); the initialising thread is served from a static
 * bootstrap arena while in progress, other threads wait; until `environ` exists, calls are
 * served from the arena without starting init, because the configuration comes from it. The
 * shared library's constructor (export.c) forces init, so a bad configuration stops the
 * program before main. */
#include <sched.h>
#include <stdio.h>
#include <unistd.h>
#include "front.h"
#include "heap.h"
#include "instruments.h"

_Atomic int hl_init_state;
static HL_TLS bool initialising;

/* ---- init ---------------------------------------------------------------------------------- */

static void init_now(void)
{
    hl_config_load();
    hl_stats_init();
    hl_check_init();                    /* before any block is handed out */
    hl_active = hl_strategies[hl_cfg.strategy];
    hl_lock_kind = hl_cfg.lock;
    hl_large_threshold = hl_cfg.large_threshold ? hl_cfg.large_threshold
                                                : hl_cfg.superblock_size / 2;
    if (hl_classes_init(hl_large_threshold)) _exit(2);
    hl_observe_init();
    hl_arena_init();
    /* The row's paths, counted or not; its init may choose others. */
    hl_paths = hl_cfg.counting ? &hl_active->counted : &hl_active->uncounted;
    if (!hl_paths->malloc || !hl_paths->malloc_entry)
        hl_die("counting = %s: strategy '%s' has no such paths (its row must use HL_ROW_PATHS)",
               hl_cfg.counting ? "on" : "off", hl_active->name);
    if (hl_active->init && hl_active->init()) _exit(2);
    hl_front_malloc_fn = hl_paths->malloc;   /* the entries: interpose.c's ready opens them */
    hl_front_free_fn = hl_paths->free;
    hl_fork_init();
}

/* Returns with the state done, or in progress on the initialising thread (which then uses
 * the bootstrap arena), or not started when `environ` is not there yet and !force. */
void hl_init_maybe(bool force)
{
    extern char **environ;
    int expect = 0;
    if (!force && !environ) return;
    if (atomic_compare_exchange_strong(&hl_init_state, &expect, 1)) {
        initialising = true;
        init_now();
        atomic_store(&hl_init_state, 2);
        initialising = false;
        if (hl_cfg.verbose) {
            hl_say("strategy %s: %s", hl_active->name, hl_active->summary);
            hl_config_print_effective(STDERR_FILENO);
        }
        return;
    }
    while (atomic_load(&hl_init_state) != 2 && !initialising) sched_yield();
}

void hl_init(void) { hl_init_maybe(true); }

/* At exit: write the trace and the statistics (called by export.c's destructor). */
void hl_at_exit(void)
{
    if (atomic_load(&hl_init_state) != 2) return;
    hl_observe_at_exit();
    hl_stats_at_exit();
}

/* init.c — start-up inside a preloaded allocator, the bootstrap arena, fork, and exit.
 *
 * The first malloc may arrive before libc has set up the environment (the dynamic linker
 * allocates while loading), and initialisation itself may allocate. So: an init state
 * (not started / in progress / done); the initialising thread is served from a static
 * bootstrap arena while in progress, other threads wait; until `environ` exists, calls are
 * served from the arena without starting init, because the configuration comes from it. The
 * shared library's constructor (export.c) forces init, so a bad configuration stops the
 * program before main. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "front.h"

_Atomic int hl_init_state;
static HL_TLS bool initialising;

/* ---- messages ---------------------------------------------------------------------------- */

static void say(const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "hoardlab: ");
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    for (ssize_t off = 0, w; off < n; off += w)
        if ((w = write(STDERR_FILENO, line + off, (size_t)(n - off))) <= 0) break;
}

void hl_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
}

void hl_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    _exit(2);
}

int hl_nprocs(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ---- the bootstrap arena ----------------------------------------------------------------- */

/* Blocks carry their size in a 16-byte header so realloc and malloc_usable_size work; they
 * are never reused (free of one is a no-op), which is fine for the few early calls. */
static char arena[256 * 1024] __attribute__((aligned(4096)));
static _Atomic size_t arena_used;

void *hl_bootstrap_alloc(size_t size, size_t align)
{
    if (align < HL_ALIGN) align = HL_ALIGN;
    if (size > sizeof arena) { errno = ENOMEM; return NULL; }
    size_t need = hl_align_up(size, HL_ALIGN) + align, old = atomic_load(&arena_used);
    do {
        if (old + need > sizeof arena) { errno = ENOMEM; return NULL; }
    } while (!atomic_compare_exchange_weak(&arena_used, &old, old + need));
    char *p = (char *)hl_align_up((uintptr_t)arena + old + HL_ALIGN, align);
    ((size_t *)p)[-1] = size;
    return p;
}

bool hl_bootstrap_owns(const void *p)
{
    return (const char *)p >= arena && (const char *)p < arena + sizeof arena;
}

size_t hl_bootstrap_usable(const void *p) { return ((const size_t *)p)[-1]; }

/* ---- fork: every lock in one fixed order, strategy's (outermost) first ---------------------- */

static void fork_prepare(void)
{
    if (hl_active->fork_prepare) hl_active->fork_prepare();
    hl_arena_fork(0);
    hl_meta_fork(0);
    hl_thread_fork_prepare();
    hl_large_fork(0);
}

static void fork_parent(void)
{
    hl_large_fork(1);
    hl_thread_fork_parent();
    hl_meta_fork(1);
    hl_arena_fork(1);
    if (hl_active->fork_parent) hl_active->fork_parent();
}

static void fork_child(void)
{
    hl_large_fork(2);
    hl_thread_fork_child();
    hl_meta_fork(2);
    hl_arena_fork(2);
    if (hl_active->fork_child) hl_active->fork_child();
}

/* ---- init ---------------------------------------------------------------------------------- */

static void init_now(void)
{
    hl_config_load();
    hl_check_init();                    /* before any block is handed out */
    hl_active = hl_strategies[hl_cfg.strategy];
    hl_lock_kind = hl_cfg.lock;
    hl_large_threshold = hl_cfg.large_threshold ? hl_cfg.large_threshold
                                                : hl_cfg.superblock_size / 2;
    if (hl_classes_init(hl_large_threshold)) _exit(2);
    hl_stats_init();
    hl_observe_init();
    hl_arena_init();
    if (hl_active->init && hl_active->init()) _exit(2);
    hl_front_malloc_fn = hl_active->malloc;
    hl_front_free_fn = hl_active->free;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
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

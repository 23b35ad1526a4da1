/* util.c — the utilities every file of hlbench may use: failing with a message, the clock,
 * RSS (now and peak), libhoardlab's statistics and strategy found with dlsym (so hlbench is
 * not linked with it and runs under any allocator), and installing a signal handler. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "util.h"

static void say(const char *fmt, va_list ap)
{
    fputs("hlbench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

_Noreturn void hb_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    fflush(stdout);
    exit(1);
}

_Noreturn void hb_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    exit(2);
}

double hb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void hb_sleep_until(double t)
{
    double d;
    while ((d = t - hb_now()) > 0) {
        struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
        nanosleep(&ts, NULL);
    }
}

/* ---- RSS ------------------------------------------------------------------------------------ */

long hb_rss_kb(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int hb_peak_rss_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");     /* "5" resets VmHWM (Linux >= 4.0) */
    if (!f) return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

long hb_peak_rss_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
        fclose(f);
    }
    if (kb < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kb = ru.ru_maxrss;
    }
    return kb;
}

/* ---- libhoardlab, when it is loaded --------------------------------------------------------- */

bool hb_hoardlab_stats(struct hoardlab_stats *s)
{
    static void (*fn)(struct hoardlab_stats *);
    static bool looked;
    if (!looked) {
        *(void **)&fn = dlsym(RTLD_DEFAULT, "hoardlab_stats");
        looked = true;
    }
    if (!fn) return false;
    fn(s);
    return true;
}

long long hb_cache_bytes(void)
{
    struct hoardlab_stats s;
    /* issue 37: memory held in the allocator's front caches. hoardlab: tlab_bytes, the TLABs'
     * (cache = thread) or the per-CPU caches' (cache = cpu). */
    if (hb_hoardlab_stats(&s)) return (long long)s.tlab_bytes;
    /* gperftools' tcmalloc (Debian's libtcmalloc-minimal4): its threads' caches */
    int (*prop)(const char *, size_t *);
    *(void **)&prop = dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
    size_t v;
    if (prop && prop("tcmalloc.current_total_thread_cache_bytes", &v)) return (long long)v;
    return -1;
}

void hb_hoardlab_reset_peaks(void)
{
    void (*fn)(void);
    *(void **)&fn = dlsym(RTLD_DEFAULT, "hoardlab_stats_reset_peaks");
    if (fn) fn();
}

const char *hb_hoardlab_strategy(void)
{
    const char *(*fn)(void);
    *(void **)&fn = dlsym(RTLD_DEFAULT, "hoardlab_strategy");
    return fn ? fn() : NULL;
}

/* ---- the allocator's explicit collect ------------------------------------------------------ */

static size_t (*collect_hl)(void);                       /* hoardlab's: the bytes */
static void (*collect_void)(void);                       /* gperftools' */
static void (*collect_bool)(bool);                       /* mimalloc's */
static int (*collect_ctl)(const char *, void *, size_t *, void *, size_t);   /* jemalloc's */
static int (*collect_trim)(size_t);                      /* glibc's */

const char *hb_collect_find(void)
{
    void *f;
    if ((f = dlsym(RTLD_DEFAULT, "hoardlab_collect"))) {
        *(void **)&collect_hl = f;
        return "hoardlab_collect";
    }
    if ((f = dlsym(RTLD_DEFAULT, "mi_collect"))) {
        *(void **)&collect_bool = f;
        return "mi_collect";
    }
    if ((f = dlsym(RTLD_DEFAULT, "mallctl"))) {
        *(void **)&collect_ctl = f;
        return "mallctl(arena.4096.purge)";
    }
    if ((f = dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"))) {
        *(void **)&collect_void = f;
        return "MallocExtension_ReleaseFreeMemory";
    }
    Dl_info where;
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    if ((f = dlsym(RTLD_DEFAULT, "malloc_trim")) && m && dladdr(m, &where) && where.dli_fname &&
        strstr(where.dli_fname, "libc.so")) {
        *(void **)&collect_trim = f;
        return "malloc_trim";
    }
    return NULL;
}

void hb_collect(void)
{
    if (collect_hl) collect_hl();
    else if (collect_void) collect_void();
    else if (collect_bool) collect_bool(true);
    else if (collect_ctl) collect_ctl("arena.4096.purge", NULL, NULL, NULL, 0);   /* all arenas */
    else if (collect_trim) collect_trim(0);
}

/* ---- signals -------------------------------------------------------------------------------- */

void hb_on_sigusr1(void (*handler)(int), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, old)) hb_fail("sigaction: %s", strerror(errno));
}

/* hlrun — run one command and report what wait4 says of it, for the real-program workloads
 * of tools/hoardlab (tools/hoardlab_lib/programs/).
 *
 *   hlrun [-p PRELOAD] [-i SECONDS] -o FILE -- PROGRAM [ARG...]
 *
 * Forks, sets LD_PRELOAD=PRELOAD in the child only (hlrun itself never runs under the
 * allocator measured), execs PROGRAM, waits for it with wait4 and writes one line to FILE:
 *
 *   status=N wall_ns=N utime_us=N stime_us=N maxrss_kb=N
 *
 * With -i SECONDS (issue 28: memory over time), a thread samples the child's process tree (the
 * child and every descendant, found by their parent pids in /proc) every SECONDS from the
 * fork on, summing each process's /proc/PID/smaps_rollup, and the lines after the first give
 * the series, one a sample, in time order:
 *
 *   series t_s=N rss_kb=N private_dirty_kb=N lazyfree_kb=N anonymous_kb=N procs=N
 *
 * t_s: seconds since the fork (3 decimals); the next four: the sums of Rss, Private_Dirty,
 * LazyFree and Anonymous (kB) over the procs processes read; a field no process reported
 * (LazyFree before Linux 4.12) is `null`. A sample that finds no process readable is left
 * out. The sums count a page shared by several processes once in each.
 *
 * SIGTERM, SIGINT, SIGHUP and SIGQUIT sent to hlrun are passed on to the child (a server is
 * stopped that way). status is the raw wait status. The rusage covers the child and every descendant it waited
 * for; maxrss is the largest peak RSS among them, each alone.
 *
 * Why a launcher at all: at execve the kernel keeps the peak RSS of the memory image being
 * replaced as the new program's ru_maxrss. A child forked from the (large) Python tool starts
 * with the tool's pages, so its ru_maxrss would never read below the tool's size. Forked from
 * this small program, the floor is hlrun's own peak RSS (about a MiB).
 *
 * hlrun's exit status: 0 when FILE was written, 127 when the command could not be started
 * (FILE then says status=-1 and why), 2 for bad usage. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile pid_t child;

static void pass_on(int sig)
{
    if (child > 0) kill(child, sig);
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long tv_us(struct timeval tv) { return (long long)tv.tv_sec * 1000000LL + tv.tv_usec; }

/* ---- -i: the process tree's memory over time ------------------------------------------------ */

enum { FIELDS = 4 };
static const char *const field_name[FIELDS] = { "rss_kb", "private_dirty_kb", "lazyfree_kb",
                                                "anonymous_kb" };

struct sampler {
    double interval;
    long long t0;
    char *lines;                    /* the series lines, appended */
    size_t len, cap;
    bool stop;
    pthread_mutex_t lock;
    pthread_cond_t wake;
};

static void append(struct sampler *S, const char *text, size_t n)
{
    if (S->len + n + 1 > S->cap) {
        size_t cap = S->cap ? S->cap * 2 : 4096;
        while (cap < S->len + n + 1) cap *= 2;
        char *b = realloc(S->lines, cap);
        if (!b) return;             /* out of memory: the series is cut short */
        S->lines = b;
        S->cap = cap;
    }
    memcpy(S->lines + S->len, text, n);
    S->len += n;
}

/* The parent pid of /proc/PID/stat (after the command's closing parenthesis), or -1. */
static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    int ppid;
    return p && sscanf(p + 1, " %*c %d", &ppid) == 1 ? (pid_t)ppid : -1;
}

/* Adds PID's smaps_rollup fields to sum (and marks which were seen); false if unreadable. */
static bool add_rollup(pid_t pid, long long *sum, bool *seen)
{
    static const char *const key[FIELDS] = { "Rss:", "Private_Dirty:", "LazyFree:", "Anonymous:" };
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    for (char *line = buf; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        for (int k = 0; k < FIELDS; k++)
            if (!strncmp(line, key[k], strlen(key[k]))) {
                sum[k] += strtoll(line + strlen(key[k]), NULL, 10);
                seen[k] = true;
            }
    return true;
}

/* The child and its descendants: every pid of /proc whose parent chain reaches the child. */
static void sample(struct sampler *S, double t)
{
    enum { MAXP = 65536 };
    static pid_t pid[MAXP], ppid[MAXP];
    static bool in[MAXP];
    int n = 0;
    DIR *d = opendir("/proc");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) && n < MAXP;) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        if (*end || v <= 0) continue;
        pid[n] = (pid_t)v;
        ppid[n] = parent_of(pid[n]);
        in[n] = pid[n] == child;
        n++;
    }
    closedir(d);
    for (bool grew = true; grew;) {     /* close the set under "parent is in it" */
        grew = false;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n && !in[a]; b++)
                if (in[b] && ppid[a] == pid[b]) in[a] = grew = true;
    }
    long long sum[FIELDS] = { 0 };
    bool seen[FIELDS] = { false };
    int procs = 0;
    for (int a = 0; a < n; a++)
        if (in[a] && add_rollup(pid[a], sum, seen)) procs++;
    if (!procs) return;
    char line[256];
    int len = snprintf(line, sizeof line, "series t_s=%.3f", t);
    for (int k = 0; k < FIELDS; k++)
        len += seen[k] ? snprintf(line + len, sizeof line - (size_t)len, " %s=%lld",
                                  field_name[k], sum[k])
                       : snprintf(line + len, sizeof line - (size_t)len, " %s=null",
                                  field_name[k]);
    len += snprintf(line + len, sizeof line - (size_t)len, " procs=%d\n", procs);
    append(S, line, (size_t)len);
}

static void *sampler_main(void *arg)
{
    struct sampler *S = arg;
    pthread_mutex_lock(&S->lock);
    for (long long k = 0; !S->stop; k++) {
        long long due = S->t0 + (long long)((double)k * S->interval * 1e9);
        struct timespec ts = { due / 1000000000LL, due % 1000000000LL };
        while (!S->stop && pthread_cond_timedwait(&S->wake, &S->lock, &ts) != ETIMEDOUT) {}
        if (S->stop) break;
        pthread_mutex_unlock(&S->lock);
        sample(S, (double)(now_ns() - S->t0) * 1e-9);
        pthread_mutex_lock(&S->lock);
        long long late = (now_ns() - S->t0) / (long long)(S->interval * 1e9);
        if (late > k) k = late;     /* skip the grid points a slow sample overran */
    }
    pthread_mutex_unlock(&S->lock);
    return NULL;
}

static bool sampler_start(struct sampler *S, pthread_t *t)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&S->wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&S->lock, NULL);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* signals to hlrun stay with main */
    bool ok = pthread_create(t, NULL, sampler_main, S) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ok;
}

static void sampler_stop(struct sampler *S, pthread_t t)
{
    pthread_mutex_lock(&S->lock);
    S->stop = true;
    pthread_cond_signal(&S->wake);
    pthread_mutex_unlock(&S->lock);
    pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    const char *preload = NULL, *out = NULL;
    struct sampler S = { .interval = 0 };
    int opt;
    while ((opt = getopt(argc, argv, "+p:o:i:")) != -1) {
        if (opt == 'p') preload = optarg;
        else if (opt == 'o') out = optarg;
        else if (opt == 'i') {
            char *end;
            S.interval = strtod(optarg, &end);
            if (*end || end == optarg || !(S.interval > 0 && S.interval < 1e6)) {
                fprintf(stderr, "hlrun: bad value '%s' for -i: expected seconds > 0\n", optarg);
                return 2;
            }
        } else return 2;
    }
    if (!out || optind >= argc) {
        fprintf(stderr, "usage: hlrun [-p PRELOAD] [-i SECONDS] -o FILE -- PROGRAM [ARG...]\n");
        return 2;
    }
    FILE *f = fopen(out, "w");
    if (!f) {
        fprintf(stderr, "hlrun: %s: %s\n", out, strerror(errno));
        return 2;
    }
    long long t0 = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(f, "status=-1 error=fork:%s\n", strerror(errno));
        fclose(f);
        return 127;
    }
    if (pid == 0) {
        if (preload && setenv("LD_PRELOAD", preload, 1) != 0) _exit(127);
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "hlrun: %s: %s\n", argv[optind], strerror(errno));
        _exit(127);
    }
    child = pid;
    pthread_t sampler_thread;
    bool sampling = false;
    if (S.interval > 0) {
        S.t0 = t0;
        sampling = sampler_start(&S, &sampler_thread);
        if (!sampling) fprintf(stderr, "hlrun: could not start the sampler; no series\n");
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = pass_on;        /* no SA_RESTART: wait4 returns EINTR and is called again */
    sigemptyset(&sa.sa_mask);
    const int passed[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++) sigaction(passed[i], &sa, NULL);
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            fprintf(f, "status=-1 error=wait4:%s\n", strerror(errno));
            fclose(f);
            return 127;
        }
    }
    long long wall = now_ns() - t0;
    if (sampling) sampler_stop(&S, sampler_thread);
    fprintf(f, "status=%d wall_ns=%lld utime_us=%lld stime_us=%lld maxrss_kb=%ld\n", status,
            wall, tv_us(ru.ru_utime), tv_us(ru.ru_stime), ru.ru_maxrss);
    if (S.len) fwrite(S.lines, 1, S.len, f);
    free(S.lines);
    return fclose(f) == 0 ? 0 : 2;
}

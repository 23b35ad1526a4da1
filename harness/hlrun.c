/* hlrun — run one command and report what wait4 says of it, for the real-program workloads
 * of tools/hoardlab (tools/hoardlab_lib/programs.py).
 *
 *   hlrun [-p PRELOAD] -o FILE -- PROGRAM [ARG...]
 *
 * Forks, sets LD_PRELOAD=PRELOAD in the child only (hlrun itself never runs under the
 * allocator measured), execs PROGRAM, waits for it with wait4 and writes one line to FILE:
 *
 *   status=N wall_ns=N utime_us=N stime_us=N maxrss_kb=N
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
#include <errno.h>
#include <signal.h>
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

int main(int argc, char **argv)
{
    const char *preload = NULL, *out = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "+p:o:")) != -1) {
        if (opt == 'p') preload = optarg;
        else if (opt == 'o') out = optarg;
        else return 2;
    }
    if (!out || optind >= argc) {
        fprintf(stderr, "usage: hlrun [-p PRELOAD] -o FILE -- PROGRAM [ARG...]\n");
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
    fprintf(f, "status=%d wall_ns=%lld utime_us=%lld stime_us=%lld maxrss_kb=%ld\n", status,
            wall, tv_us(ru.ru_utime), tv_us(ru.ru_stime), ru.ru_maxrss);
    return fclose(f) == 0 ? 0 : 2;
}

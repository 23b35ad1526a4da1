/* huge.c — huge-page coverage from /proc/self/smaps_rollup (huge.h). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "huge.h"

static long field(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *line = text; line && *line; ) {
        if (!strncmp(line, name, n)) return strtol(line + n, NULL, 10);
        line = strchr(line, '\n');
        if (line) line++;
    }
    return -1;
}

double hb_huge_parse(const char *text, long *huge_kb, long *rss_kb)
{
    *huge_kb = field(text, "AnonHugePages:");
    *rss_kb = field(text, "Rss:");
    if (*huge_kb < 0 || *rss_kb <= 0) return -1;
    double c = (double)*huge_kb / (double)*rss_kb;
    return c > 1 ? 1 : c;
}

double hb_huge_coverage(long *huge_kb, long *rss_kb)
{
    char buf[4096];
    *huge_kb = *rss_kb = -1;
    int fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    return hb_huge_parse(buf, huge_kb, rss_kb);
}

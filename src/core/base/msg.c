/* msg.c — the library's one way to speak: a line "hoardlab: <msg>" on stderr, written with
 * write(2) from a stack buffer, so it is safe inside malloc (no stdio buffers, no malloc). At
 * the bottom of the core: every other file may use it. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include "base.h"

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

/* The output files of trace and heap_log: pattern with each "%p" replaced by the process id,
 * so that a program that starts others leaves a file per process. */
void hl_msg_path(const char *pattern, char *dst, size_t cap)
{
    size_t o = 0;
    for (const char *s = pattern; *s && o + 24 < cap; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            o += (size_t)snprintf(dst + o, cap - o, "%ld", (long)getpid());
            s++;
        } else {
            dst[o++] = *s;
        }
    }
    dst[o] = 0;
}

/* overlap_malloc.c — a deliberately broken allocator for one test: every 1000th malloc of
 * 32 bytes or more returns a block that overlaps the previous one (8 bytes in). hlbench must
 * notice (a failed stamp, exit status 1) instead of reporting a fast run. The overlapping
 * blocks are told apart by their address (8 mod 16) and never given back to glibc. */
#include <stddef.h>
#include <stdint.h>

void *__libc_malloc(size_t size);
void __libc_free(void *p);
void *malloc(size_t size);
void free(void *p);

static _Thread_local char *last;
static _Thread_local unsigned long calls;

void *malloc(size_t size)
{
    char *p = __libc_malloc(size);
    if (size >= 32 && last && ++calls % 1000 == 0) return last + 8;
    if (size >= 32) last = p;
    return p;
}

void free(void *p)
{
    if (((uintptr_t)p & 15) == 8) return;
    __libc_free(p);
}

/* export.c — the libc names, exported by libhoardlab.so only (the static core used by the
 * tests keeps the hl_ names, so sanitizer builds can link the allocator without replacing
 * their own malloc). The glibc-internal __libc_* names are interposed too, or a program that
 * calls them would hand one allocator's blocks to the other. */
#include <stdlib.h>
#include "front.h"

#define EXPORT HL_EXPORT

/* Initialise before main even if nothing allocates first, so a bad configuration stops the
 * program at start-up; report at exit. */
__attribute__((constructor)) static void hoardlab_start(void) { hl_init(); }
__attribute__((destructor)) static void hoardlab_end(void) { hl_at_exit(); }

EXPORT void *malloc(size_t n) { return hl_front_malloc(n); }
EXPORT void free(void *p) { hl_front_free(p); }
EXPORT void cfree(void *p) { hl_front_free(p); }
EXPORT void *calloc(size_t n, size_t s) { return hl_calloc(n, s); }
EXPORT void *realloc(void *p, size_t n) { return hl_realloc(p, n); }
EXPORT void *reallocarray(void *p, size_t n, size_t s) { return hl_reallocarray(p, n, s); }
EXPORT int posix_memalign(void **out, size_t a, size_t n) { return hl_posix_memalign(out, a, n); }
EXPORT void *aligned_alloc(size_t a, size_t n) { return hl_aligned_alloc(a, n); }
EXPORT void *memalign(size_t a, size_t n) { return hl_memalign(a, n); }
EXPORT void *valloc(size_t n) { return hl_valloc(n); }
EXPORT void *pvalloc(size_t n) { return hl_pvalloc(n); }
EXPORT size_t malloc_usable_size(void *p) { return hl_malloc_usable_size(p); }

EXPORT void *__libc_malloc(size_t n) { return hl_front_malloc(n); }
EXPORT void __libc_free(void *p) { hl_front_free(p); }
EXPORT void *__libc_calloc(size_t n, size_t s) { return hl_calloc(n, s); }
EXPORT void *__libc_realloc(void *p, size_t n) { return hl_realloc(p, n); }
EXPORT void *__libc_memalign(size_t a, size_t n) { return hl_memalign(a, n); }
EXPORT void *__libc_valloc(size_t n) { return hl_valloc(n); }
EXPORT void *__libc_pvalloc(size_t n) { return hl_pvalloc(n); }

/* trace.c — records every allocation and free for offline analysis and `hlbench replay`, the
 * way the Hoard paper measured fragmentation (§5.4): each thread appends to a buffer of its
 * own, with a CLOCK_MONOTONIC timestamp, and at exit the buffers are merged in time order into
 * one text file (format: harness/README.md).
 *
 * interpose.c reports a free before the block is given back and an allocation after it was
 * obtained, so a block's free is always time-stamped before any later allocation of the same
 * address by another thread: the address identifies a block within the merged trace.
 * Buffers are chunks from mmap (not counted in A), appended to by their thread only; a record
 * is published by storing the chunk's count with release order, so the writer at exit reads
 * only complete records even if a thread is still running. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "instruments.h"

struct rec { uint64_t ns; uintptr_t addr; uint64_t size, usable; uint32_t align; char op; };

#define CHUNK_BYTES (1u << 20)

struct chunk {
    struct chunk *_Atomic next;
    _Atomic size_t n;
    struct rec r[];
};
#define CHUNK_RECS ((CHUNK_BYTES - sizeof(struct chunk)) / sizeof(struct rec))

struct tbuf {                        /* one per thread lifetime, never freed */
    struct tbuf *next;               /* list of every buffer */
    unsigned tid;                    /* dense, in order of first allocation */
    struct chunk *first, *last;
};

static char path[4096];
static uint64_t t_start;
static struct tbuf *_Atomic buffers;
static _Atomic unsigned n_buffers;
static _Atomic bool stopped;
static _Atomic uint64_t dropped;     /* records lost for want of memory */

static void *map(size_t bytes)
{
    void *p = hl_os_mmap(bytes, 0);
    return p == MAP_FAILED ? NULL : p;
}

bool hl_trace_init(const char *p)
{
    size_t n = strlen(p);
    if (n >= sizeof path) {
        hl_say("trace: path too long; trace off");
        return false;
    }
    memcpy(path, p, n + 1);
    t_start = hl_now_ns();
    return true;
}

static struct tbuf *buffer_of(struct hl_thread *t)
{
    struct tbuf *b = t->trace;
    if (hl_likely(b)) return b;
    if (!(b = map(sizeof *b)) || !(b->first = b->last = map(CHUNK_BYTES))) return NULL;
    b->tid = atomic_fetch_add(&n_buffers, 1);
    b->next = atomic_load(&buffers);
    while (!atomic_compare_exchange_weak(&buffers, &b->next, b)) { }
    return t->trace = b;
}

static void put(struct hl_thread *t, char op, void *p, size_t size, size_t usable, size_t align)
{
    if (atomic_load_explicit(&stopped, memory_order_relaxed)) return;
    struct tbuf *b = buffer_of(t);
    if (!b) {
        atomic_fetch_add(&dropped, 1);
        return;
    }
    struct chunk *c = b->last;
    size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
    if (n == CHUNK_RECS) {
        struct chunk *more = map(CHUNK_BYTES);
        if (!more) {
            atomic_fetch_add(&dropped, 1);
            return;
        }
        atomic_store_explicit(&c->next, more, memory_order_release);
        b->last = c = more;
        n = 0;
    }
    c->r[n] = (struct rec){ hl_now_ns() - t_start, (uintptr_t)p, size, usable, (uint32_t)align, op };
    atomic_store_explicit(&c->n, n + 1, memory_order_release);
}

void hl_trace_alloc(struct hl_thread *t, void *p, size_t request, size_t usable, size_t align)
{
    put(t, 'a', p, request, usable, align);
}

void hl_trace_free(struct hl_thread *t, void *p, size_t usable)
{
    put(t, 'f', p, 0, usable, 0);
}

/* ---- writing at exit: merge the buffers by time, as text ----------------------------------- */

struct out { int fd; size_t len; char buf[1 << 16]; };

static void flush(struct out *o)
{
    for (size_t done = 0; done < o->len;) {
        ssize_t w = write(o->fd, o->buf + done, o->len - done);
        if (w <= 0) break;
        done += (size_t)w;
    }
    o->len = 0;
}

static void put_str(struct out *o, const char *s)
{
    size_t n = strlen(s);
    if (o->len + n > sizeof o->buf) flush(o);
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void put_num(struct out *o, uint64_t v, unsigned base, char after)
{
    char tmp[24];
    int k = 0;
    do {
        tmp[k++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (o->len + (size_t)k + 1 > sizeof o->buf) flush(o);
    while (k) o->buf[o->len++] = tmp[--k];
    o->buf[o->len++] = after;
}

/* Where the next record of a buffer is: chunk, index, and the count published at exit. */
struct cursor { struct chunk *c; size_t i, n; unsigned tid; };

static bool cursor_valid(struct cursor *k)
{
    while (k->c && k->i == k->n) {
        size_t full = k->n;
        struct chunk *next = atomic_load_explicit(&k->c->next, memory_order_acquire);
        if (full < CHUNK_RECS || !next) { k->c = NULL; break; }
        k->c = next;
        k->i = 0;
        k->n = atomic_load_explicit(&next->n, memory_order_acquire);
    }
    return k->c != NULL;
}

void hl_trace_write(void)
{
    if (atomic_exchange(&stopped, true)) return;
    unsigned nb = 0;
    struct tbuf *all = atomic_load(&buffers);
    for (struct tbuf *b = all; b; b = b->next) nb++;
    size_t cur_bytes = hl_align_up((nb + 1) * sizeof(struct cursor), HL_PAGE);
    struct cursor *cur = map(cur_bytes);
    struct out *o = map(sizeof *o);
    char file[sizeof path + 32];
    if (!cur || !o) {
        hl_say("trace: out of memory at exit; no trace written");
        return;
    }
    hl_msg_path(path, file, sizeof file);
    o->fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0) {
        hl_say("trace: cannot create %s", file);
        return;
    }
    unsigned k = 0;
    uint64_t total = 0;
    for (struct tbuf *b = all; b && k < nb; b = b->next, k++) {
        cur[k] = (struct cursor){ b->first, 0, atomic_load_explicit(&b->first->n,
                                                                    memory_order_acquire), b->tid };
        for (struct chunk *c = b->first; c; c = atomic_load(&c->next)) total += atomic_load(&c->n);
    }
    put_str(o, "# hoardlab trace 1\n# pid ");
    put_num(o, (uint64_t)getpid(), 10, ' ');
    put_str(o, "threads ");
    put_num(o, k, 10, ' ');
    put_str(o, "records ");
    put_num(o, total, 10, ' ');
    put_str(o, "dropped ");
    put_num(o, atomic_load(&dropped), 10, '\n');
    put_str(o, "# op t_ns tid id size align usable\n");
    for (;;) {                       /* k-way merge by time; ties: the lower thread id first */
        struct cursor *best = NULL;
        for (unsigned i = 0; i < k; i++) {
            if (!cursor_valid(&cur[i])) continue;
            uint64_t t = cur[i].c->r[cur[i].i].ns, bt = best ? best->c->r[best->i].ns : 0;
            if (!best || t < bt || (t == bt && cur[i].tid < best->tid)) best = &cur[i];
        }
        if (!best) break;
        const struct rec *r = &best->c->r[best->i++];
        char op[2] = { r->op, 0 };
        put_str(o, op);
        put_str(o, " ");
        put_num(o, r->ns, 10, ' ');
        put_num(o, best->tid, 10, ' ');
        put_num(o, r->addr, 16, ' ');
        put_num(o, r->size, 10, ' ');
        put_num(o, r->align, 10, ' ');
        put_num(o, r->usable, 10, '\n');
    }
    flush(o);
    close(o->fd);
    hl_os_munmap(o, sizeof *o);
    hl_os_munmap(cur, cur_bytes);
}

/* heaplog.c — the heap log (`heap_log = PATH`): each superblock's moves between heaps and
 * between fullness groups, with its heap's state after the move, written as text at exit for
 * the heap map (tools/hoardlab_lib/heapmap/ draws heaps x time and exports a Chrome
 * trace-event file).
 *
 * heap.c calls event() through hl_heap_observer whenever a superblock enters a heap (attach),
 * leaves one (detach) or changes fullness group (regroup), with the heap locked or from the
 * heap's only thread, so a heap's slot below (its superblocks per list) is written by one
 * thread at a time. A move between heaps is a detach and then an attach of the same
 * superblock by the same thread (globalheap.c's put and get, under the shard's lock): the
 * attach line names the heap it came from (`peer`). A detach no attach follows gave the
 * superblock back to the OS (release_empty, or ownership's release).
 *
 * heap_log_interval = N > 0 writes a heap's group changes at most every N ms (moves between
 * heaps always); the slot counts every change, so each line carries the heap's whole state,
 * and at exit a last `s` line per heap with changes not yet written. Lines are formatted at
 * the event into one mmap'd buffer (not counted in A), a range of it reserved with one
 * atomic add, and written out at exit. Off: heap.c's three hooks test a NULL pointer. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "heaps.h"

#define LOG_BYTES  ((size_t)512 << 20)   /* address space; pages are touched as lines come */
#define MAX_HEAPS  1024u                 /* heaps numbered above are not logged */
#define MAX_LISTS  (64 + 2)              /* fullness_groups at most 64, then full and empty */
#define LINE_MAX   (160 + MAX_LISTS * 11)

struct slot {                            /* one heap's state, written under its lock */
    uint32_t n[MAX_LISTS];               /* superblocks per list */
    uint64_t last_ns;                    /* when its last line was written */
    size_t u, a;                         /* after its last event */
    bool global, dirty;                  /* global: a shard of hoard's global heap; dirty:
                                          * changes since its last line */
};

static char path[4096];
static uint64_t t_start, interval_ns;
static unsigned lists;                   /* G + 2 */
static char *buf;
static struct slot *slots;
static _Atomic size_t used;
static _Atomic uint64_t dropped;         /* lines lost: the buffer full, or a heap numbered
                                          * above MAX_HEAPS */
static _Atomic bool stopped;
/* The calling thread's last detach: an attach of the same superblock is a move. */
static HL_TLS const struct hl_sb *last_sb;
static HL_TLS unsigned last_heap;

/* ---- formatting without stdio ------------------------------------------------------------- */

struct line { char *s; size_t len; };

static void put_num(struct line *l, uint64_t v, unsigned base)
{
    char tmp[24];
    int k = 0;
    do {
        tmp[k++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    while (k) l->s[l->len++] = tmp[--k];
    l->s[l->len++] = ' ';
}

static void put_list(struct line *l, unsigned list)
{
    if (list == HL_LIST_NONE) {
        l->s[l->len++] = '-';
        l->s[l->len++] = ' ';
    } else {
        put_num(l, list, 10);
    }
}

/* kind t thread heap global class sb from to peer u a live n_0 .. n_{G+1} */
static void format(struct line *l, char kind, uint64_t t, unsigned heap, bool global,
                   const struct slot *s, const struct hl_sb *sb, unsigned from, unsigned to,
                   unsigned peer)
{
    l->s[l->len++] = kind;
    l->s[l->len++] = ' ';
    put_num(l, t, 10);
    put_num(l, hl_me.id, 10);
    put_num(l, heap, 10);
    put_num(l, global, 10);
    put_num(l, sb ? sb->cls : 0, 10);
    put_num(l, (uintptr_t)sb, 16);
    put_list(l, from);
    put_list(l, to);
    put_list(l, peer);
    put_num(l, s->u, 10);
    put_num(l, s->a, 10);
    int64_t live = hl_stats_in_use_published();
    put_num(l, live > 0 ? (uint64_t)live : 0, 10);
    for (unsigned i = 0; i < lists; i++) put_num(l, s->n[i], 10);
    l->s[l->len - 1] = '\n';
}

static void emit(const struct line *l)
{
    size_t at = atomic_fetch_add_explicit(&used, l->len, memory_order_relaxed);
    if (at + l->len > LOG_BYTES) {
        atomic_fetch_add(&dropped, 1);
        return;
    }
    memcpy(buf + at, l->s, l->len);
}

/* ---- the observer ---------------------------------------------------------------------------- */

static void event(const struct hl_heap *h, const struct hl_sb *sb, unsigned from, unsigned to)
{
    if (from == to || atomic_load_explicit(&stopped, memory_order_relaxed)) return;
    if (h->index >= MAX_HEAPS) {
        atomic_fetch_add(&dropped, 1);
        return;
    }
    struct slot *s = &slots[h->index];
    char kind = from == HL_LIST_NONE ? 'a' : to == HL_LIST_NONE ? 'd' : 'g';
    unsigned peer = HL_LIST_NONE;
    if (from < lists) s->n[from]--;
    if (to < lists) s->n[to]++;
    s->u = hl_heap_u(h);
    s->a = hl_heap_a(h);
    if (kind == 'd') {                   /* called before the detach: the state after it */
        s->u -= hl_sb_in_use(sb);
        s->a -= hl_sb_bytes(sb);
        last_sb = sb, last_heap = h->index;
    } else if (kind == 'a' && last_sb == sb) {
        peer = last_heap;
        last_sb = NULL;
    }
    s->global = hl_heap_is_shard(h);
    uint64_t t = hl_now_ns() - t_start;
    if (kind == 'g' && interval_ns && t - s->last_ns < interval_ns) {
        s->dirty = true;
        return;
    }
    s->last_ns = t;
    s->dirty = false;
    char text[LINE_MAX];
    struct line l = { text, 0 };
    format(&l, kind, t, h->index, s->global, s, sb, from, to, peer);
    emit(&l);
}

bool hl_heaplog_init(const char *p)
{
    size_t n = strlen(p);
    if (n >= sizeof path) {
        hl_say("heap_log: path too long; heap log off");
        return false;
    }
    buf = hl_os_mmap(LOG_BYTES, MAP_NORESERVE);
    slots = hl_os_mmap(MAX_HEAPS * sizeof *slots, MAP_NORESERVE);
    if (buf == MAP_FAILED || slots == MAP_FAILED) {
        hl_say("heap_log: no memory for the log; heap log off");
        return false;
    }
    memcpy(path, p, n + 1);
    lists = (unsigned)hl_cfg.fullness_groups + 2;
    interval_ns = (uint64_t)hl_cfg.heap_log_interval * 1000000u;
    t_start = hl_now_ns();
    hl_heap_observer = event;
    return true;
}

/* ---- at exit ----------------------------------------------------------------------------- */

static void put_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w <= 0) return;
        s += w, n -= (size_t)w;
    }
}

/* The file: a header, the lines in the order their ranges were reserved (time order within
 * a heap), then an `s` line for each heap whose last changes were sampled away. A line still
 * being copied by a running thread is cut short: its bytes are zero, and are skipped. */
void hl_heaplog_write(void)
{
    if (atomic_exchange(&stopped, true)) return;
    char file[sizeof path + 32];
    hl_msg_path(path, file, sizeof file);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        hl_say("heap_log: cannot create %s", file);
        return;
    }
    size_t end = atomic_load(&used);
    if (end > LOG_BYTES) end = LOG_BYTES;
    char text[LINE_MAX + 200];
    struct line l = { text, 0 };
    const char *head = "# hoardlab heaplog 1\n# pid ";
    memcpy(text, head, strlen(head));
    l.len = strlen(head);
    put_num(&l, (uint64_t)getpid(), 10);
    const char *more[] = { "groups ", "interval_ms ", "dropped " };
    uint64_t val[] = { lists - 2, interval_ns / 1000000u, atomic_load(&dropped) };
    for (int i = 0; i < 3; i++) {
        memcpy(text + l.len, more[i], strlen(more[i]));
        l.len += strlen(more[i]);
        put_num(&l, val[i], 10);
    }
    text[l.len - 1] = '\n';
    put_all(fd, text, l.len);
    const char *cols = "# kind t_ns thread heap global class sb from to peer u a live, then "
                       "superblocks per list: groups 0 .. G-1 by fullness, G full, G+1 empty "
                       "(u, a: the heap's bytes in use and held; live: the process's U)\n";
    put_all(fd, cols, strlen(cols));
    for (size_t at = 0; at < end;) {
        size_t run = strnlen(buf + at, end - at);
        put_all(fd, buf + at, run);
        at += run;
        if (run && buf[at - 1] != '\n') put_all(fd, "\n", 1);   /* a cut line stands alone */
        while (at < end && !buf[at]) at++;
    }
    uint64_t t = hl_now_ns() - t_start;
    for (unsigned i = 0; i < MAX_HEAPS; i++)
        if (slots[i].dirty) {
            l.len = 0;
            format(&l, 's', t, i, slots[i].global, &slots[i], NULL, HL_LIST_NONE, HL_LIST_NONE,
                   HL_LIST_NONE);
            put_all(fd, text, l.len);
        }
    close(fd);
}

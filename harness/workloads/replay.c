/* replay.c — replays a trace recorded with HOARD_TRACE=path (format: README.md) and reports
 * the peak of live requested bytes, which equals the peak computed offline from the trace,
 * and, under libhoardlab, U, A and A/U of the replay.
 *
 * Replay is deterministic: operations run in the trace's (time-merged) order, either all on
 * one thread or each on a thread of its own standing for the original thread, taking turns.
 * The replay's own tables come from mmap, not malloc, so they do not count in U or A. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../hlbench.h"

const struct hb_param hb_replay_params[] = {
    { "trace", HB_STR, "",       false, "trace file written under HOARD_TRACE=path" },
    { "mode",  HB_STR, "single", false, "single: one thread; threads: the original threads" },
    { NULL, 0, NULL, false, NULL },
};

struct ev { uint64_t size; uint32_t slot, tid, align; char op; };

struct trace {
    struct ev *ev;
    size_t n, slots, ev_bytes;  /* events; slots = most blocks live at once; ev's mapping */
    unsigned threads;           /* distinct thread ids, renumbered 0.. */
    uint64_t peak_req, peak_usable, unmatched, implicit;
    void **ptr;                 /* replay: the block each slot holds */
    _Atomic size_t cursor;      /* threads mode: the next event to run */
    sem_t *turn;                /* threads mode: turn[t] is posted when thread t may run */
    uint64_t base_in_use;       /* libhoardlab's in_use when the replay started */
    uint64_t live, peak, salt;
};

static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) hb_fail("mmap of %zu bytes failed", bytes);
    return p;
}

/* ---- address -> slot, open addressing with backward-shift deletion ------------------------ */

struct amap { uint64_t *key; uint32_t *val; size_t cap, used; };

static size_t amap_find(const struct amap *m, uint64_t k)
{
    size_t i = hb_mix(k) & (m->cap - 1);
    while (m->key[i] && m->key[i] != k) i = (i + 1) & (m->cap - 1);
    return i;
}

static void amap_grow(struct amap *m)
{
    struct amap old = *m;
    m->cap = old.cap ? old.cap * 2 : 1 << 16;
    m->key = map(m->cap * sizeof *m->key);
    m->val = map(m->cap * sizeof *m->val);
    for (size_t i = 0; i < old.cap; i++)
        if (old.key[i]) {
            size_t j = amap_find(m, old.key[i]);
            m->key[j] = old.key[i];
            m->val[j] = old.val[i];
        }
    if (old.cap) {
        munmap(old.key, old.cap * sizeof *old.key);
        munmap(old.val, old.cap * sizeof *old.val);
    }
}

static void amap_del(struct amap *m, size_t i)
{
    size_t j = i;
    m->key[i] = 0;
    m->used--;
    for (;;) {
        j = (j + 1) & (m->cap - 1);
        if (!m->key[j]) return;
        size_t home = hb_mix(m->key[j]) & (m->cap - 1);
        /* move j back to i unless its home lies cyclically in (i, j] */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            m->key[i] = m->key[j];
            m->val[i] = m->val[j];
            m->key[j] = 0;
            i = j;
        }
    }
}

/* ---- loading: parse, give each block a slot, compute the offline peaks --------------------- */

static uint64_t field(char **s, char *end, int base)
{
    while (*s < end && **s == ' ') (*s)++;
    uint64_t v = 0;
    int any = 0;
    for (;; (*s)++, any = 1) {
        int c = *s < end ? **s : 0, d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else break;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (!any) hb_usage("replay: malformed trace line");
    return v;
}

static void load(struct trace *T, const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) hb_usage("replay: cannot open trace '%s'", path);
    size_t len = (size_t)st.st_size, lines = 0;
    char *text = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (len && text == MAP_FAILED) hb_fail("replay: cannot map '%s'", path);
    if (len < 20 || memcmp(text, "# hoardlab trace 1\n", 19) != 0)
        hb_usage("replay: '%s' is not a hoardlab trace (version 1)", path);
    for (size_t k = 0; k < len; k++) lines += text[k] == '\n';
    T->ev_bytes = (lines + 1) * 2 * sizeof *T->ev;  /* room for implicit frees */
    T->ev = map(T->ev_bytes);
    uint64_t *slot_size = map((lines + 1) * sizeof *slot_size);
    uint64_t *slot_usable = map((lines + 1) * sizeof *slot_usable);
    uint32_t *free_slots = map((lines + 1) * sizeof *free_slots), n_free = 0;
    uint32_t *tid_map = map(65536 * sizeof *tid_map);     /* trace tid + 1 -> dense + 1 */
    struct amap m = { 0 };
    uint64_t live = 0, live_u = 0;
    amap_grow(&m);
    for (char *s = text, *end = text + len, *eol; s < end; s = eol + 1) {
        if (!(eol = memchr(s, '\n', (size_t)(end - s)))) eol = end;
        if (*s != '#' && s < eol) {
            char op = *s++;
            if (op != 'a' && op != 'f') hb_usage("replay: unknown operation '%c' in trace", op);
            field(&s, eol, 10);                         /* time: order is the file's */
            uint64_t tid = field(&s, eol, 10), id = field(&s, eol, 16);
            uint64_t size = field(&s, eol, 10), align = field(&s, eol, 10);
            uint64_t usable = field(&s, eol, 10);
            if (!id) continue;                          /* never a block */
            if (tid >= 65535) hb_usage("replay: thread id %llu too large", (unsigned long long)tid);
            if (!tid_map[tid]) tid_map[tid] = ++T->threads;
            uint32_t dense = tid_map[tid] - 1;
            size_t at = amap_find(&m, id);
            if (op == 'f' && !m.key[at]) {
                T->unmatched++;                         /* allocated before tracing began */
            } else if (op == 'f' || m.key[at]) {        /* a free, or a missing one */
                uint32_t sl = m.val[at];
                if (op == 'a') T->implicit++;
                T->ev[T->n++] = (struct ev){ slot_size[sl], sl, dense, 0, 'f' };
                live -= slot_size[sl];
                live_u -= slot_usable[sl];
                free_slots[n_free++] = sl;
                amap_del(&m, at);
                at = amap_find(&m, id);
            }
            if (op == 'a') {
                if (m.used * 2 >= m.cap) {
                    amap_grow(&m);
                    at = amap_find(&m, id);
                }
                uint32_t sl = n_free ? free_slots[--n_free] : (uint32_t)T->slots++;
                m.key[at] = id;
                m.val[at] = sl;
                m.used++;
                slot_size[sl] = size;
                slot_usable[sl] = usable;
                T->ev[T->n++] = (struct ev){ size, sl, dense, (uint32_t)align, 'a' };
                live += size;
                live_u += usable;
                if (live > T->peak_req) T->peak_req = live;
                if (live_u > T->peak_usable) T->peak_usable = live_u;
            }
        }
    }
    if (len) munmap(text, len);
    munmap(slot_usable, (lines + 1) * sizeof *slot_usable);
    munmap(free_slots, (lines + 1) * sizeof *free_slots);
    munmap(tid_map, 65536 * sizeof *tid_map);
    munmap(m.key, m.cap * sizeof *m.key);
    munmap(m.val, m.cap * sizeof *m.val);
    munmap(slot_size, (lines + 1) * sizeof *slot_size);
    T->ptr = map((T->slots + 1) * sizeof *T->ptr);
}

/* ---- running -------------------------------------------------------------------------------- */

static void step(struct trace *T, const struct ev *e)
{
    if (e->op == 'a') {
        void *p = NULL;
        if (e->align > 16) {
            if (posix_memalign(&p, e->align, e->size)) p = NULL;
        } else {
            p = hb_malloc(e->size);
        }
        if (!p && e->size) hb_fail("replay: allocation of %llu bytes failed",
                                   (unsigned long long)e->size);
        if (p) hb_stamp(p, e->size, T->salt);
        T->ptr[e->slot] = p;
        T->live += e->size;
        if (T->live > T->peak) T->peak = T->live;
    } else {
        void *p = T->ptr[e->slot];
        if (p) {
            hb_check(p, e->size, T->salt);
            hb_free(p);
        }
        T->ptr[e->slot] = NULL;
        T->live -= e->size;
    }
}

/* Threads mode: the thread owning the next event runs until the next event is another
 * thread's, then wakes that thread's semaphore and sleeps on its own; no spinning, so even
 * hundreds of traced threads replay at the cost of one hand-over per switch. */
static void replay_thread(struct hb_run *r, int i, void *arg)
{
    struct trace *T = arg;
    struct hoardlab_stats s;
    (void)r;
    /* Starting threads allocates (thread structures, TLS); U counts from when all are up. */
    if (i == 0) {
        hb_hoardlab_reset_peaks();
        if (hb_hoardlab_stats(&s)) T->base_in_use = s.in_use;
        if (T->n) sem_post(&T->turn[T->ev[0].tid]);
    }
    for (;;) {
        while (sem_wait(&T->turn[i]) && errno == EINTR) { }
        size_t k = atomic_load_explicit(&T->cursor, memory_order_acquire);
        while (k < T->n && T->ev[k].tid == (uint32_t)i) step(T, &T->ev[k++]);
        atomic_store_explicit(&T->cursor, k, memory_order_release);
        if (k >= T->n) {                            /* done: release everyone */
            for (unsigned t = 0; t < T->threads; t++)
                if (t != (unsigned)i) sem_post(&T->turn[t]);
            return;
        }
        sem_post(&T->turn[T->ev[k].tid]);
    }
}

int hb_replay(struct hb_run *r)
{
    const char *path = hb_str(r, "trace"), *mode = hb_str(r, "mode");
    bool threads = !strcmp(mode, "threads");
    if (!*path) hb_usage("replay needs --trace PATH (a file written under HOARD_TRACE=PATH)");
    if (!threads && strcmp(mode, "single"))
        hb_usage("replay: --mode is single or threads, not '%s'", mode);
    struct trace *T = map(sizeof *T);
    load(T, path);
    T->salt = hb_mix(r->seed ^ 0x7ace);
    r->threads = threads ? (int)(T->threads ? T->threads : 1) : 1;
    hb_begin(r);
    T->base_in_use = r->base.in_use;
    if (threads) {
        T->turn = map((size_t)r->threads * sizeof *T->turn);
        for (int t = 0; t < r->threads; t++) sem_init(&T->turn[t], 0, 0);
        hb_parallel(r, r->threads, replay_thread, T);
        for (int t = 0; t < r->threads; t++) sem_destroy(&T->turn[t]);
        munmap(T->turn, (size_t)r->threads * sizeof *T->turn);
    }
    else for (size_t k = 0; k < T->n; k++) step(T, &T->ev[k]);
    hb_end(r);
    atomic_store(&r->ops, T->n);
    hb_json_uint(r->extra, "events", T->n);
    hb_json_uint(r->extra, "trace_threads", T->threads);
    hb_json_uint(r->extra, "unmatched_frees", T->unmatched);
    hb_json_uint(r->extra, "implicit_frees", T->implicit);
    hb_json_uint(r->extra, "trace_peak_requested", T->peak_req);
    hb_json_uint(r->extra, "trace_peak_usable", T->peak_usable);
    hb_json_uint(r->extra, "peak_requested", T->peak);
    if (r->loaded) {
        uint64_t u = r->end.in_use_peak - T->base_in_use, a = r->end.held_bytes_peak;
        hb_json_uint(r->extra, "replay_u", u);
        hb_json_uint(r->extra, "replay_a", a);
        hb_json_real(r->extra, "replay_fragmentation", u ? (double)a / (double)u : NAN);
    } else {
        hb_json_null(r->extra, "replay_u");
        hb_json_null(r->extra, "replay_a");
        hb_json_null(r->extra, "replay_fragmentation");
    }
    for (size_t s = 0; s < T->slots; s++)           /* blocks the program never freed */
        if (T->ptr[s]) free(T->ptr[s]);
    munmap(T->ptr, (T->slots + 1) * sizeof *T->ptr);
    munmap(T->ev, T->ev_bytes);
    munmap(T, sizeof *T);
    return 0;
}

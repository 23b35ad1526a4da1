/* hazard.c — hazard pointers: records, retire and scan (hazard.h). */
#include "hazard.h"

static _Atomic(struct hl_hp_rec *) records;     /* every record, newest first; never shrinks */
static _Atomic unsigned nrecords;
static HL_TLS struct hl_hp_rec *mine;

struct hl_hp_rec *hl_hp_mine(void)
{
    if (hl_likely(mine != NULL)) return mine;
    /* A free record first: CAS its active flag 0 -> 1. */
    for (struct hl_hp_rec *r = atomic_load_explicit(&records, memory_order_acquire); r;
         r = r->next) {
        int zero = 0;
        if (atomic_load_explicit(&r->active, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong(&r->active, &zero, 1))
            return mine = r;
    }
    /* A new record: one of the static ones while they last (no lock), then meta.c's. */
    static struct hl_hp_rec first[64];
    static _Atomic unsigned nfirst;
    unsigned i = atomic_fetch_add_explicit(&nfirst, 1, memory_order_relaxed);
    struct hl_hp_rec *r = i < 64 ? &first[i] : hl_meta_alloc(sizeof *r);
    atomic_store_explicit(&r->active, 1, memory_order_relaxed);
    struct hl_hp_rec *head = atomic_load_explicit(&records, memory_order_relaxed);
    do r->next = head;
    while (!atomic_compare_exchange_weak_explicit(&records, &head, r, memory_order_release,
                                                  memory_order_relaxed));
    atomic_fetch_add_explicit(&nrecords, 1, memory_order_relaxed);
    return mine = r;
}

static bool hazardous(const void *p)
{
    for (struct hl_hp_rec *r = atomic_load_explicit(&records, memory_order_acquire); r;
         r = r->next)
        for (int i = 0; i < HL_HP_SLOTS; i++)
            if (atomic_load_explicit(&r->slot[i], memory_order_seq_cst) == p) return true;
    return false;
}

/* Michael's Scan, without the sort: the retired list is kept short (a few times the number
 * of slots), so checking each node against every slot costs O(slots) per node retired. */
void hl_hp_scan(struct hl_hp_rec *r)
{
    atomic_thread_fence(memory_order_seq_cst);
    struct hl_hp_node *keep = NULL, *n = r->retired, *next;
    unsigned kept = 0;
    r->retired = NULL;
    for (; n; n = next) {
        next = n->hp_next;
        if (hazardous(n->hp_obj)) {
            n->hp_next = keep;
            keep = n;
            kept++;
        } else {
            n->hp_free(n);
        }
    }
    /* hp_free may have retired more onto r (it does not, today); keep both. */
    while (keep) {
        next = keep->hp_next;
        keep->hp_next = r->retired;
        r->retired = keep;
        keep = next;
    }
    atomic_store_explicit(&r->nretired, kept, memory_order_relaxed);
}

void hl_hp_retire(struct hl_hp_rec *r, struct hl_hp_node *n, const void *obj,
                  void (*free_fn)(struct hl_hp_node *))
{
    n->hp_free = free_fn;
    n->hp_obj = obj;
    n->hp_next = r->retired;
    r->retired = n;
    unsigned threshold = 2 * HL_HP_SLOTS *
                         atomic_load_explicit(&nrecords, memory_order_relaxed) + 16;
    unsigned count = atomic_load_explicit(&r->nretired, memory_order_relaxed) + 1;
    atomic_store_explicit(&r->nretired, count, memory_order_relaxed);
    if (count >= threshold) hl_hp_scan(r);
}

void hl_hp_release(void)
{
    struct hl_hp_rec *r = mine;
    if (!r) return;
    for (int i = 0; i < HL_HP_SLOTS; i++) hl_hp_clear(r, i);
    if (r->retired) hl_hp_scan(r);
    mine = NULL;
    atomic_store_explicit(&r->active, 0, memory_order_release);
}

unsigned hl_hp_pending(void)
{
    unsigned n = 0;
    for (struct hl_hp_rec *r = atomic_load_explicit(&records, memory_order_acquire); r;
         r = r->next)
        n += atomic_load_explicit(&r->nretired, memory_order_relaxed);
    return n;
}

void hl_hp_fork_child(void)
{
    for (struct hl_hp_rec *r = atomic_load_explicit(&records, memory_order_acquire); r;
         r = r->next) {
        if (r == mine) continue;
        for (int i = 0; i < HL_HP_SLOTS; i++) hl_hp_clear(r, i);
        atomic_store_explicit(&r->active, 0, memory_order_relaxed);
    }
}

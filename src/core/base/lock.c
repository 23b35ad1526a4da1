/* lock.c — the contended path of hl_lock (lock.h). `spin` spins on a read, then yields, as
 * the uC++ allocator's spin locks did; `mutex` is the classic three-state futex mutex
 * (0 free, 1 held, 2 held with waiters), so a waiting thread sleeps instead of burning a core. */
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base.h"

int hl_lock_kind;

static void cpu_relax(void) { __builtin_ia32_pause(); }

void hl_lock_slow(hl_lock *l)
{
    if (hl_lock_kind == HL_LOCK_SPIN) {
        for (unsigned spins = 0;; ) {
            while (atomic_load_explicit(&l->word, memory_order_relaxed)) {
                if (++spins < 64) cpu_relax();
                else { spins = 0; sched_yield(); }
            }
            if (hl_trylock(l)) return;
        }
    }
    while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire) != 0)
        syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void hl_unlock_wake(hl_lock *l)
{
    syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

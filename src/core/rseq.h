/* rseq.h — the two restartable sequences of the per-CPU cache (cpucache.h): pop a block off,
 * and push one onto, the calling CPU's stack of a size class, each one critical section of
 * Linux rseq, so neither takes a lock or an atomic read-modify-write. x86-64 only; all the
 * assembly of the testbed's per-CPU cache is in this file.
 *
 * The stacks. A CPU's slab is HL_RSEQ_SLAB bytes: one 16-byte entry per size class (at
 * superblock.h's hl_tlab_slot offsets), whose first word, the head, is
 *     room << 48 | the top block's address
 * (user addresses fit in 48 bits): room is how many more blocks the stack may take, and each
 * block's first word holds the head word as it was below it. So a pop commits by storing the
 * popped block's word (the head below, room one higher) and a push by storing
 * (room - 1) << 48 | p: each a single store, the only thing a critical section may commit.
 * An empty stack reads room << 48 (address 0); a class that bypasses the cache reads 0 (no
 * room, no block). The slabs array has two slabs of zeros before CPU 0's: the rseq area's
 * cpu_id is read sign-extended, and -1 (not registered yet) or -2 (registration failed) lands
 * there, so such a thread always takes the slow path.
 *
 * A critical section. The thread stores the address of its descriptor (start, length,
 * abort address) in its rseq area's rseq_cs field (glibc registered the area: __rseq_offset
 * from the thread pointer); if the kernel preempts the thread, migrates it or delivers a
 * signal while its instruction pointer lies in [start, start + length), it resumes it at the
 * abort address instead, where the sequence starts over (on the CPU it now runs on). The
 * kernel checks that the 4 bytes before the abort address hold the signature glibc
 * registered (RSEQ_SIG). Nothing before the commit is visible to another thread: the pushed
 * block's link word is the pusher's own until the commit publishes it. A signal handler
 * that runs its own push or pop (a malloc in a handler) re-arms rseq_cs with its own
 * descriptor; the interrupted section restarts after it and arms its own again. rseq_cs is
 * never cleared: the kernel ignores (and clears) a descriptor whose range the thread is not
 * in. */
#ifndef HL_RSEQ_H
#define HL_RSEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HL_RSEQ_SHIFT 14                 /* a slab: 16 KiB, room for HL_MAX_CLASSES + 1 entries */
#define HL_RSEQ_SLAB ((size_t)1 << HL_RSEQ_SHIFT)
#define HL_RSEQ_LOW 0xffffffffffffull    /* the head word's address bits */
#define HL_RSEQ_ROOM(w) ((uint32_t)((w) >> 48))

#pragma GCC visibility push(hidden)
extern ptrdiff_t hl_rseq_offset;         /* glibc's __rseq_offset, copied at init */
#pragma GCC visibility pop

#if defined(__x86_64__)
#define HL_RSEQ_SUPPORTED 1

/* The descriptor (struct rseq_cs: version 0, flags 0, start, length to the commit's end,
 * abort address) and the abort handler, each in a section of its own so that neither sits
 * on the fast path; %= makes the labels of each inlined copy unique. */
#define HL_RSEQ_CS_AND_ABORT                                                                  \
    ".pushsection __rseq_cs, \"aw\"\n\t"                                                      \
    ".balign 32\n"                                                                            \
    ".Lhl_cs%=:\n\t"                                                                          \
    ".long 0, 0\n\t"                                                                          \
    ".quad .Lhl_start%=, .Lhl_commit%= - .Lhl_start%=, .Lhl_abort%=\n\t"                      \
    ".popsection\n\t"                                                                         \
    ".pushsection __rseq_failure, \"ax\"\n\t"                                                 \
    ".byte 0x0f, 0xb9, 0x3d\n\t"        /* ud1: the signature disassembles as one insn */    \
    ".long 0x53053053\n"                /* RSEQ_SIG (x86), just before the abort address */  \
    ".Lhl_abort%=:\n\t"                                                                       \
    "jmp .Lhl_retry%=\n\t"              /* preempted, migrated or signalled: start over */   \
    ".popsection\n"

/* Pop the top block of the class at byte offset `slot` of the running CPU's slab in
 * `slabs` (CPU 0's); NULL (nothing changed) if the stack is empty or the class bypasses
 * the cache. *off: the offset of the slab it committed on (a block's) from CPU 0's, so its
 * CPU is *off >> HL_RSEQ_SHIFT; an output register, free when unused. */
static inline __attribute__((always_inline)) void *hl_rseq_pop(char *slabs, uintptr_t slot,
                                                               size_t *off)
{
    void *p;
    uint64_t w, below;
    size_t c;
    __asm__ __volatile__ goto(
        HL_RSEQ_CS_AND_ABORT
        ".Lhl_retry%=:\n\t"
        "lea .Lhl_cs%=(%%rip), %[w]\n\t"
        "mov %[w], %%fs:8(%[off])\n"             /* arm: rseq->rseq_cs = &descriptor */
        ".Lhl_start%=:\n\t"
        "movslq %%fs:4(%[off]), %[c]\n\t"        /* rseq->cpu_id: where we run now */
        "shl %[shift], %[c]\n\t"                 /* its slab's offset from CPU 0's */
        "mov (%[c],%[base]), %[w]\n\t"           /* the head word: the class's entry there */
        "movabs %[low], %[p]\n\t"
        "and %[w], %[p]\n\t"                     /* the top block */
        "jz %l[empty]\n\t"                       /* none: leave, nothing written */
        "mov (%[p]), %[below]\n\t"               /* its link: the head word below it */
        "mov %[below], (%[c],%[base])\n"         /* commit: it is ours */
        ".Lhl_commit%=:\n\t"
        : [w] "=&r"(w), [p] "=&a"(p), [below] "=&r"(below), [c] "=&r"(c)
        : [off] "r"(hl_rseq_offset), [base] "r"(slabs + slot), [shift] "i"(HL_RSEQ_SHIFT),
          [low] "i"(HL_RSEQ_LOW)
        : "cc", "memory"
        : empty);
    *off = c;
    if (!p) __builtin_unreachable();     /* (the jz above): the caller's test folds away */
    return p;
empty:
    return NULL;
}

/* Push block p onto the class's stack at `slot` of the running CPU's slab; false (nothing
 * changed) if it is full or the class bypasses the cache. *off as for hl_rseq_pop. */
static inline __attribute__((always_inline)) bool hl_rseq_push(char *slabs, uintptr_t slot,
                                                               void *p, size_t *off)
{
    uint64_t w, room;
    size_t c;
    __asm__ __volatile__ goto(
        HL_RSEQ_CS_AND_ABORT
        ".Lhl_retry%=:\n\t"
        "lea .Lhl_cs%=(%%rip), %[w]\n\t"
        "mov %[w], %%fs:8(%[off])\n"             /* arm: rseq->rseq_cs = &descriptor */
        ".Lhl_start%=:\n\t"
        "movslq %%fs:4(%[off]), %[c]\n\t"        /* rseq->cpu_id: where we run now */
        "shl %[shift], %[c]\n\t"                 /* its slab's offset from CPU 0's */
        "mov (%[c],%[base]), %[w]\n\t"           /* the head word: the class's entry there */
        "mov %[w], %[room]\n\t"
        "shr $48, %[room]\n\t"                   /* room left */
        "jz %l[full]\n\t"                        /* none: leave, nothing written */
        "mov %[w], (%[p])\n\t"                   /* p links to the stack (p is still ours) */
        "dec %[room]\n\t"
        "shl $48, %[room]\n\t"
        "or %[p], %[room]\n\t"                   /* the new head word: room - 1, p on top */
        "mov %[room], (%[c],%[base])\n"          /* commit: p is the stack's */
        ".Lhl_commit%=:\n\t"
        : [w] "=&r"(w), [room] "=&r"(room), [c] "=&r"(c)
        : [off] "r"(hl_rseq_offset), [base] "r"(slabs + slot), [p] "r"(p),
          [shift] "i"(HL_RSEQ_SHIFT)
        : "cc", "memory"
        : full);
    *off = c;
    return true;
full:
    return false;
}

#else
#define HL_RSEQ_SUPPORTED 0
static inline void *hl_rseq_pop(char *slabs, uintptr_t slot, size_t *off)
{
    (void)slabs, (void)slot, (void)off;
    return NULL;
}
static inline bool hl_rseq_push(char *slabs, uintptr_t slot, void *p, size_t *off)
{
    (void)slabs, (void)slot, (void)p, (void)off;
    return false;
}
#endif

#endif

/* rseq.h — the two restartable sequences of the per-CPU cache (cpucache.h): pop a block off,
 * and push one onto, the calling CPU's stack of a size class, each one critical section of
 * Linux rseq, so neither takes a lock or an atomic read-modify-write. x86-64 only; all the
 * assembly of the testbed's per-CPU cache is in this file.
 *
 * The stacks. A CPU's slab is HL_RSEQ_SLAB bytes: one 16-byte entry per size class (at
 * superblock.h's hl_cache_slot offsets), whose first word, the head, is
 *     the top block's address << 16 | room
 * (user addresses fit in 48 bits): room is how many more blocks the stack may take, and each
 * block's first word holds the head word as it was below it. So a pop commits by storing the
 * popped block's word (the head below, room one higher) and a push by storing
 * p << 16 | room - 1: each a single store, the only thing a critical section may commit.
 * Room in the low bits makes both cheap: a pop's top block is one shift of the head (zero:
 * empty), and a push's new head is p << 16 with the head's low 16 bits, less one, the
 * borrow saying there was no room. An empty stack reads room (address 0); a class that
 * bypasses the cache reads 0 (no room, no block).
 *
 * Where the slabs are. A section scales the rseq area's cpu_id to its slab's offset in one
 * 32-bit multiply, whose result is zero-extended: CPU n's slab is at n x HL_RSEQ_SLAB from
 * CPU 0's, and cpu_id -1 (not registered yet) and -2 (registration failed) land 4 GiB up,
 * on two slabs of zeros (HL_RSEQ_BYPASS), so such a thread always takes the slow path.
 * hl_rseq_slabs_map (cpucache.c) reserves the 4 GiB span and maps only those parts.
 *
 * A critical section. The thread stores the address of its descriptor (start, length,
 * abort address) in its rseq area's rseq_cs field (glibc registered the area: __rseq_offset
 * from the thread pointer); if the kernel preempts the thread, migrates it or delivers a
 * signal while its instruction pointer lies in [start, start + length), it resumes it at the
 * abort address instead, which counts the restart (hl_rseq_restarts) and starts the sequence
 * over (on the CPU it now runs on). The
 * kernel checks that the 4 bytes before the abort address hold the signature glibc
 * registered (RSEQ_SIG). Nothing before the commit is visible to another thread: the pushed
 * block's link word is the pusher's own until the commit publishes it. A signal handler
 * that runs its own push or pop (a malloc in a handler) re-arms rseq_cs with its own
 * descriptor; the interrupted section restarts after it and arms its own again. rseq_cs is
 * never cleared: the kernel clears it on the way back to the thread after a preemption or a
 * signal, in a section or not. */
#ifndef HL_RSEQ_H
#define HL_RSEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HL_RSEQ_SHIFT 14                 /* a slab: 16 KiB, room for HL_MAX_CLASSES + 1 entries */
#define HL_RSEQ_SLAB ((size_t)1 << HL_RSEQ_SHIFT)
/* The bypass slabs' offset from CPU 0's: cpu_id -2 and -1, times a slab, as 32 bits. */
#define HL_RSEQ_BYPASS (((size_t)1 << 32) - 2 * HL_RSEQ_SLAB)
#define HL_RSEQ_ROOM(w) ((uint32_t)((w) & 0xffff))
#define HL_RSEQ_TOP(w) ((void *)(uintptr_t)((w) >> 16))
#define HL_RSEQ_HEAD(top, room) ((uint64_t)(uintptr_t)(top) << 16 | (uint64_t)(room))
#define HL_RSEQ_MAX_ROOM 0xffff

#pragma GCC visibility push(hidden)
extern ptrdiff_t hl_rseq_offset;         /* glibc's __rseq_offset, copied at init */
/* Sections restarted by the kernel, all threads (the abort handler's locked increment: a
 * restart is rare, a preemption, migration or signal inside a dozen instructions). */
extern uint64_t hl_rseq_restarts;
/* CPU 0's slab in a fresh 4 GiB span laid out as above, slabs of zeros for `ncpus` CPUs and
 * the bypass; NULL if the span cannot be had (cpucache.c). */
char *hl_rseq_slabs_map(long ncpus);
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
    "lock incq hl_rseq_restarts(%%rip)\n\t"  /* preempted, migrated or signalled: count, */  \
    "jmp .Lhl_retry%=\n\t"              /* and start over */                                 \
    ".popsection\n"

/* Pop the top block of the class at byte offset `slot` of the running CPU's slab in
 * `slabs` (CPU 0's); NULL (nothing changed) if the stack is empty or the class bypasses
 * the cache. *off: the offset of the slab it committed on (a block's) from CPU 0's, so its
 * CPU is *off >> HL_RSEQ_SHIFT; an output register, free when unused. */
static inline __attribute__((always_inline)) void *hl_rseq_pop(char *slabs, uintptr_t slot,
                                                               size_t *off)
{
    void *p;
    uint64_t below;
    size_t c;
    __asm__ __volatile__ goto(
        HL_RSEQ_CS_AND_ABORT
        ".Lhl_retry%=:\n\t"
        "lea .Lhl_cs%=(%%rip), %[p]\n\t"
        "mov %[p], %%fs:8(%[off])\n"             /* arm: rseq->rseq_cs = &descriptor */
        ".Lhl_start%=:\n\t"
        "imul %[slab], %%fs:4(%[off]), %k[c]\n\t" /* rseq->cpu_id x slab: where we run now */
        "mov (%[c],%[base]), %[p]\n\t"           /* the head word: the class's entry there */
        "shr $16, %[p]\n\t"                      /* the top block */
        "jz %l[empty]\n\t"                       /* none: leave, nothing written */
        "mov (%[p]), %[below]\n\t"               /* its link: the head word below it */
        "mov %[below], (%[c],%[base])\n"         /* commit: it is ours */
        ".Lhl_commit%=:\n\t"
        : [p] "=&a"(p), [below] "=&r"(below), [c] "=&r"(c)
        : [off] "r"(hl_rseq_offset), [base] "r"(slabs + slot), [slab] "i"(HL_RSEQ_SLAB)
        : "cc", "memory"
        : empty);
    *off = c;
    if (!p) __builtin_unreachable();     /* (the jz above): the caller's test folds away */
    return p;
empty:
    return NULL;
}

/* Push block p onto the class's stack at `slot` of the running CPU's slab; false (nothing
 * changed but p's first word) if it is full or the class bypasses the cache. *off as for
 * hl_rseq_pop. */
static inline __attribute__((always_inline)) bool hl_rseq_push(char *slabs, uintptr_t slot,
                                                               void *p, size_t *off)
{
    uint64_t w, head;
    size_t c;
    __asm__ __volatile__ goto(
        HL_RSEQ_CS_AND_ABORT
        ".Lhl_retry%=:\n\t"
        "lea .Lhl_cs%=(%%rip), %[w]\n\t"
        "mov %[w], %%fs:8(%[off])\n"             /* arm: rseq->rseq_cs = &descriptor */
        ".Lhl_start%=:\n\t"
        "imul %[slab], %%fs:4(%[off]), %k[c]\n\t" /* rseq->cpu_id x slab: where we run now */
        "mov (%[c],%[base]), %[w]\n\t"           /* the head word: the class's entry there */
        "mov %[w], (%[p])\n\t"                   /* p links to the stack (p is still ours) */
        "imul $0x10000, %[p], %[head]\n\t"       /* p << 16, p kept for a restart */
        "mov %w[w], %w[head]\n\t"                /* with the room */
        "sub $1, %w[head]\n\t"                   /* less one; a borrow: there was none */
        "jc %l[full]\n\t"                        /* leave, nothing committed */
        "mov %[head], (%[c],%[base])\n"          /* commit: p is the stack's */
        ".Lhl_commit%=:\n\t"
        : [w] "=&r"(w), [head] "=&r"(head), [c] "=&r"(c)
        : [off] "r"(hl_rseq_offset), [base] "r"(slabs + slot), [p] "r"(p),
          [slab] "i"(HL_RSEQ_SLAB)
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

#!/usr/bin/env python3
"""Writes the hand-made seeds of fuzz-malloc-corpus/ (run from the repository root): the
encoding of fuzz_malloc.c's operations, spelled out, so a regression input can be written
by hand too. Each operation: a byte (low four bits: the kind, see fz_kinds; high four: a flag
or a thread), a slot byte (high bit: use the block to its usable end), then its arguments: a
count byte (calloc, reallocarray), an alignment byte (aligned calls), a two-byte size."""
import os
import random

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz-malloc-corpus")


def size(n):
    """fz_size's encoding: three bits of range, thirteen of value (small sizes exact)."""
    if n <= 256:
        return bytes([n >> 8, n & 255])                                  # ranges 0-5: v % 257
    if n <= 8191:
        return bytes([0xC0 | (n >> 8), n & 255])                         # range 6: v
    v = n // 16 if n < 65536 else min(max(n // 128, 4096), 8191)         # range 7
    return bytes([0xE0 | (v >> 8), v & 255])


def huge(shift):
    """A size of 2^(64 - shift) - 1 bytes (shift 0..16): every call must fail."""
    v = 8160 + shift
    return bytes([0xE0 | (v >> 8), v & 255])


def op(k, flags=0):
    return bytes([(flags << 4) | k])


def M(s, n, end=0): return op(0) + bytes([s | (end << 7)]) + size(n)              # malloc
def C(s, c, n, fl=0): return op(2, fl) + bytes([s, c]) + size(n)                  # calloc
def F(s): return op(3) + bytes([s])                                                 # free
def R(s, n, end=0): return op(5) + bytes([s | (end << 7)]) + size(n)              # realloc
def RA(s, c, n, fl=0): return op(7, fl) + bytes([s, c]) + size(n)                 # reallocarray
def PM(s, a, n): return op(8) + bytes([s, a]) + size(n)                            # posix_memalign
def AA(s, a, n): return op(9) + bytes([s, a]) + size(n)                            # aligned_alloc
def MA(s, a, n): return op(10) + bytes([s, a]) + size(n)                           # memalign
def U(s): return op(11) + bytes([s])                                                # usable size
def SW(t): return op(12, t)                          # following operations on thread t (0: main)
def HO(t): return op(13, t)                          # the next operation on worker t % 3 + 1
def EX(t): return op(14, t)                          # worker t % 3 + 1 exits
def VA(s, n, pv=0): return op(15, 4 if pv else 0) + bytes([s]) + size(n)          # (p)valloc


SEEDS = {
    "basic": b"".join([M(i, n) for i, n in enumerate([0, 1, 7, 8, 15, 16, 17, 100, 256, 1000,
                                                      5000, 8000])]
                      + [U(3), R(3, 200), R(4, 3), R(5, 0), R(20, 64, 1), U(20), M(21, 48, 1)]
                      + [F(i) for i in range(12)]),
    "threads": b"".join([M(i, 24 * i + 8) for i in range(8)] + [SW(1)] + [F(i) for i in range(4)]
                        + [M(10 + i, 40) for i in range(6)]
                        + [R(4, 500), SW(2), F(10), R(11, 3000), SW(0), EX(0), F(12),
                           R(13, 70), HO(1), F(5), HO(2), R(6, 9000), SW(3), M(30, 33), EX(2),
                           M(31, 64), SW(0), F(30), F(31)]),
    "aligned": b"".join([PM(0, 4, 10), PM(1, 12, 5000), PM(2, 0x80 | 24, 10),
                         PM(3, 0x80 | 2, 8), AA(4, 6, 100), AA(5, 0x80 | 48, 100),
                         AA(6, 16, 3000), MA(7, 0x80 | 100, 50), MA(8, 0x80 | 0, 8),
                         MA(9, 14, 300), VA(10, 10), VA(11, 5000, 1), VA(12, 0, 1), R(1, 9000),
                         R(9, 20), U(4)]),
    "calloc": b"".join([M(0, 256), F(0), C(0, 3, 80), C(1, 10, 8, 0b1010), C(2, 1, 7000),
                        RA(3, 4, 60), RA(2, 5, 200, 0b1010), RA(1, 2, 16), C(4, 15, 200), F(4),
                        C(5, 1, 0)]),
    "large": b"".join([M(0, 1 << 20), R(0, 600 << 10), R(0, 1000 << 10), M(1, 60 << 10, 1),
                       R(1, 100), R(1, 700 << 10), SW(1), R(0, 50 << 10), F(1), SW(0),
                       M(2, 700 << 10), F(2), M(3, 700 << 10), C(4, 2, 30 << 10),
                       PM(5, 16, 600 << 10), F(0)]),
    "huge": b"".join([M(0, 100), op(0) + bytes([1]) + huge(0), op(0) + bytes([1]) + huge(16),
                      op(5) + bytes([0]) + huge(1), U(0), op(2) + bytes([2, 3]) + huge(5),
                      op(8) + bytes([3, 12]) + huge(2), op(8) + bytes([3, 0x80 | 3]) + huge(2),
                      op(9) + bytes([4, 0x80 | 3]) + huge(3), op(9) + bytes([4, 8]) + huge(3),
                      op(10) + bytes([5, 20]) + huge(4), op(15) + bytes([6]) + huge(0),
                      op(15, 4) + bytes([6]) + huge(0), op(7) + bytes([0, 1]) + huge(7), U(0),
                      F(0)]),
}

if __name__ == "__main__":
    rng = random.Random(29)
    for i in range(4):
        SEEDS["random-%d" % i] = bytes(rng.randrange(256)
                                       for _ in range(rng.choice([300, 1200, 4000])))
    for name, data in SEEDS.items():
        with open(os.path.join(D, name), "wb") as f:
            f.write(data)

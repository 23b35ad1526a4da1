"""The python3 program of the real-program sweep (configs/sweeps/programs.ini): an
interpreter benchmark of allocation-heavy pure Python, run with PYTHONMALLOC=malloc so that
every object is a malloc (Python's own small-object allocator would otherwise hide most of
them). Deterministic (a seeded random.Random); prints checksums only.

    PYTHONMALLOC=malloc python3 pybench.py [--scale X]"""
import argparse
import json
import random
import re
import zlib


class Node:
    __slots__ = ("left", "right", "value")

    def __init__(self, left, right, value):
        self.left, self.right, self.value = left, right, value


def tree(depth, v=0):
    """Binary trees: many small objects, freed together (the benchmarks game's binary-trees)."""
    if depth == 0:
        return Node(None, None, v)
    return Node(tree(depth - 1, 2 * v), tree(depth - 1, 2 * v + 1), v)


def check(n):
    return n.value if n.left is None else n.value + check(n.left) - check(n.right)


def trees(rng, scale):
    long_lived = tree(14)
    total = 0
    for d in range(4, 15, 2):
        for _ in range(int(scale * 2 ** (16 - d))):
            total += check(tree(d))
    return total + check(long_lived)


def dicts(rng, scale):
    """Dicts of tuples and strings that grow, shrink and are rebuilt."""
    d = {}
    acc = 0
    for i in range(int(200000 * scale)):
        k = "k%d" % int(rng.random() * 50000)
        d.setdefault(k, []).append((i, str(i) * (i % 5)))
        if i % 7 == 0 and d:
            k2 = "k%d" % int(rng.random() * 50000)
            acc += len(d.pop(k2, ()))
    merged = {k: sorted(v, key=lambda t: -t[0])[:3] for k, v in d.items()}
    return acc + sum(len(v) for v in merged.values()) + len(merged)


def strings(rng, scale):
    """Text built, split, joined, searched with regular expressions, formatted."""
    words = ["".join(chr(97 + int(rng.random() * 26)) for _ in range(1 + int(rng.random() * 9)))
             for _ in range(5000)]
    lines = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(int(30000 * scale))]
    text = "\n".join(lines)
    found = re.findall(r"\b([a-z])[a-z]*\1\b", text)
    counts = {}
    for w in text.split():
        counts[w] = counts.get(w, 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:50]
    out = ";".join("%s=%d" % kv for kv in top)
    return zlib.crc32(out.encode()) + len(found) + len(text.upper().replace("A", "aa"))


def documents(rng, scale):
    """JSON documents: nested lists and dicts made, encoded, decoded and compared."""
    docs = []
    for i in range(int(20000 * scale)):
        docs.append({"id": i, "name": "doc%d" % i,
                     "tags": [int(rng.random() * 100) for _ in range(int(rng.random() * 10))],
                     "sub": {"x": rng.random(), "y": [str(j) for j in range(i % 7)]}})
    s = json.dumps(docs, sort_keys=True)
    back = json.loads(s)
    assert back == docs
    return zlib.crc32(s.encode()) + len(back)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    for name, fn in (("trees", trees), ("dicts", dicts), ("strings", strings),
                     ("documents", documents)):
        print(name, fn(random.Random(a.seed), a.scale))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Inputs of the real-program sweep (configs/sweeps/programs.ini), made by each program's
setup: deterministic for a seed (random.Random, Debian's python3), nothing downloaded.

    gen.py text   --seed S --lines N           words, Zipf-like, N lines
    gen.py json   --seed S --records N         one JSON array of N nested records
    gen.py git    --seed S --commits N         a `git fast-import` stream: files, commits, merges
    gen.py redis  --seed S --keys N            redis-cli commands that write, change and read
    gen.py smt    --seed S --size N            an SMT-LIB 2 problem (pigeons in holes, with
                                               integer side constraints)
Output on stdout."""
import argparse
import json
import random
import sys

SYL = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "gu", "shi", "ven", "al", "or",
       "ex", "qui", "bra", "tor", "pel", "zon", "ith", "um", "ar", "es"]


def vocabulary(rng, n=6000):
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYL) for _ in range(1 + int(rng.random() * 4))))
    return sorted(words)


def zipf_word(rng, words):
    # rank ~ 1/u: a few words very common, a long tail
    i = int(len(words) * rng.random() ** 3)
    return words[min(i, len(words) - 1)]


def text(rng, a, out):
    words = vocabulary(rng)
    for i in range(a.lines):
        k = 4 + int(rng.random() * 12)
        line = " ".join(zipf_word(rng, words) for _ in range(k))
        if rng.random() < 0.1:
            line += " %d" % int(rng.random() * 100000)
        out.write(line + "\n")


def records(rng, a, out):
    words = vocabulary(rng, 2000)
    out.write("[\n")
    for i in range(a.records):
        r = {"id": i, "user": "u%d" % int(rng.random() * 5000),
             "group": words[int(len(words) * rng.random() ** 2)],
             "score": round(rng.random() * 1000, 3),
             "tags": [zipf_word(rng, words) for _ in range(int(rng.random() * 6))],
             "meta": {"a": int(rng.random() * 100), "b": zipf_word(rng, words),
                      "ok": rng.random() < 0.7},
             "text": " ".join(zipf_word(rng, words) for _ in range(int(rng.random() * 20)))}
        out.write(json.dumps(r, sort_keys=True) + (",\n" if i + 1 < a.records else "\n"))
    out.write("]\n")


def git(rng, a, out):
    """Files of text edited over many commits (with a side branch merged now and then):
    blobs that delta against each other, trees, a long history."""
    words = vocabulary(rng, 3000)
    files = {"src/f%03d.txt" % i: ["%d %s" % (j, " ".join(zipf_word(rng, words)
                                                         for _ in range(8)))
                                   for j in range(40 + int(rng.random() * 200))]
             for i in range(120)}
    mark = 0
    t = 1577836800
    head = None

    def blob(lines):
        nonlocal mark
        mark += 1
        data = ("\n".join(lines) + "\n").encode()
        out.write(b"blob\nmark :%d\ndata %d\n" % (mark, len(data)) + data + b"\n")
        return mark

    def commit(branch, changed, parents, msg):
        nonlocal mark, t
        marks = {p: blob(files[p]) for p in changed}
        mark += 1
        t += 3600
        m = msg.encode()
        out.write(b"commit refs/heads/%s\nmark :%d\n" % (branch.encode(), mark))
        out.write(b"author A U Thor <a@example.org> %d +0000\n" % t)
        out.write(b"committer A U Thor <a@example.org> %d +0000\n" % t)
        out.write(b"data %d\n%s\n" % (len(m), m))
        for i, p in enumerate(parents):
            out.write(b"%s :%d\n" % (b"from" if i == 0 else b"merge", p))
        for p, bm in marks.items():
            out.write(b"M 100644 :%d %s\n" % (bm, p.encode()))
        out.write(b"\n")
        return mark

    names = sorted(files)
    head = commit("main", names, [], "initial")
    for c in range(a.commits):
        changed = sorted({names[int(len(names) * rng.random() ** 2)]
                          for _ in range(1 + int(rng.random() * 6))})
        for p in changed:
            lines = files[p]
            for _ in range(1 + int(rng.random() * 8)):
                j = int(rng.random() * len(lines))
                op = rng.random()
                new = "%d %s" % (c, " ".join(zipf_word(rng, words) for _ in range(8)))
                if op < 0.5:
                    lines[j] = new
                elif op < 0.8:
                    lines.insert(j, new)
                elif len(lines) > 20:
                    del lines[j]
        head = commit("main", changed, [head], "change %d: %s" % (c, " ".join(changed[:3])))
    out.write(b"reset refs/heads/main\nfrom :%d\n\n" % head)


def redis(rng, a, out):
    """Writes of every type, changes, then reads whose replies do not depend on the
    server's hash seed (no SMEMBERS or HGETALL of hash-table encodings, no KEYS)."""
    words = vocabulary(rng, 1000)
    w = out.write
    for i in range(a.keys):
        v = "-".join(zipf_word(rng, words) for _ in range(1 + int(rng.random() * 40)))
        w("SET s:%d %s\n" % (i, v))
        if i % 3 == 0:
            w("RPUSH l:%d %s\n" % (i % 500, " ".join(zipf_word(rng, words)
                                                     for _ in range(1 + int(rng.random() * 20)))))
        if i % 5 == 0:
            w("HSET h:%d f%d %s g%d %d\n" % (i % 300, i, v[:50], i, i * 7))
        if i % 7 == 0:
            w("SADD t:%d %s\n" % (i % 200, " ".join(zipf_word(rng, words) for _ in range(5))))
        if i % 4 == 0:
            w("ZADD z:%d %d m%d\n" % (i % 100, int(rng.random() * 1000), i))
        if i % 11 == 0:
            w("APPEND s:%d %s\n" % (int(rng.random() * (i + 1)), v[:30]))
        if i % 13 == 0:
            w("DEL s:%d\n" % int(rng.random() * (i + 1)))
        if i % 17 == 0:
            w("LPOP l:%d\n" % int(rng.random() * 500))
    for i in range(0, a.keys, 3):
        w("GET s:%d\n" % i)
        w("STRLEN s:%d\n" % (i + 1))
    for i in range(500):
        w("LRANGE l:%d 0 -1\n" % i)
    for i in range(300):
        w("HLEN h:%d\n" % i)
        w("HMGET h:%d f%d g%d\n" % (i, i, i + 300))
    for i in range(200):
        w("SCARD t:%d\n" % i)
        w("SISMEMBER t:%d %s\n" % (i, zipf_word(rng, words)))
    for i in range(100):
        w("ZRANGE z:%d 0 -1 WITHSCORES\n" % i)


def smt(rng, a, out):
    """Pigeonhole (size + 1 pigeons, size holes, one-hot booleans: unsatisfiable, hard for
    resolution) beside a satisfiable integer part: a chain of linear constraints."""
    n = a.size
    w = out.write
    w("(set-option :random-seed 0)\n(set-logic QF_LIA)\n")
    for p in range(n + 1):
        for h in range(n):
            w("(declare-const p%d_%d Bool)\n" % (p, h))
        w("(assert (or %s))\n" % " ".join("p%d_%d" % (p, h) for h in range(n)))
    for h in range(n):
        for p in range(n + 1):
            for q in range(p + 1, n + 1):
                w("(assert (or (not p%d_%d) (not p%d_%d)))\n" % (p, h, q, h))
    m = 40
    for i in range(m):
        w("(declare-const x%d Int)\n" % i)
    for i in range(m - 1):
        c = 1 + int(rng.random() * 9)
        w("(assert (<= (+ (* %d x%d) x%d) %d))\n" % (c, i, i + 1, int(rng.random() * 100)))
        w("(assert (>= x%d (- %d)))\n" % (i, int(rng.random() * 50)))
    w("(check-sat)\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["text", "json", "git", "redis", "smt"])
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--lines", type=int, default=100000)
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--keys", type=int, default=20000)
    ap.add_argument("--size", type=int, default=8)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    if a.kind == "git":
        git(rng, a, sys.stdout.buffer)
    else:
        {"text": text, "json": records, "redis": redis, "smt": smt}[a.kind](rng, a, sys.stdout)


if __name__ == "__main__":
    main()

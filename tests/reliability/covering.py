#!/usr/bin/env python3
"""covering.py — the reliability suites' knob combinations as a pairwise covering design.

Instead of every test under every knob value (a column per value, the suite growing by
multiplication), each strategy row gets a few configurations of the knobs that act on it, so
that every pair of values of any two of those knobs occurs in at least one configuration, and
every value once with each sanitizer (`san`: the sanitizer build that runs the configuration's
stress test). meson.build runs each configuration through a few preloaded tests and one
sanitizer test; `meson configure -Dfull_suite=true` adds the old product back.

    python3 tests/reliability/covering.py                  the design as a table
    python3 tests/reliability/covering.py --meson S1 S2..  one line per configuration, for meson:
                                                           NAME STRATEGY SANITIZER ENV...

The design is built greedily (start from nothing; repeatedly take the first valid full
combination that covers the most pairs still uncovered; stop when none is left), so it is
deterministic and small (16-19 configurations for the hoard rows, against 384 valid full
combinations). tests/tools/test_covering.py checks the property on the registered tests.
"""
import itertools
import sys

# knob : its values (config.h's enums), the order the names and the table use
KNOBS = {
    "cache": ["none", "thread", "cpu"],                # the front: none, TLAB, per-CPU cache
    "free_lists": ["single", "sharded"],               # the backing superblock lists
    "remote_free": ["lock", "list", "queue", "batch"],
    "purge": ["off", "free", "dontneed", "decay"],
    "heap_select": ["thread", "hash", "cpu", "home"],
}
SANITIZERS = ["asan", "tsan"]

# strategy row : the knobs that act on it (config.h's "acts on" column). serial and concurrent
# have none of these: they run their base row only.
ROWS = {
    "private": ["heap_select"],
    "ownership": ["cache", "free_lists", "remote_free", "heap_select"],
    "hoard": ["cache", "free_lists", "remote_free", "purge", "heap_select"],
    "hoard2026": ["cache", "free_lists", "remote_free", "purge", "heap_select"],
    "hoard202607": ["cache", "free_lists", "remote_free", "purge", "heap_select"],
    "lockfree": ["heap_select"],
}

# Short words for the test names: rel-stress-hoard-tlab-sharded-list-decay-selcpu
WORDS = {
    "cache": {"none": "nocache", "thread": "tlab", "cpu": "cpucache"},
    "free_lists": {"single": "single", "sharded": "sharded"},
    "remote_free": {v: v for v in KNOBS["remote_free"]},
    "purge": {"off": "nopurge", "free": "pfree", "dontneed": "dontneed", "decay": "decay"},
    "heap_select": {v: "sel" + v for v in KNOBS["heap_select"]},
}


def valid(c):
    """Whether a configuration (knob : value) may run: free_lists = sharded needs remote_free =
    list (superblock.c's hl_sb_init stops the program otherwise)."""
    return not (c.get("free_lists") == "sharded" and c.get("remote_free") != "list")


def pairs_of(c):
    """The pairs ((knob, value), (knob, value)) a configuration covers, san included."""
    items = sorted(c.items())
    return {(a, b) for a, b in itertools.combinations(items, 2)}


def needed(knobs):
    """Every pair of values of two of `knobs` (and san) that some valid configuration holds."""
    factors = dict((k, KNOBS[k]) for k in knobs)
    factors["san"] = SANITIZERS
    want = set()
    for c in full(factors):
        want |= pairs_of(c)
    return want, factors


def full(factors):
    names = list(factors)
    for vals in itertools.product(*(factors[n] for n in names)):
        c = dict(zip(names, vals))
        if valid(c):
            yield c


def design(knobs, turn=0):
    """The configurations of one row: greedy cover of needed(knobs). Ties go to the values used
    least so far (asan and tsan share the row evenly), then to the first in the product's order
    turned by `turn` places (the rows with the same knobs get different configurations)."""
    want, factors = needed(knobs)
    cands = list(full(factors))
    cands = cands[turn % len(cands):] + cands[:turn % len(cands)]
    out = []
    used = {}
    while want:
        def score(c):
            return (len(pairs_of(c) & want), -sum(used.get(kv, 0) for kv in c.items()))
        best = max(cands, key=score)                    # max: the first of the best
        out.append(best)
        want -= pairs_of(best)
        for kv in best.items():
            used[kv] = used.get(kv, 0) + 1
    return out


def row_design(row):
    """The design of a strategy row (the turn: the row's place in ROWS, times 37)."""
    return design(ROWS[row], 37 * list(ROWS).index(row))


def env_of(c):
    """The environment of a configuration: HOARD_KNOB=value, and for a purge the settings that
    make it act within a short test (nothing retained; decay over 10 ms)."""
    env = ["HOARD_%s=%s" % (k.upper(), v) for k, v in c.items() if k != "san"]
    if c.get("purge", "off") != "off":
        env.append("HOARD_RETAIN=0")
    if c.get("purge") == "decay":
        env.append("HOARD_DECAY_MS=10")
    return env


def name_of(row, c):
    return "-".join([row] + [WORDS[k][c[k]] for k in KNOBS if k in c])


def configurations(strategies):
    """(name, strategy, sanitizer, env) of every configuration of the rows compiled in."""
    out = []
    for row in strategies:
        for c in (row_design(row) if row in ROWS else []):
            out.append((name_of(row, c), row, c["san"], env_of(c)))
    return out


def main(argv):
    if argv[:1] == ["--meson"]:
        for name, row, san, env in configurations(argv[1:]):
            print(" ".join([name, row, san] + env))
        return 0
    total = 0
    for row, knobs in ROWS.items():
        d = row_design(row)
        total += len(d)
        print("%s: %d configurations covering %d pairs of %s, san" %
              (row, len(d), len(needed(knobs)[0]), ", ".join(knobs)))
        cols = knobs + ["san"]
        print("  " + "".join("%-13s" % k for k in cols))
        for c in d:
            print("  " + "".join("%-13s" % c[k] for k in cols))
    print("%d configurations in all (serial, concurrent: their base row only)" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The reliability suites' covering design (tests/reliability/covering.py, issue 46): under every
strategy row, every pair of values of two of the knobs cache, free_lists, remote_free, purge
and heap_select that act on it runs at least once, and every value under ASan and under TSan.

What must be covered comes from src/core/base/config.h, not from covering.py: the values from the
enums (E(hl_caches, C(..., "none") ...)), the rows from each key's "acts on" column. What is
covered comes from the tests meson registered (meson introspect --tests of the build), so
removing a configuration, a pair or a test registration fails here."""
import itertools
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import BDIR, REPO

sys.path.insert(0, os.path.join(REPO, "tests", "reliability"))
import covering  # noqa: E402

CONFIG_H = os.path.join(REPO, "src", "core", "base", "config.h")
KNOBS = ["cache", "free_lists", "remote_free", "purge", "heap_select"]
SANITIZERS = ["asan", "tsan"]


def _args(text):
    """The top-level arguments of a macro call's text (after its opening parenthesis)."""
    args, cur, depth, quoted = [], "", 0, False
    for i, ch in enumerate(text):
        if quoted:
            cur += ch
            if ch == '"' and text[i - 1] != "\\":
                quoted = False
        elif ch == '"':
            quoted = True
            cur += ch
        elif ch == "(":
            depth += 1
            cur += ch
        elif ch == ")":
            if depth == 0:
                args.append(cur.strip())
                return args
            depth -= 1
            cur += ch
        elif ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return args


def config_table():
    """knob : (values, rows it acts on), from config.h."""
    src = open(CONFIG_H).read().replace("\\\n", " ")
    macros = {m.group(1): " ".join(re.findall(r'"([^"]*)"', m.group(2)))
              for m in re.finditer(r"^#define (HL_\w+_ROWS) (.*)$", src, re.M)}
    out = {}
    for knob in KNOBS:
        m = re.search(r"\bX\(%s," % knob, src)
        assert m, "config.h has no key %s" % knob
        a = _args(src[m.end() - len(knob) - 1:])
        enum = a[7]         # X(name, section, file, kind, default, min, max, choices, acts, help)
        e = re.search(r"E\(%s,(.*?)\)\)" % enum, src, re.S)
        values = re.findall(r'C\(\w+, "(\w+)"\)', e.group(1) + ")")
        acts = ""
        for tok in re.findall(r'"[^"]*"|\w+', a[8]):
            acts += tok[1:-1] if tok.startswith('"') else macros.get(tok, tok)
        acts = acts.split(" if ")[0]
        out[knob] = (values, [r.strip() for r in acts.split(",") if r.strip()])
    return out


def valid(c):
    """superblock.c's hl_sb_init: free_lists = sharded needs remote_free = list."""
    return not (c.get("free_lists") == "sharded" and c.get("remote_free") != "list")


def missing(table, strategies, runs):
    """What the runs (dicts: strategy, san or None for preloaded, knob values) leave uncovered:
    a list of readable lines, empty when the design holds."""
    out = []
    for s in strategies:
        knobs = [k for k in KNOBS if s in table[k][1]]
        pre = [r for r in runs if r["strategy"] == s and r["san"] is None]
        for k in knobs:
            for v in table[k][0]:
                if not any(r.get(k) == v for r in pre):
                    out.append("%s: %s = %s never runs preloaded" % (s, k, v))
                for san in SANITIZERS:
                    if not any(r.get(k) == v and r["san"] == san for r in runs
                               if r["strategy"] == s):
                        out.append("%s: %s = %s never runs under %s" % (s, k, v, san))
        for k1, k2 in itertools.combinations(knobs, 2):
            for v1, v2 in itertools.product(table[k1][0], table[k2][0]):
                if not valid({k1: v1, k2: v2}):
                    continue
                if not any(r.get(k1) == v1 and r.get(k2) == v2 for r in pre):
                    out.append("%s: %s = %s with %s = %s never runs" % (s, k1, v1, k2, v2))
    return out


def registered_runs(bdir):
    """The covering design's runs as meson registered them (suite rel-cover)."""
    p = subprocess.run(["meson", "introspect", "--tests", bdir], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    runs = []
    for t in json.loads(p.stdout):
        if not any(s.split(":")[-1] == "rel-cover" for s in t.get("suite", [])):
            continue
        env = t.get("env") or {}
        m = re.match(r"rel-(asan|tsan)-", t["name"])
        r = {"strategy": env.get("HOARD_STRATEGY"), "san": m.group(1) if m else None,
             "name": t["name"]}
        for k in KNOBS:
            if "HOARD_" + k.upper() in env:
                r[k] = env["HOARD_" + k.upper()]
        runs.append(r)
    return runs


def built_strategies(bdir):
    with open(os.path.join(bdir, "meson-info", "intro-buildoptions.json")) as f:
        return next(o["value"] for o in json.load(f) if o["name"] == "strategies")


def test_config_h_is_read():
    """The table the other tests rest on: the values and rows config.h gives today."""
    t = config_table()
    assert t["cache"][0] == ["none", "thread", "cpu"]
    assert t["remote_free"][0] == ["lock", "list", "queue", "batch"]
    assert "lockfree" in t["heap_select"][1] and "private" in t["heap_select"][1]
    assert "ownership" not in t["purge"][1] and "hoard202607" in t["purge"][1]


def test_design_covers_every_pair():
    """covering.py's own output (no build needed), checked against config.h."""
    table = config_table()
    strategies = list(covering.ROWS) + ["serial", "concurrent"]
    runs = []
    for name, row, san, env in covering.configurations(strategies):
        r = dict(strategy=row, san=None)
        r.update({e.split("=")[0][6:].lower(): e.split("=")[1] for e in env})
        runs.append(r)
        runs.append(dict(r, san=san))
    assert missing(table, strategies, runs) == []


def test_a_removed_pair_is_noticed():
    """The check can fail: without one configuration some pair or value goes missing."""
    table = config_table()
    runs = []
    for name, row, san, env in covering.configurations(["hoard"]):
        r = dict(strategy=row, san=None)
        r.update({e.split("=")[0][6:].lower(): e.split("=")[1] for e in env})
        runs += [r, dict(r, san=san)]
    assert missing(table, ["hoard"], runs[2:])


@pytest.mark.skipif(not os.path.exists(os.path.join(BDIR, "build.ninja")),
                    reason="%s not configured (run tools/hoardlab build)" % BDIR)
def test_registered_tests_cover_every_pair():
    """The tests meson runs (default or full suite alike: the design is in both)."""
    runs = registered_runs(BDIR)
    assert runs, "no test in suite rel-cover"
    strategies = built_strategies(BDIR)
    assert missing(config_table(), strategies, runs) == []


@pytest.mark.skipif(not os.path.exists(os.path.join(BDIR, "build.ninja")),
                    reason="%s not configured (run tools/hoardlab build)" % BDIR)
def test_programs_and_workloads_spread_over_strategies():
    """The real programs (rel-prog-P-S) and hlbench's workloads (hlbench-W-S): each under at
    least two strategies (all of them when fewer than three are built), each strategy under at
    least six of them."""
    p = subprocess.run(["meson", "introspect", "--tests", BDIR], capture_output=True, text=True)
    tests = json.loads(p.stdout)
    strategies = built_strategies(BDIR)
    for prefix, arg_of in (("rel-prog-", lambda t: t["cmd"][-1]),
                           ("hlbench-", lambda t: t["cmd"][t["cmd"].index("--") + 1])):
        pairs = set()
        for t in tests:
            n = t["name"]
            if not n.startswith(prefix) or "checks" in n or "decay" in n:
                continue
            if prefix == "hlbench-" and "--" not in t["cmd"]:
                continue                                # hlbench-replay-S, hlbench-cli
            s = (t.get("env") or {}).get("HOARD_STRATEGY") or next(
                (a for a in t["cmd"] if a in strategies), None)
            if s in strategies and n.endswith("-" + s):
                pairs.add((arg_of(t), s))
        things = {a for a, _ in pairs}
        assert len(things) >= 10, (prefix, things)
        for a in things:
            assert len({s for x, s in pairs if x == a}) >= min(2, len(strategies)), (prefix, a)
        for s in strategies:
            assert len({a for a, x in pairs if x == s}) >= min(6, len(things)), (prefix, s)

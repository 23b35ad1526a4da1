"""Sweep files: parsing, validation and expansion."""
import pytest

from hoardlab_lib.common import ToolError
from hoardlab_lib.sweeps import Sweep, parse_threads, shuffled

STRATS = ["serial", "concurrent", "private", "ownership", "hoard"]


def sweep(text, **kw):
    kw.setdefault("ncores", 2)
    kw.setdefault("strategies", STRATS)
    return Sweep(text, "t.ini", **kw)


def test_thread_tokens():
    assert parse_threads("1, 2, P", 4) == [1, 2, 4]
    assert parse_threads("P 2P", 2) == [2, 4]
    assert parse_threads("4,1,4", 8) == [1, 4]
    with pytest.raises(ToolError):
        parse_threads("0", 2)
    with pytest.raises(ToolError):
        parse_threads("x", 2)


def test_expansion_counts_and_fields():
    s = sweep("""
[sweep]
name = t
strategies = serial, hoard
threads = 1, P
repetitions = 3
scale = 0.5
workload_seed = 100
[allocators]
glibc = glibc
[workload threadtest]
rounds = 7
[workload blowup-roundrobin]
threads = 1, 2, 4
repetitions = 1
""")
    runs = s.expand()
    # threadtest: 3 allocators x 2 threads x 3 reps; blowup: 3 x 3 x 1
    assert len(runs) == 18 + 9
    assert [r["index"] for r in runs] == list(range(27))
    tt = [r for r in runs if r["workload"] == "threadtest"]
    assert {r["allocator"] for r in tt} == {"serial", "hoard", "glibc"}
    assert {r["threads"] for r in tt} == {1, 2}
    assert all(r["params"] == {"rounds": "7"} for r in tt)
    assert all(r["scale"] == 0.5 for r in runs)
    # identical workloads for every allocator: the seed depends on the repetition only
    assert {(r["repetition"], r["seed"]) for r in tt} == {(0, 100), (1, 101), (2, 102)}
    assert {r["kind"] for r in runs if r["allocator"] == "glibc"} == {"production"}


def test_strategies_all_and_knob_variants():
    s = sweep("""
[sweep]
strategies = all
[allocators]
concurrent+pad = concurrent, padding=on
[knobs]
empty_fraction = 1/8, 1/4, 1/2
allocators = hoard
[workload threadtest]
""")
    variants = [v[4] for v in s.variants()]
    assert variants[:5] == ["serial", "concurrent", "private", "ownership",
                            "hoard[empty_fraction=1/8]"]
    assert "hoard[empty_fraction=1/2]" in variants and "concurrent+pad" in variants
    assert len(variants) == 4 + 3 + 1
    pad = [v for v in s.variants() if v[0] == "concurrent+pad"][0]
    assert pad[2] == {"padding": "on"}
    assert len(s.expand()) == 8   # one thread count, one repetition
    assert s.name == "t"          # from the file name


def test_two_allocators_of_one_strategy_differ_by_knob():
    s = sweep("""
[sweep]
[allocators]
pad-off = concurrent, padding=off
pad-on = concurrent, padding=on
[workload ucpp-unique]
""")
    runs = s.expand()
    assert [(r["allocator"], r["base"], r["knobs"]) for r in runs] == [
        ("pad-off", "concurrent", {"padding": "off"}),
        ("pad-on", "concurrent", {"padding": "on"})]


def test_workload_knobs_and_subsets():
    s = sweep("""
[sweep]
strategies = serial, hoard
[allocators]
jemalloc = jemalloc
[workload census-tt]
workload = threadtest
knobs = census=on
allocators = hoard, jemalloc
""")
    runs = s.expand()
    assert [(r["allocator"], r["workload"], r["workload_label"], r["knobs"]) for r in runs] == [
        ("hoard", "threadtest", "census-tt", {"census": "on"}),
        ("jemalloc", "threadtest", "census-tt", {})]    # knobs never reach production


@pytest.mark.parametrize("text,msg", [
    ("[workload x]\n", "no [sweep] section"),
    ("[sweep]\nstrategies = hoard\n", "no [workload"),
    ("[sweep]\nfoo = 1\n[workload x]\n", "unknown key 'foo'"),
    ("[sweep]\nstrategies = nosuch\n[workload x]\n", "unknown strategy 'nosuch'"),
    ("[sweep]\n[allocators]\nj = jemalloc, padding=on\n[workload x]\n", "production"),
    ("[sweep]\n[allocators]\nj = bogus\n[workload x]\n", "unknown strategy or allocator"),
    ("[sweep]\nstrategies = hoard\nbaseline = glibc\n[workload x]\n", "baseline"),
    ("[sweep]\nstrategies = hoard\nrepetitions = 0\n[workload x]\n", "at least 1"),
    ("[sweep]\nstrategies = hoard\n[workload x]\nknobs = census\n", "key=value"),
    ("[sweep]\nstrategies = hoard\n[workload x]\nallocators = serial\n", "not an allocator"),
    ("[sweep]\nstrategies = hoard\n[other]\n[workload x]\n", "unknown section"),
    ("[sweep]\n[workload x]\n", "no allocators"),
])
def test_errors(text, msg):
    with pytest.raises(ToolError) as e:
        sweep(text)
    assert msg in str(e.value)


def test_cost_key():
    base = "[sweep]\nstrategies = hoard\n%s[workload x]\n"
    assert sweep(base % "").cost is False
    for v, want in (("yes", True), ("on", True), ("no", False), ("off", False)):
        assert sweep(base % ("cost = %s\n" % v)).cost is want
    with pytest.raises(ToolError) as e:
        sweep(base % "cost = maybe\n")
    assert str(e.value) == "t.ini: [sweep] cost: 'maybe' is not on/off (or yes/no, " \
        "true/false, 1/0)"


def test_strategies_all_needs_hlconfig():
    with pytest.raises(ToolError, match="hlconfig"):
        Sweep("[sweep]\nstrategies = all\n[workload x]\n", "t.ini", ncores=2, strategies=None)


def test_shuffle_is_a_reproducible_permutation():
    s = sweep("[sweep]\nstrategies = all\nthreads = 1, 2\nrepetitions = 4\n"
              "[workload threadtest]\n[workload larson]\n")
    runs = s.expand()
    a, b, c = shuffled(runs, 7), shuffled(runs, 7), shuffled(runs, 8)
    assert [r["index"] for r in a] == [r["index"] for r in b]
    assert [r["index"] for r in a] != [r["index"] for r in c]
    assert sorted(r["index"] for r in a) == list(range(len(runs)))
    assert [r["index"] for r in a] != list(range(len(runs)))


def test_shipped_sweeps_parse():
    import glob
    import os
    from conftest import REPO
    files = glob.glob(os.path.join(REPO, "configs", "sweeps", "*.ini"))
    names = {os.path.basename(f) for f in files}
    assert {"taxonomy.ini", "sensitivity-f.ini", "ucpp-padding.ini",
            "production.ini"} <= names
    for f in files:
        with open(f) as fh:
            s = Sweep(fh.read(), f, ncores=2, strategies=STRATS + ["lockfree", "hoard2026",
                                                                "hoard202607"])
        assert s.expand(), f
        if os.path.basename(f) == "production.ini":
            assert s.cost, "the production sweep's report carries the cost table"

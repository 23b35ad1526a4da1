"""Today's allocators in Table 7 (issue 47): the false-sharing census from outside the
allocator (harness/census.c, compiled here and called on synthetic address lists), blowup
from RSS less LazyFree over synthetic rounds, the report's second table from a tiny fixture
of runs.csv rows (made-up numbers, as in test_verdicts.py), and the sweep key that keeps the
production allocators to the workloads naming them."""
import ctypes
import itertools
import os
import shutil
import subprocess

import pytest

from conftest import REPO
from hoardlab_lib import allocators, common, sweeps as sweepmod
from hoardlab_lib.sweeps import variants
from hoardlab_lib.report import today as R
from hoardlab_lib import verdicts as T
from hoardlab_lib.verdicts import WITHIN_NOISE

_ids = itertools.count()
NEVER = 2 ** 64 - 1


# --- the census from outside: harness/census.c on synthetic addresses -------------------------

class Block(ctypes.Structure):
    _fields_ = [("addr", ctypes.c_size_t), ("size", ctypes.c_size_t),
                ("start", ctypes.c_uint64), ("to", ctypes.c_uint64),
                ("holder", ctypes.c_uint32)]


@pytest.fixture(scope="module")
def census(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to build harness/census.c")
    so = str(tmp_path_factory.mktemp("census") / "libcensus.so")
    subprocess.run([cc, "-std=c11", "-shared", "-fPIC", "-O1", "-Wall", "-Werror",
                    "-I", os.path.join(REPO, "harness"), "-I", os.path.join(REPO, "include"),
                    os.path.join(REPO, "harness", "census.c"), "-o", so], check=True)
    lib = ctypes.CDLL(so)
    lib.hb_census_count.restype = ctypes.c_int

    def count(blocks, line=64):
        arr = (Block * max(1, len(blocks)))(*[Block(*b) for b in blocks])
        fb, fl = ctypes.c_ulonglong(), ctypes.c_ulonglong()
        rc = lib.hb_census_count(arr, len(blocks), line, ctypes.byref(fb), ctypes.byref(fl))
        assert rc == 0
        return fb.value, fl.value
    return count


def test_census_counts_two_threads_live_on_one_line(census):
    # (addr, size, from, to, holder): thread 1 gets 0x1008 while thread 0 holds 0x1000
    assert census([(0x1000, 8, 1, 10, 0), (0x1008, 8, 2, 5, 1)]) == (1, 1)
    # a third block of thread 0 on that line, while thread 1's is live: counted too
    assert census([(0x1000, 8, 1, 10, 0), (0x1008, 8, 2, 5, 1),
                   (0x1010, 8, 3, 4, 0)]) == (2, 1)


def test_census_counts_nothing_when_no_line_is_shared(census):
    # different lines; one line but the same thread; one line but one after the other (a
    # block reused after its free); nothing at all
    assert census([(0x1000, 8, 1, 10, 0), (0x1040, 8, 2, 5, 1)]) == (0, 0)
    assert census([(0x1000, 8, 1, 10, 0), (0x1008, 8, 2, 5, 0)]) == (0, 0)
    assert census([(0x1000, 8, 1, 4, 0), (0x1000, 8, 5, 9, 1), (0x1008, 8, 10, 12, 0)]) \
        == (0, 0)
    assert census([]) == (0, 0)


def test_census_a_block_touches_its_last_line_too(census):
    # 0x1030..0x104f spans lines 0x1000 and 0x1040; thread 1's block on the second line
    assert census([(0x1030, 32, 1, NEVER, 0), (0x1050, 8, 2, 3, 1)]) == (1, 1)
    # with 128-byte lines the same two blocks share line 0x1000 (still one line)
    assert census([(0x1030, 32, 1, NEVER, 0), (0x1050, 8, 2, 3, 1)], line=128) == (1, 1)
    assert census([(0x1030, 16, 1, NEVER, 0), (0x1050, 8, 2, 3, 1)]) == (0, 0)


# --- fixture rows ---------------------------------------------------------------------------

def row(variant, label, t, thr=None, kind=None, workload=None, **extra):
    r = {"index": next(_ids), "variant": variant, "allocator": variant, "strategy": variant,
         "alloc_kind": kind or ("hoardlab" if variant == "serial" else "production"),
         "knobs": "", "workload": workload or label.replace("today-", "").replace(
             "census-", ""), "workload_label": label, "threads": t, "throughput": thr,
         "status": "ok", "repetition": 0, "peak_rss_kb": None}
    r.update(extra)
    return r


def rounds_for(r, rss_kb, lazy_kb=None, live=1 << 20):
    return [{"index": r["index"], "round": i, "os_bytes": None, "live_bytes": live,
             "rss_kb": m, "lazyfree_kb": (lazy_kb[i] if lazy_kb else 0)}
            for i, m in enumerate(rss_kb)]


def blowup_runs(variant, held_kb_by_t, floor_kb=1000, grow=None, lazy=None):
    """blowup-roundrobin runs at each thread count (held_kb above the floor, flat over 8
    rounds unless `grow`), and blowup-prodcons at 2 threads."""
    rows, rounds = [], []
    for t, held in sorted(held_kb_by_t.items()):
        r = row(variant, "today-blowup-roundrobin", t, 1.0, **{"extra.floor_kb": floor_kb})
        rows.append(r)
        rounds += rounds_for(r, [floor_kb + held] * 8)
    r = row(variant, "today-blowup-prodcons", 2, 1.0, **{"extra.floor_kb": floor_kb})
    rows.append(r)
    mem = grow or [floor_kb + 1024] * 8
    rounds += rounds_for(r, mem, lazy)
    return rows, rounds


# --- blowup from outside ----------------------------------------------------------------------

def test_blowup_outside_o_p_and_o1():
    rows, rounds = blowup_runs("own", {1: 1100, 2: 2200, 4: 4400})    # live 1 MiB
    v = T.blowup_outside(rows, rounds, "own")
    assert v["value"] == "O(P)", v
    assert "1.07 at t=1 -> 4.30 at t=4" in v["evidence"]
    rows, rounds = blowup_runs("flat", {1: 1100, 2: 1200, 4: 1300})
    assert T.blowup_outside(rows, rounds, "flat")["value"] == "O(1)"


def test_blowup_outside_unbounded_and_lazyfree_is_not_held():
    grow = [2000, 2200, 2600, 3000, 3400, 3800, 4200, 4600]       # x2.3 from round 2 on
    rows, rounds = blowup_runs("leak", {1: 1100, 2: 1200}, grow=grow)
    assert T.blowup_outside(rows, rounds, "leak")["value"] == "unbounded"
    # the same RSS, but all the growth is LazyFree (pages given back with MADV_FREE)
    lazy = [g - 2000 for g in grow]
    rows, rounds = blowup_runs("lazy", {1: 1100, 2: 1200}, grow=grow, lazy=lazy)
    assert T.blowup_outside(rows, rounds, "lazy")["value"] == "O(1)"


def growing_runs(variant, finals, held_kb_by_t=None, floor_kb=1000):
    """today-blowup-roundrobin at 2 threads, one run per entry of `finals`: memory flat at
    (1000 KiB over the floor) until round 2 (n/4 of 8), then rising to final x that by the
    last round; and flat runs at 1 and 4 threads (held_kb_by_t: O(P) by default)."""
    rows, rounds = [], []
    for t, held in sorted((held_kb_by_t or {1: 1100, 4: 4400}).items()):
        r = row(variant, "today-blowup-roundrobin", t, 1.0, **{"extra.floor_kb": floor_kb})
        rows.append(r)
        rounds += rounds_for(r, [floor_kb + held] * 8)
    for i, x in enumerate(finals):
        r = row(variant, "today-blowup-roundrobin", 2, 1.0, repetition=i,
                **{"extra.floor_kb": floor_kb})
        rows.append(r)
        m = floor_kb + 1000
        mem = [m] * 3 + [round(m * (1 + (x - 1) * k / 5)) for k in range(1, 6)]
        rounds += rounds_for(r, mem)
    return rows, rounds


def test_blowup_outside_growth_over_rounds_decides_only_outside_its_interval():
    # three repetitions straddling x1.5 (jemalloc's three main jobs): within noise, and the
    # group more repetitions would decide it from is named
    rows, rounds = growing_runs("j", [1.23, 1.47, 1.51])
    v = T.blowup_outside(rows, rounds, "j")
    assert v["value"] == WITHIN_NOISE, v
    assert "rounds x1.47 [1.23, 1.51]" in v["evidence"]
    assert v["note"].startswith("unbounded or O(P)")
    assert ("today-blowup-roundrobin", 2) in v["repeat"]
    # all on one side: decided either way; one run alone is taken as it is
    assert T.blowup_outside(*growing_runs("a", [1.6, 1.7, 1.55]), "a")["value"] == "unbounded"
    assert T.blowup_outside(*growing_runs("b", [1.2, 1.3, 1.45]), "b")["value"] == "O(P)"
    assert T.blowup_outside(*growing_runs("c", [1.47]), "c")["value"] == "O(P)"


def test_blowup_outside_growth_over_threads_within_noise():
    rows, rounds = growing_runs("p", [1.0], {1: 1100, 4: 2800})
    r = row("p", "today-blowup-roundrobin", 4, 1.0, repetition=1, **{"extra.floor_kb": 1000})
    rows.append(r)
    rounds += rounds_for(r, [1000 + 2000] * 8)
    v = T.blowup_outside(rows, rounds, "p")         # x2.55 and x1.82 against x2.50 needed
    assert v["value"] == WITHIN_NOISE and v["note"].startswith("O(1) or O(P)"), v
    assert set(v["repeat"]) == {("today-blowup-roundrobin", 1), ("today-blowup-roundrobin", 4)}


def test_a_blowup_within_noise_is_repeated_under_its_today_label():
    from hoardlab_lib.sweeps import undecided
    rows, rounds = growing_runs("j", [1.23, 1.47, 1.51])
    groups = undecided.undecided_groups(rows, rounds, 2)
    assert groups.get(("j", "today-blowup-roundrobin", 2)) == "j blowup within noise", groups


def test_blowup_outside_undecided_with_one_thread_count():
    rows, rounds = blowup_runs("one", {2: 1100})
    assert T.blowup_outside(rows, rounds, "one")["value"] == "undecided"


# --- the report's second table -----------------------------------------------------------------

EXPECTED = {
    "glibc": {"category": "private heaps with ownership", "fast": {"yes"},
              "scalable": {"yes"}, "false_sharing": {"no"}, "blowup": {"O(P)"},
              "source": "a test"},
    "snmalloc": {"category": "message passing", "fast": {"yes"}, "scalable": {"yes"},
                 "false_sharing": {"yes"}, "blowup": {"O(1)"}, "source": "a test"},
    "tcmalloc": {"category": "thresholds", "fast": {"yes"}, "scalable": None,
                 "false_sharing": None, "blowup": None, "source": "a test"},
}


def fixture_rows():
    rows, rounds = [], []
    for wl in ("threadtest", "larson"):
        rows += [row("serial", wl, 1, 100.0), row("serial", wl, 2, 100.0)]
        rows += [row("glibc", "today-" + wl, 1, 150.0), row("glibc", "today-" + wl, 2, 290.0)]
        rows += [row("snmalloc", "today-" + wl, 1, 50.0),         # slow: a mismatch
                 row("snmalloc", "today-" + wl, 2, 98.0)]
    for v, passive in (("glibc", 12), ("snmalloc", 0)):
        rows.append(row(v, "today-census-active-false", 2, 1.0, **{
            "params.census": 1, "extra.census_false_blocks": 0}))
        rows.append(row(v, "today-census-passive-false", 2, 1.0, **{
            "params.census": 1, "extra.census_false_blocks": passive}))
    for v, held in (("glibc", {1: 1100, 2: 2200, 4: 4400}),
                    ("snmalloc", {1: 1100, 2: 2300, 4: 4300})):   # O(P): a mismatch
        r, rr = blowup_runs(v, held)
        rows += r
        rounds += rr
    return rows, rounds


def test_today_table_measured_rows_mismatches_and_not_installed():
    rows, rounds = fixture_rows()
    lines, ents = R.today_section(rows, rounds, 2, expected=EXPECTED,
                                  is_installed=lambda n: n != "tcmalloc")
    text = "\n".join(lines)
    assert "## Today's allocators" in text
    by = {e["variant"]: e for e in ents}
    g = by["glibc"]
    assert (g["fast"]["value"], g["scalable"]["value"], g["false_sharing"]["value"],
            g["blowup"]["value"]) == ("yes", "yes", "no", "O(P)")
    assert g["mismatches"] == []
    assert "passively induced" in g["false_sharing"]["note"]
    s = by["snmalloc"]
    assert s["fast"]["value"] == "no" and s["false_sharing"]["value"] == "yes"
    assert s["mismatches"] == ["fast", "blowup"]
    assert "**Mismatches with their documentation (2):** snmalloc fast? measured no, " \
        "documented yes; snmalloc blowup measured O(P), documented O(1)." in text
    assert "| tcmalloc | thresholds | not installed |" in text
    assert "tcmalloc (not installed)" in text
    assert by["tcmalloc"]["mismatches"] == []


def test_today_table_absent_without_today_runs_and_present_when_all_missing():
    rows = [row("serial", "threadtest", 1, 100.0)]
    assert R.today_section(rows, [], 2, expected=EXPECTED)[0] == []
    meta = {"sweep": {"text": "only_where_named = glibc\n[workload today-threadtest]\n"}}
    lines, ents = R.today_section(rows, [], 2, meta, expected=EXPECTED,
                                  is_installed=lambda n: False)
    assert all(e["missing"] == "not installed" for e in ents)
    assert "| glibc | private heaps with ownership | not installed |" in "\n".join(lines)


def test_expected_classes_are_data_with_a_source():
    for name, x in R.EXPECTED.items():
        assert name in allocators.PRODUCTION
        assert x["source"] and x["category"]
        for k in T.TODAY_KEYS:
            assert x[k] is None or x[k] <= {"yes", "no", "maybe", "O(1)", "O(P)", "unbounded"}


# --- the sweep: only where named, left out when not installed ------------------------------------

SWEEP = """
[sweep]
name = t
strategies = serial
threads = 1
only_where_named = glibc, jemalloc
[allocators]
glibc = glibc
jemalloc = jemalloc
[workload threadtest]
[workload today-threadtest]
workload = threadtest
allocators = glibc, jemalloc
"""


def test_sweep_only_where_named(monkeypatch):
    def lib(name):
        if name == "jemalloc":
            raise common.ToolError("jemalloc: not installed")
        return None
    monkeypatch.setattr(variants, "production_library", lib)
    sw = sweepmod.Sweep(SWEEP, ncores=2, strategies=["serial"])
    assert sw.not_installed == ["jemalloc"]
    got = sorted((r["allocator"], r["workload_label"]) for r in sw.expand())
    assert got == [("glibc", "today-threadtest"), ("serial", "threadtest")]
    with pytest.raises(common.ToolError, match="only_where_named"):
        sweepmod.Sweep(SWEEP.replace("glibc, jemalloc\n[allocators]", "glibc, serial\n"
                                     "[allocators]"), ncores=2, strategies=["serial"])


def test_a_strategy_shows_the_outside_census_beside_its_own():
    from hoardlab_lib import verdicts as V
    rows = [row("h", "census-active-false", 2, 1.0, kind="hoardlab", **{
        "knob.census": "on", "params.census": 1, "hoardlab.census_false_blocks": 5,
        "extra.census_false_blocks": 4})]
    v = V.false_sharing(rows, "h", 2)
    assert v["value"] == "no"
    assert "census: census-active-false 5" in v["evidence"]
    assert "from outside the allocator (harness/census.c, not used): census-active-false 4" \
        in v["evidence"]


def test_throughput_tables_show_today_runs_beside_the_strategies(tmp_path):
    """today-<label> runs are rows of <label>'s throughput table (and of the production
    comparison), never a section of their own."""
    from hoardlab_lib import report
    rows, rounds = fixture_rows()
    meta = {"sweep": {"name": "taxonomy", "baseline": "serial"}}
    path, _ = report.write(str(tmp_path), rows, rounds, meta, [], [])
    text = open(path).read()
    assert "### today-" not in text
    tput = text[text.index("## Throughput"):]
    table = tput[tput.index("### threadtest"):].split("\n\n#")[0]
    assert "| glibc | 150 " in table and "| serial | 100 " in table

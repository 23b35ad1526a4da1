"""The report's noise (issue 25, "noise that decides"): every median cell with its spread in
one notation, the header naming the noisiest groups, runs under the floor flagged, one rule
for thread counts, and threads as run (xfree). Synthetic rows."""
import itertools
import math
import re

from hoardlab_lib import fmt, report, verdicts as V
from hoardlab_lib.report import header, knobs, memory, throughput, ucpp

_ids = itertools.count()


def row(variant, wl, t, thr, rep=0, wall=0.5, **extra):
    r = {"index": next(_ids), "variant": variant, "strategy": variant, "alloc_kind": "hoardlab",
         "workload": wl, "workload_label": wl, "threads": t, "throughput": thr,
         "status": "ok", "repetition": rep, "knobs": "", "wall_s": wall, "peak_rss_kb": 1000,
         "hoardlab.held_bytes_peak": 2 << 20, "hoardlab.in_use_peak": 1 << 20,
         "hoardlab.fragmentation": 2.0}
    r.update(extra)
    return r


def sweep_rows():
    rows = []
    for v, k in (("serial", 1.0), ("hoard", 1.5)):
        for t in (1, 2, 4):
            for rep, f in enumerate((0.98, 1.0, 1.02)):
                rows.append(row(v, "threadtest", t, 100 * k * t * f, rep))
    # the noisiest group: hoard on larson at t=2, 100 vs 920
    rows += [row("hoard", "larson", 2, x, rep) for rep, x in enumerate((100, 920, 400))]
    # xfree: threads = 2 runs 4 threads, and its runs are short
    rows += [row("hoard", "xfree", 2, 50, rep, wall=0.04,
                 **{"extra.producers": 2, "extra.consumers": 2}) for rep in range(2)]
    return rows


def test_pm_is_the_one_notation():
    assert fmt.pm(V.spread_of([95, 100, 104])) == "100 ±5%"
    assert fmt.pm(V.spread_of([1.0]), "%.2f") == "1.00 ±?"
    assert fmt.pm(None) == "–"
    assert fmt.iv(V.spread_of([0.9, 1.0, 1.2])) == "1.00 [0.90, 1.20]"


def test_mark_within_noise():
    assert fmt.mark(True) == "agrees"
    assert fmt.mark(False) == "**MISMATCH**"
    assert fmt.mark(None) == "within noise"


def test_header_names_noisiest_groups_short_runs_and_thread_rule():
    meta = {"machine": {"cores": 2}, "sweep": {"name": "t"}}
    text = "\n".join(header.header(meta, sweep_rows(), "t"))
    assert "- spread: " in text and "±p%" in text
    assert "- noise decides: " in text and "within noise" in text
    noise = next(ln for ln in text.splitlines() if ln.startswith("- run-to-run noise"))
    assert "noisiest: hoard on larson at t=2 9.20" in noise
    short = next(ln for ln in text.splitlines() if "**short runs**" in ln)
    assert "hoard on xfree at t=2 0.040 s" in short and "0.1 s" in short
    threads = next(ln for ln in text.splitlines() if ln.startswith("- thread counts:"))
    assert "Here P = 2 (2 cores)" in threads
    assert "xfree t=2 ran 4 threads" in text


def test_every_median_cell_has_its_spread(tmp_path):
    rows = sweep_rows()
    lines = "\n".join(throughput.throughput_tables(rows, "serial") +
                      memory.memory_tables(rows)).splitlines()
    cells = [c.strip() for ln in lines if ln.startswith("| ") and not ln.startswith("| allocator")
             and not ln.startswith("| workload") for c in ln.strip("|").split("|")]
    numeric = [c for c in cells if re.match(r"^[0-9.]+[kMG]?( |$)", c)]
    assert numeric
    bare = [c for c in numeric if "±" not in c and not re.search(r" \[[0-9.]+[kMG]?, ", c)
            and not re.match(r"^\d+( \(\d+ threads run\))?$", c)]
    assert bare == [], bare                      # thread counts aside, every number has ± (or
    assert "400 [100, 920]" in numeric           # its interval, above 100%)
    thr = "\n".join(throughput.throughput_tables(rows, "serial"))
    assert "t=2 (4 threads run)" in thr          # xfree's columns say what ran
    assert "(short)" in thr


def test_knob_section_uses_p_and_says_so():
    rows = []
    for val, k in (("off", 1.0), ("on", 2.0)):
        for t in (1, 2, 4):
            for rep in range(2):
                rows.append(row("c-" + val, "ucpp-unique", t, 100 * k * t + rep, rep,
                                **{"knob.padding": val, "strategy": "concurrent"}))
    text = "\n".join(knobs.knob_section(rows, {"machine": {"cores": 2}}))
    line = next(ln for ln in text.splitlines() if ln.startswith("| ucpp-unique"))
    assert line.startswith("| ucpp-unique | concurrent | 2 |")      # P = 2, not 4
    assert "±" in line and "at P (the thread-count rule" in text


def test_ucpp_checks_decide_by_interval():
    def conc(val, t, xs):
        return [row("c-" + val, "ucpp-unique", t, x, rep, strategy="concurrent",
                    **{"knob.padding": val}) for rep, x in enumerate(xs)]
    # off: S from [100,100] to [40,60] -> [0.4, 0.6] < 1 agrees; on: [90,110] over [100,100]
    # -> [0.9, 1.1] reaches 1: within noise
    rows = conc("off", 1, (100, 100)) + conc("off", 2, (40, 60)) + \
        conc("on", 1, (100, 100)) + conc("on", 2, (90, 110))
    text = "\n".join(ucpp.ucpp(rows, 2))
    assert "S < 1): S = 0.50 [0.40, 0.60] — agrees" in text
    assert "— within noise" in text


def test_knob_table_says_when_a_value_changes_nothing_beyond_noise():
    # tlab_budget under a strategy that ignores it: 117M against 85M, but each value's runs
    # spread from 80M to 120M, so the ratio's interval contains 1
    rows = []
    for val, xs in (("16K", (80e6, 85e6, 118e6)), ("256K", (84e6, 117e6, 120e6)),
                    ("1M", (300e6, 310e6, 320e6))):
        for rep, x in enumerate(xs):
            rows.append(row("h-" + val, "larson", 2, x, rep, strategy="hoard",
                            **{"knob.tlab_budget": val}))
    text = "\n".join(knobs.knob_section(rows, {"machine": {"cores": 2}}))
    line = next(ln for ln in text.splitlines() if ln.startswith("| larson"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    head = next(ln for ln in text.splitlines() if ln.startswith("| workload"))
    col = {c.strip(): i for i, c in enumerate(head.strip("|").split("|"))}
    assert "within noise" in cells[col["tlab_budget=256K"]]
    assert "117M" in cells[col["tlab_budget=256K"]]
    assert "within noise" not in cells[col["tlab_budget=1M"]]      # 3.6x, far outside
    assert "x3.65" in cells[col["tlab_budget=1M"]]


def test_throughput_speedup_column_at_p():
    text = "\n".join(throughput.throughput_tables(sweep_rows(), "serial", ncores=2))
    assert "| allocator | t=1 | t=2 | t=4 | speedup t=2 / t=1 |" in text
    assert "| serial | 100 ±2% | 200 ±2% | 400 ±2% | 2.00 ±4% |" in text


def test_a_spread_over_100_percent_is_an_interval():
    assert fmt.pm(V.spread_of([0.08, 1.0, 12.0]), "%.2f") == "1.00 [0.08, 12.00]"
    assert fmt.pm(V.spread_of([0.5, 1.0, 2.0]), "%.2f") == "1.00 ±100%"


def test_knob_table_reference_is_the_baseline_else_the_default():
    # list is alphabetically first; lock is remote_free's default and, here, the baseline's
    rows = []
    for val, x in (("list", 200.0), ("lock", 100.0), ("queue", None)):
        for rep in range(2):
            rows.append(row("h-" + val, "larson", 2, x, rep, strategy="hoard",
                            **{"knob.remote_free": val}))
    default = {"machine": {"cores": 2},
               "config_table": [{"name": "remote_free", "default": "lock"}]}
    for meta, why in ((default, "the default"),
                      ({"machine": {"cores": 2}, "sweep": {"baseline": "h-lock"}},
                       "the baseline `h-lock`'s")):
        text = "\n".join(knobs.knob_section(rows, meta))
        head = next(ln for ln in text.splitlines() if ln.startswith("| workload"))
        assert head.split("|")[4].strip() == "remote_free=lock"
        assert "remote_free=queue" not in head          # never measured: no column
        line = next(ln for ln in text.splitlines() if ln.startswith("| larson"))
        assert "(x2.00" in line.split("|")[5]           # list against lock, not 0.50
        assert "reference `remote_free=lock` (%s;" % why in text


def test_a_sweep_of_one_knob_leads_with_its_section():
    one = [row("h", "larson", 2, 1.0, 0, strategy="hoard", **{"knob.tlab": v})
           for v in ("on", "off")]
    order = report.leading_knob(report.SECTIONS, one)
    assert order[2] is report.KNOB_SECTION and len(order) == len(report.SECTIONS)
    two = [dict(r, **{"knob.lock": v}) for r, v in zip(one, ("spin", "mutex"))]
    assert report.leading_knob(report.SECTIONS, two) is report.SECTIONS


def test_more_repetitions_can_narrow_a_medians_interval():
    from hoardlab_lib.verdicts import noise
    # up to 8 repetitions the interval is min-max (every reference made with 3-5 is unchanged)
    assert [noise.order_k(n) for n in range(1, 9)] == [1] * 8
    assert [noise.order_k(n) for n in (9, 11, 12, 14, 20)] == [2, 2, 3, 4, 6]
    # the confidence never falls below min-max's over 5 repetitions (15/16)
    for n in range(5, 40):
        k = noise.order_k(n)
        miss = 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n
        assert 1 - miss >= noise.MEDIAN_CONFIDENCE
    # one run on a slow moment keeps 5 repetitions within noise, whatever is added under
    # min-max; with 4 more ordinary ones the interval leaves the slow run out and decides
    five = [1.30, 1.32, 1.28, 1.31, 0.95]
    assert V.check(V.spread_of(five), ">", 1.0) is None
    nine = five + [1.29, 1.33, 1.30, 1.27]
    assert V.spread_of(nine)[1:3] == (1.27, 1.32) and V.check(V.spread_of(nine), ">", 1.0)

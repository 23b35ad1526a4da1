"""The verdict rules on small hand-made tables (made-up numbers are allowed only here)."""
import itertools

from hoardlab_lib import verdicts as V, paper

_ids = itertools.count()


def row(variant, wl, t, thr=None, strategy=None, census=None, a=None, u=None, status="ok",
        knobs="", census_paper=None):
    r = {"index": next(_ids), "variant": variant, "strategy": strategy or variant.split("+")[0],
         "alloc_kind": "hoardlab", "workload": wl.replace("census-", ""), "workload_label": wl,
         "threads": t, "throughput": thr, "status": status, "repetition": 0, "knobs": knobs,
         "hoardlab.os_bytes_peak": a, "hoardlab.in_use_peak": u, "peak_rss_kb": None}
    if census is not None:
        r["knob.census"] = "on"
        r["hoardlab.census_false_blocks"] = census
        r["hoardlab.census_paper"] = census_paper
    return r


def rounds_for(r, mem, live=100):
    return [{"index": r["index"], "round": i, "os_bytes": m, "live_bytes": live, "rss_kb": None}
            for i, m in enumerate(mem)]


# --- fast? --------------------------------------------------------------------------------

def test_fast_against_serial():
    rows = [row("serial", "threadtest", 1, 100), row("serial", "larson", 1, 100),
            row("a", "threadtest", 1, 90), row("a", "larson", 1, 80),     # gmean 0.85
            row("b", "threadtest", 1, 70), row("b", "larson", 1, 80),     # gmean 0.75
            row("b", "blowup-roundrobin", 1, 1000)]                      # not a speed workload
    assert V.fast(rows, "a", "serial")["value"] == "yes"
    assert V.fast(rows, "b", "serial")["value"] == "no"
    assert V.fast(rows, "serial", "serial")["value"] == "yes"
    assert V.fast(rows, "a", None)["value"] == "undecided"
    assert V.fast([row("c", "threadtest", 2, 5)], "c", "serial")["value"] == "undecided"


def test_fast_uses_medians_and_ignores_failures_and_census():
    rows = [row("serial", "threadtest", 1, x) for x in (100, 101, 99)] + \
        [row("a", "threadtest", 1, x) for x in (79, 78, 76)] + \
        [row("a", "threadtest", 1, 1000, status="failed"),
         row("a", "census-threadtest", 1, 1000, census=0)]
    assert V.fast(rows, "a", "serial")["value"] == "no"       # median 79 / 100


# --- scalable? ------------------------------------------------------------------------------

def scaling(variant, s, tmax=2):
    return [row(variant, wl, 1, 100) for wl in V.SCALE_WORKLOADS] + \
           [row(variant, wl, tmax, 100 * s) for wl in V.SCALE_WORKLOADS]


def test_scalable_classes_on_two_cores():
    for s, want in ((1.9, "yes"), (1.55, "yes"), (1.3, "maybe"), (1.1, "no"), (0.6, "no"),
                    (1.5, V.WITHIN_NOISE)):      # exactly at a threshold decides nothing
        v = V.scalable(scaling("x", s), "x", ncores=2)
        assert v["value"] == want, (s, v)
        assert "2 cores" in v["note"]


def test_scalable_ideal_is_capped_by_cores():
    # 8 threads on 4 cores: ideal 4; S = 2.6 -> gain 0.53 -> yes; S = 1.3 -> gain 0.1 -> no
    assert V.scalable(scaling("x", 2.6, 8), "x", ncores=4)["value"] == "yes"
    assert V.scalable(scaling("x", 1.3, 8), "x", ncores=4)["value"] == "no"
    assert V.scalable(scaling("x", 2.6, 8), "x", ncores=4)["note"] == ""


def test_scalable_undecided():
    assert V.scalable(scaling("x", 1.0), "x", ncores=1)["value"] == "undecided"
    assert V.scalable([row("x", "threadtest", 1, 100)], "x", 2)["value"] == "undecided"


# --- avoids false sharing? ------------------------------------------------------------------

def test_false_sharing_census_rule():
    rows = [row("h", "census-threadtest", 2, 1, census=0),
            row("h", "census-active-false", 2, 1, census=0),
            row("s", "census-threadtest", 2, 1, census=0),
            row("s", "census-passive-false", 2, 1, census=3),
            row("one", "census-threadtest", 1, 1, census=0),         # 1 thread: no evidence
            row("h", "census-larson", 2, 1, census=9, census_paper=0)]  # program-shared
    h = V.false_sharing(rows, "h", 2)
    assert h["value"] == "yes" and "not used (the program shares lines): census-larson 9" \
        in h["evidence"]
    rows[-1]["hoardlab.census_paper"] = 2        # ... but the paper's measure counts there
    h = V.false_sharing(rows, "h", 2)
    assert h["value"] == "no" and "by the paper's measure: census-larson 2" in h["evidence"]
    s = V.false_sharing(rows, "s", 2)
    assert s["value"] == "no" and "passively" in s["note"]
    assert V.false_sharing(rows, "one", 2)["value"] == "undecided"


def test_false_sharing_timing_fallback():
    def fs(v, s):
        return [row(v, w, 1, 100) for w in V.FS_TIMING_WORKLOADS] + \
               [row(v, w, 2, 100 * s) for w in V.FS_TIMING_WORKLOADS]
    assert V.false_sharing(fs("g", 1.8), "g", 2)["value"] == "yes"
    assert V.false_sharing(fs("b", 1.2), "b", 2)["value"] == "no"
    assert V.false_sharing(fs("c", 1.8), "c", 1)["value"] == "undecided"


# --- blowup ------------------------------------------------------------------------------------

def test_blowup_unbounded_over_rounds():
    r = row("p", "blowup-prodcons", 2, 1, a=800, u=100)
    rounds = rounds_for(r, [100 * (i + 1) for i in range(8)])
    assert V.blowup([r], rounds, "p", None)["value"] == "unbounded"
    # the same growth of memory is not blowup when the live bytes grew with it
    grow = [dict(x, live_bytes=x["os_bytes"]) for x in rounds]
    assert V.blowup([r], grow, "p", None)["value"] == "undecided"


def test_blowup_over_rounds_within_noise_when_repetitions_straddle_the_line():
    rs = [dict(row("p", "blowup-prodcons", 2, 1, a=800, u=100), repetition=i) for i in range(3)]
    rounds = []
    for r, last in zip(rs, (140, 160, 180)):     # x1.4, x1.6, x1.8 from round 2 (n/4 of 8)
        rounds += rounds_for(r, [100] * 3 + [100 + (last - 100) * k // 5 for k in range(1, 6)])
    v = V.blowup(rs, rounds, "p", None)
    assert v["value"] == V.WITHIN_NOISE and v["repeat"] == [("blowup-prodcons", 2)], v
    assert "rounds x1.60 [1.40, 1.80]" in v["evidence"]
    assert V.blowup(rs[1:], rounds, "p", None)["value"] == "unbounded"


def rr_rows(variant, a_by_t):
    return [row(variant, "blowup-roundrobin", t, 1, a=a, u=100) for t, a in a_by_t.items()]


def test_blowup_over_p():
    serial = rr_rows("serial", {1: 100, 2: 100, 4: 100})
    own = rr_rows("own", {1: 100, 2: 200, 4: 400})      # x4: needs >= 2.5 -> O(P)
    hoard = rr_rows("hoard", {1: 110, 2: 120, 4: 150})  # x1.36 -> O(1)
    rows = serial + own + hoard
    flat = [x for r in rows for x in rounds_for(r, [r["hoardlab.os_bytes_peak"]] * 6)]
    assert V.blowup(rows, flat, "own", "serial")["value"] == "O(P)"
    assert V.blowup(rows, flat, "hoard", "serial")["value"] == "O(1)"
    assert V.blowup(rows, flat, "serial", "serial")["value"] == "O(1)"
    # without serial, A/U stands in for the blowup
    assert V.blowup(own + hoard, flat, "own", None)["value"] == "O(P)"


def test_blowup_undecided():
    assert V.blowup([row("x", "threadtest", 1, 1)], [], "x", None)["value"] == "undecided"
    one = rr_rows("x", {2: 100})
    assert V.blowup(one, [], "x", None)["value"] == "undecided"


# --- the taxonomy and its comparison with Table 7 ----------------------------------------------

def test_taxonomy_flags_mismatches_only_where_decided():
    rows = scaling("serial", 0.7) + scaling("hoard", 1.1) + scaling("private", 1.9)
    rows += [row("hoard", "census-threadtest", 2, 1, census=5),
             row("private", "census-threadtest", 2, 1, census=5)]
    tax = {e["variant"]: e for e in V.taxonomy(rows, [], ncores=2)}
    assert tax["serial"]["mismatches"] == []
    # hoard measured not scalable and with false sharing: both contradict Table 7
    assert set(tax["hoard"]["mismatches"]) == {"scalable", "false_sharing"}
    assert tax["hoard"]["blowup"]["value"] == "undecided"
    assert "blowup" not in tax["hoard"]["mismatches"]
    assert tax["private"]["mismatches"] == []


def test_paper_table7_is_complete_and_static():
    for s in ("serial", "concurrent", "private", "ownership", "hoard"):
        c = paper.claim(s)
        assert set(c) >= {"fast", "scalable", "false_sharing", "blowup", "category"}
    assert paper.claim("hoard")["blowup"] == {"O(1)"}
    assert paper.claim("private")["blowup"] == {"unbounded"}
    assert paper.claim("concurrent")["scalable"] == {"maybe"}
    assert paper.claim("nosuch") is None


def test_rules_text_states_the_thresholds():
    assert "%.2f" % V.FAST_MIN_RATIO in V.RULES["fast"]
    assert "%.2f" % V.SCALE_YES_GAIN in V.RULES["scalable"]
    assert "0 falsely-shared" in V.RULES["false_sharing"]
    assert "%.1f" % V.ROUNDS_GROWTH in V.RULES["blowup"]


# --- the report renders verdicts, mismatches, failures and warnings ---------------------------

def test_report_flags_mismatches_failures_and_noise(tmp_path):
    from hoardlab_lib import report
    rows = scaling("serial", 0.7) + scaling("hoard", 1.1)
    rows += [row("hoard", "census-threadtest", 2, 1, census=5, census_paper=3)]
    noisy = [row("hoard", "larson", 1, x) for x in (100, 300)]
    failed = [row("hoard", "larson", 2, None, status="failed")]
    failed[0].update(exit_code=2, error="hoardlab: bad value")
    meta = {"machine": {"cores": 2, "loadavg_start": [9.0, 1, 1]}, "sweep": {"name": "t"}}
    path, tax = report.write(str(tmp_path), rows + noisy + failed, [], meta, [], [])
    text = open(path).read()
    assert "| hoard | yes | yes | **no** | yes | **no** | yes | undecided | O(1) |" in text
    assert "**MISMATCH**" in text
    assert "hoard on threadtest: paper's measure 3, broad 5; paper 0" in text
    assert "| census-threadtest | 5 / 3 (t=2) |" in text or "5 / 3 (t=2)" in text
    assert "hoardlab: bad value" in text and "| failed | 2 |" in text
    assert "busy or noisy" in text and "load average 9.0 on 2 cores" in text
    for k in V.RULES.values():
        assert k in text


def test_report_tells_own_noise_from_other_load(tmp_path):
    """Noisy repetitions with other processes watched and never busy: the machine's own noise,
    not a busy machine (no advice to rerun idle); a busy run among them keeps the warning."""
    from hoardlab_lib import report
    rows = scaling("serial", 0.7) + [row("hoard", "larson", 1, x) for x in (100, 300)]
    meta = {"machine": {"cores": 2}, "sweep": {"name": "t"},
            "load": {"busy_cpus": 0.5, "quiet_wait_s": 5}}
    text = open(report.write(str(tmp_path), rows, [], meta, [], [])[0]).read()
    assert "own run-to-run noise" in text and "busy or noisy" not in text
    rows[-1]["load.busy"] = True
    text = open(report.write(str(tmp_path), rows, [], meta, [], [])[0]).read()
    assert "busy or noisy" in text and "own run-to-run noise" not in text


# --- the best production allocator ----------------------------------------------------------

def prod(variant, wl, t, thr):
    r = row(variant, wl, t, thr)
    r["alloc_kind"] = "production"
    return r


def test_best_production_allocator_is_the_best_of_all_per_workload():
    from hoardlab_lib.report import production
    rows = [prod("glibc", "threadtest", 1, 50), prod("mimalloc", "threadtest", 1, 80),
            prod("mimalloc3", "threadtest", 1, 120), prod("jemalloc", "threadtest", 1, 90),
            prod("glibc", "larson", 1, 70), prod("mimalloc", "larson", 1, 60),
            prod("mimalloc3", "larson", 1, 65), prod("jemalloc", "larson", 1, 10),
            dict(prod("mimalloc3", "larson", 1, 1000), status="failed"),   # excluded
            prod("mimalloc3", "blowup-prodcons", 2, 500),              # memory: not ranked
            row("hoard", "threadtest", 1, 60), row("hoard", "larson", 1, 70)]
    rank = V.production_ranking(rows)
    assert rank[("threadtest", 1)][0] == ("mimalloc3", 120)
    assert [v for v, _ in rank[("threadtest", 1)]] == ["mimalloc3", "jemalloc", "mimalloc",
                                                      "glibc"]
    assert rank[("larson", 1)][0] == ("glibc", 70)
    assert ("blowup-prodcons", 2) not in rank
    sec = "\n".join(production.production_section(rows))
    assert "## Against the best production allocator" in sec
    assert "| threadtest | 1 | mimalloc3 120 ±? | jemalloc (0.75 ±?) | 0.50 ±? |" in sec
    assert "| larson | 1 | glibc 70 ±? | mimalloc3 (0.93 ±?) | 1.00 ±? |" in sec
    assert "mimalloc3 1" in sec and "glibc 1" in sec and "not ranked" in sec
    # One production allocator: the throughput tables relative to it say it all.
    assert production.production_section([prod("glibc", "threadtest", 1, 5),
                                      row("hoard", "threadtest", 1, 6)]) == []


# --- Hoard's Table 4: a row per thread count, the why-not from the other thread counts ------

def test_table4_a_row_per_thread_count_and_why_from_the_others():
    from hoardlab_lib.report import hoard as RH

    def frag(t, a_over_u, knobs):
        r = row("hoard", "shbench", t, 100, a=int(a_over_u * 500000), u=500000, knobs=knobs)
        r.update({"hoardlab.held_bytes_peak": r["hoardlab.os_bytes_peak"],
                  "hoardlab.fragmentation": a_over_u, "hoardlab.fragmentation_os": a_over_u})
        return r
    rows = [frag(2, 1.44, "empty_fraction=1/4"), frag(2, 1.44, "empty_fraction=1/4"),
            frag(14, 2.44, "empty_fraction=1/4;heaps=28")]
    text = "\n".join(RH.table4(rows))
    lines = [ln for ln in text.splitlines() if ln.startswith("| shbench")]
    assert len(lines) == 2                       # heaps=28 is the machine, not the policy
    t2, t14 = lines
    assert t2.startswith("| shbench (t=2) | class |") and "| 1.44 ±0% |" in t2
    assert "**MISMATCH**" in t2
    assert "A/U is 2.44 at t=14, heaps=28 (U 0.48 MiB): at about the same U" in t2
    assert t14.startswith("| shbench (t=14, heaps=28) | class |") and "| agrees |" in t14
    assert "threadtest | class | – |" in text          # a workload not measured says so


# --- noise decides --------------------------------------------------------------------------

def reps(variant, wl, t, values):
    return [dict(row(variant, wl, t, x), repetition=i) for i, x in enumerate(values)]


def test_check_decides_only_outside_the_interval():
    s = V.spread_of([1.10, 1.19, 1.40])
    assert (s.med, s.lo, s.hi, s.n) == (1.19, 1.10, 1.40, 3)
    assert V.check(s, "<=", 1.15) is None                 # 1.15 inside [1.10, 1.40]
    assert V.check(V.spread_of([1.16, 1.19, 1.21]), "<=", 1.15) is False
    assert V.check(V.spread_of([1.01, 1.02, 1.03]), "<=", 1.15) is True
    assert V.check(1.05, ">=", 1.05) is None              # exactly at the threshold
    assert V.check(1.06, ">=", 1.05) is True
    assert V.check_between(V.spread_of([0.9, 1.0]), 0.8, 1.2) is True
    assert V.check_between(V.spread_of([1.1, 1.3]), 0.8, 1.2) is None
    assert V.check_between(V.spread_of([1.3, 1.4]), 0.8, 1.2) is False


def test_ratio_interval_from_both_groups():
    r = V.ratio(V.spread_of([90, 100, 110]), V.spread_of([50, 50, 55]))
    assert r.med == 2.0 and abs(r.lo - 90 / 55) < 1e-9 and abs(r.hi - 110 / 50) < 1e-9
    assert V.differ(V.spread_of([100, 104]), V.spread_of([98, 102])) is None   # inside
    assert V.differ(V.spread_of([150, 160]), V.spread_of([98, 102])) is True   # outside
    assert V.ratio(V.spread_of([1]), V.spread_of([0])) is None


def test_ratio_interval_drops_the_extreme_ratios_at_five_repetitions():
    a = V.spread_of([100, 101, 102, 103, 150])          # one slow-machine outlier each side
    b = V.spread_of([50, 51, 52, 53, 20])
    r = V.ratio(a, b)
    assert V.rank_sum_k(5, 5) == 4                      # 1 - 2 * 7/252 >= 15/16
    assert V.rank_sum_k(3, 3) == 1                      # too few: every ratio, as before
    assert r.hi < 150 / 20 and r.lo > 100 / 53          # neither extreme pair decides
    assert r.lo <= r.med <= r.hi
    assert V.differ(a, b) is True                       # min-max of both: 100/53 .. 7.5


def test_intervals_miss_no_difference_about_once_in_sixteen():
    """Two groups from one distribution (a machine's multiplicative noise, log-normal
    30 %): the ratio's interval must contain 1, and the geometric mean of 4 such ratios'
    interval too, all but about 1 time in 16 — more often means intervals too narrow to
    trust, never means too wide to decide."""
    import random
    rnd = random.Random(7)
    draw = lambda n: [100 * rnd.lognormvariate(0, 0.3) for _ in range(n)]
    tries, miss_ratio, miss_gmean = 400, 0, 0
    for _ in range(tries):
        rs = [V.ratio(V.spread_of(draw(5)), V.spread_of(draw(5))) for _ in range(4)]
        miss_ratio += not rs[0].lo <= 1 <= rs[0].hi
        g = V.gmean_spread(rs)
        miss_gmean += not g.lo <= 1 <= g.hi
    assert 0 < miss_ratio / tries <= 0.1
    assert 0 < miss_gmean / tries <= 0.1


def test_fast_within_noise_and_outside_it():
    ref = reps("serial", "threadtest", 1, (100, 100, 100))
    inside = reps("a", "threadtest", 1, (70, 79, 95))        # 0.79, but up to 0.95
    outside = reps("b", "threadtest", 1, (70, 72, 75))       # wholly below 0.80
    rows = ref + inside + outside
    assert V.fast(rows, "a", "serial")["value"] == V.WITHIN_NOISE
    assert V.fast(rows, "b", "serial")["value"] == "no"
    assert "[0.70, 0.75]" in V.fast(rows, "b", "serial")["evidence"]


def test_scalable_within_noise():
    rows = []
    for wl in V.SCALE_WORKLOADS:
        rows += reps("x", wl, 1, (100, 100)) + reps("x", wl, 2, (110, 190))  # gain 0.1-0.9
    assert V.scalable(rows, "x", 2)["value"] == V.WITHIN_NOISE
    tax = V.taxonomy(rows, [], 2)
    assert "scalable" not in tax[0]["mismatches"]          # within noise is no mismatch


def test_noisiest_and_short_groups():
    rows = reps("a", "larson", 2, (100, 140)) + reps("b", "larson", 2, (100, 101)) + \
        reps("c", "threadtest", 1, (100, 920))
    for r, w in zip(rows, (0.5, 0.5, 0.04, 0.05, 0.3, 0.3)):
        r["wall_s"] = w
    assert [k for k, _ in V.noisiest(rows, 2)] == [("c", "threadtest", 1), ("a", "larson", 2)]
    assert V.short_groups(rows) == {("b", "larson", 2): 0.045}
    blow = reps("d", "blowup-roundrobin", 2, (1, 1))
    for r in blow:
        r["wall_s"] = 0.01
    assert V.short_groups(blow) == {}                      # memory workloads are not timed


def test_thread_rule_and_threads_run():
    assert V.timing_threads([1, 2, 4], 2) == 2
    assert V.timing_threads([4, 8], 2) == 4
    assert V.timing_threads([], 2) is None
    r = dict(row("h", "xfree", 4, 1), **{"extra.producers": 4, "extra.consumers": 4})
    assert V.threads_run(r) == 8
    assert V.threads_run(row("h", "larson", 4, 1)) == 4
    assert V.threads_text([r], "xfree", 4) == "4 (8 threads run)"
    assert V.threads_text([row("h", "larson", 4, 1)], "larson", 4) == "4"


def test_scalable_uses_p_not_an_oversubscribed_count():
    rows = scaling("x", 1.9, 2) + [row("x", wl, 4, 50) for wl in V.SCALE_WORKLOADS]
    v = V.scalable(rows, "x", ncores=2)
    assert v["value"] == "yes" and "at 2 threads" in v["evidence"]


def test_tables_5_6_checks_within_noise_and_decided():
    from hoardlab_lib.report import hoard as RH

    def run(f, thr, frag_, i):
        r = row("hoard-%s" % f.replace("/", ""), "larson", 2, thr, strategy="hoard",
                knobs="empty_fraction=%s" % f, a=int(frag_ * 1e6), u=1000000)
        r.update({"hoardlab.fragmentation": frag_, "repetition": i})
        return r
    # throughput max/min over f is 1.19, but the runs of each f spread over 1.40: within
    # noise; A/U rises from 1.00 to exactly 1.05: at the threshold, within noise too
    rows = [run("1/8", x, 1.0, i) for i, x in enumerate((100, 80, 112))] + \
        [run("1/4", x, 1.0, i) for i, x in enumerate((119, 100, 125))] + \
        [run("1/2", x, 1.05, i) for i, x in enumerate((105, 95, 110))]
    text = "\n".join(RH.table56(rows))
    flat = next(ln for ln in text.splitlines() if "max/min over f" in ln)
    rise = next(ln for ln in text.splitlines() if "at f=1/2 is" in ln)
    assert "max/min over f = 1.19 [0.89, 1.56]" in flat and "— within noise" in flat
    assert "— within noise" in rise and "agrees" not in rise
    # clearly outside: a flat f with tight runs agrees, a rise of 1.20 agrees, 0.90 does not
    rows = [run(f, x, a, i) for f, a in (("1/8", 1.0), ("1/4", 1.0), ("1/2", 1.2))
            for i, x in enumerate((100, 101, 102))]
    text = "\n".join(RH.table56(rows))
    assert "nearly unchanged (rule: <= 1.15) — agrees" in text
    assert "rule: >= 1.05) — agrees" in text
    for r in rows:
        if r["knobs"].endswith("1/2"):
            r["hoardlab.fragmentation"] = 0.9
    assert "rule: >= 1.05) — **MISMATCH**" in "\n".join(RH.table56(rows))


def test_table5_throughput_at_p_memory_at_the_highest():
    from hoardlab_lib.report import hoard as RH
    rows = []
    for f in ("1/8", "1/4"):
        for t, thr in ((2, 100), (14, 30)):
            r = row("hoard-%s" % f[2], "larson", t, thr, strategy="hoard",
                    knobs="empty_fraction=%s" % f, a=2000000, u=1000000)
            r["hoardlab.fragmentation"] = 2.0 if t == 14 else 1.5
            rows.append(r)
    text = "\n".join(RH.table56(rows, ncores=2))
    line = next(ln for ln in text.splitlines() if ln.startswith("| larson"))
    assert line.startswith("| larson (t=14) |") and "100 ±? at t=2, A/U 2.00" in line


# --- a busy machine and thread placement (issue 38) ---------------------------------------

def busy(r, b=1):
    return dict(r, **{"load.busy": b})


def test_a_verdict_never_rests_on_busy_runs():
    serial = [busy(row("serial", "threadtest", 1, x), 0) for x in (100, 101, 99)]
    # every run of a was disturbed: they alone would say no, the quiet runs cannot say
    busy_a = [busy(row("a", "threadtest", 1, x)) for x in (40, 41, 42, 43, 44)]
    e = {x["variant"]: x for x in V.taxonomy(serial + busy_a, [], 2)}
    assert V.fast(serial + busy_a, "a", "serial")["value"] == "no"    # all runs
    assert e["a"]["fast"]["value"] == V.BUSY_UNDECIDED
    assert "the quiet runs alone: undecided" in e["a"]["fast"]["evidence"]
    assert "fast" not in e["a"]["mismatches"]
    # quiet runs that decide: their verdict stands, whatever the busy ones said
    quiet_b = [busy(row("b", "threadtest", 1, x), 0) for x in (95, 96, 97)]
    busy_b = [busy(row("b", "threadtest", 1, x)) for x in (10, 11, 12, 13, 14, 15, 16)]
    e = {x["variant"]: x for x in V.taxonomy(serial + quiet_b + busy_b, [], 2)}
    assert e["b"]["fast"]["value"] == "yes" and "busy runs set aside" in e["b"]["fast"]["note"]


def test_a_verdict_never_rests_on_a_group_thinned_to_one_quiet_run():
    """Setting busy runs aside must not leave a verdict resting on one run, as if exact: the
    busy main run of 2026-11-27 decided lockfree scalable? from S = 1.80 with no interval."""
    serial = [busy(row("serial", "threadtest", 1, x), 0) for x in (100, 101, 99)]
    c = [busy(row("c", "threadtest", 1, x), 0) for x in (95, 96, 97)] + \
        [busy(row("c", "threadtest", 1, x)) for x in (10, 11)]
    e = {x["variant"]: x for x in V.taxonomy(serial + c, [], 2)}
    assert e["c"]["fast"]["value"] == "yes"                # three quiet runs: decided
    thin = c[2:]                                           # one quiet run left
    e = {x["variant"]: x for x in V.taxonomy(serial + thin, [], 2)}
    assert e["c"]["fast"]["value"] == V.BUSY_UNDECIDED
    assert "one quiet run left in c on threadtest at t=1" in e["c"]["fast"]["evidence"]
    from hoardlab_lib.sweeps import undecided
    assert ("c", "threadtest", 1) in undecided.undecided_groups(serial + thin, [], 2)


def test_false_sharing_under_cpu_heap_selection_says_it_depends_on_placement():
    rows = [row("h", "census-threadtest", 2, census=3), row("h", "threadtest", 1, 100)]
    rows = [dict(r, strategy="hoard", pin=0) for r in rows]     # hoard: the paper says yes
    e = V.taxonomy(rows, [], 2, placement={"h"})[0]
    assert e["false_sharing"]["value"] == "no"
    assert V.PLACEMENT_NOTE in e["false_sharing"]["note"]
    assert "false_sharing" not in e["mismatches"]          # the paper says yes: not held against
    pinned = V.taxonomy([dict(r, pin=1) for r in rows], [], 2, placement={"h"})[0]
    assert V.PLACEMENT_NOTE not in pinned["false_sharing"]["note"]
    assert "false_sharing" in pinned["mismatches"]


def test_beside_a_load_that_never_stops_every_timing_verdict_says_why():
    rows = [busy(row("serial", "threadtest", t, x)) for t, x in ((1, 100), (1, 120), (2, 90))] + \
        [busy(row("a", "threadtest", t, x)) for t, x in ((1, 70), (1, 110), (2, 150), (2, 80))]
    e = {x["variant"]: x for x in V.taxonomy(rows, [], 2)}
    assert e["serial"]["fast"]["value"] == "yes"                 # the reference, by definition
    assert e["a"]["fast"]["value"] == V.BUSY_UNDECIDED           # all runs: within noise
    assert e["a"]["scalable"]["value"] == V.BUSY_UNDECIDED
    assert e["a"]["false_sharing"]["value"] == "undecided"       # no data at all: not the load


def test_a_no_shows_what_was_counted_where_the_speed_fell():
    """scalable? no and fast? no name the workloads whose speed fell and what their records
    counted there: locks and contended locks per operation, remote frees per operation, and
    the census's false-sharing lines; "none counted" where the records hold no statistics."""
    rows = [row("serial", wl, 1, 100) for wl in ("threadtest", "larson")]
    rows += [row("p", wl, 1, 100) for wl in V.SCALE_WORKLOADS]
    rows += [dict(row("p", "threadtest", 2, 100), ops=1000,
                  **{"hoardlab.lock_acquisitions": 1000, "hoardlab.lock_contended": 250,
                     "hoardlab.remote_frees": 0}),
             row("p", "shbench", 2, 100), row("p", "linux-scalability", 2, 100),
             row("p", "larson", 2, 160)]                      # larson scaled: not named
    census = row("p", "census-threadtest", 2, census=4)
    census["hoardlab.census_false_lines"] = 3
    rows.append(census)
    rows += [row("q", wl, t, x) for wl, t, x in (("threadtest", 1, 60), ("larson", 1, 95),
                                                   ("threadtest", 2, 120), ("larson", 2, 190))]
    tax = {e["variant"]: e for e in V.taxonomy(rows, [], 2)}
    sc = tax["p"]["scalable"]
    assert sc["value"] == "no", sc
    assert "; counted where it fell: linux-scalability at t=2: " in sc["evidence"], sc
    assert "; threadtest at t=2: 1 lock acquisitions/op, 0.25 " \
        "contended/op, 0 remote frees/op, census 3 false-sharing lines" in sc["evidence"], sc
    assert "larson at t=2" not in sc["evidence"]
    assert "; shbench at t=2: none counted" in sc["evidence"]
    f = tax["q"]["fast"]                      # 0.6 and 0.95 of serial: gmean 0.75
    assert f["value"] == "no", f
    assert f["evidence"].endswith("counted where it fell: threadtest at t=1: none counted "
                                  "(no statistics in its records)"), f
    assert "counted" not in tax["p"]["fast"]["evidence"]     # a yes carries no counts
    from hoardlab_lib.report import taxonomy
    rows += [row("serial", wl, 2, 100) for wl in ("threadtest", "larson")]
    text = "\n".join(taxonomy.taxonomy_section(rows, [], 2)[0])
    assert "census 3 false-sharing lines" in text and "*counted where it fell*" in text


def test_a_claimed_effect_is_within_noise_where_the_interval_contains_1():
    """A claim of "at least 3x" (or "at most 1/3") measured as [0.8, 2.5]: the interval lies
    below the claim but also contains 1 -- no effect shown either way: within noise, never a
    mismatch. Wholly between 1 and the claim, it is decided (False)."""
    s = V.Spread(1.5, 0.8, 2.5, 5)
    assert V.check(s, ">=", 3) is False
    assert V.check_claim(s, ">=", 3) is None
    assert V.check_claim(V.Spread(0.6, 0.4, 1.2, 5), "<=", 1 / 3.0) is None
    assert V.check_claim(V.Spread(2.0, 1.5, 2.5, 5), ">=", 3) is False
    assert V.check_claim(V.Spread(4.0, 3.5, 4.5, 5), ">=", 3) is True
    assert V.check_claim(V.Spread(2.5, 2.0, 3.5, 5), ">=", 3) is None
    # a claim that holds at 1 (nearly unchanged: <= 1.15) is decided as check() decides it
    assert V.check_claim(V.Spread(1.0, 0.9, 1.1, 5), "<=", 1.15) is True
    # Table 6's rise (paper: A/U rises at f=1/2): [0.90, 1.00] shows nothing either way
    from hoardlab_lib.report import hoard as RH
    rows = []
    for f, a, ds in (("1/8", 1.0, (0, 0, 0)), ("1/4", 1.0, (0, 0, 0)),
                     ("1/2", 0.95, (-0.05, 0.0, 0.05))):
        for i, d in enumerate(ds):
            r = row("hoard-%s" % f.replace("/", ""), "larson", 2, 100, strategy="hoard",
                    knobs="empty_fraction=%s" % f, a=int((a + d) * 1e6), u=1000000)
            r.update({"hoardlab.fragmentation": a + d, "repetition": i})
            rows.append(r)
    rise = next(ln for ln in RH.table56(rows) if "at f=1/2 is" in ln)
    assert rise.endswith("— within noise") and "MISMATCH" not in rise, rise

"""The purge report's survivor patterns and churn measure (report/purge.py, issue 49) on
hand-made tidy rows (made-up numbers): a table, frontier and plot per pattern (spread: every
32nd block kept; together: the first 1/32), the aims' sentences computed from the rows
(hole purging against 0.5 held and 0.8 of purge = off's burst; hoard2026's best against the
production allocator holding least; hoard202607's budget), the collect points, and the churn
measure's table (returned 10 s after the threads exited)."""
import itertools
import json

from hoardlab_lib.report import drain as D, purge as P, survivors as S

_ids = itertools.count()
PROD = ("glibc", "jemalloc", "mimalloc3")
CHECKS = ("100ms", "1s", "5s")
SECONDS = {"100ms": "0.1", "1s": "1", "5s": "5", "10s": "10"}


def rows_of(points, pattern, reps=(0.98, 1.0, 1.02), checks=CHECKS, extra_params=None):
    """points: {variant: (strategy, knobs, held at 1 s, next burst ops/s[, collect])}."""
    key = {"spread": "keep_every", "together": "keep_first", "random": None}.get(pattern)
    rows = []
    peak = 100000
    for name, spec in points.items():
        v = name.split(" +")[0]                 # "x +c": x's rows with collect = 1
        strat, knobs, held, thr = spec[:4]
        collect = spec[4] if len(spec) > 4 else 0
        for i, f in enumerate(reps):
            r = {"index": next(_ids), "variant": v, "allocator": v, "strategy": strat,
                 "alloc_kind": "production" if strat in PROD else "hoardlab", "knobs": knobs,
                 "workload": "phased", "workload_label": pattern, "threads": 2,
                 "status": "ok", "repetition": i, "extra.next_burst_ops_per_s": thr * f,
                 "extra.spike_ops_per_s": thr / 2, "params.min_size": "16",
                 "params.max_size": "512", "params.collect": str(collect),
                 "params.checkpoints": ",".join(SECONDS[c] for c in checks),
                 # the spike's samples saw 90% of the peak; RSS at the drain, all of it
                 "extra.drain_rss_kb": peak, "extra.drain_live_blocks": 3200,
                 "extra.drain_kept_blocks": 100,
                 "extra.phases": json.dumps([{"name": "steady"}, {"name": "spike",
                                             "rss_kb_peak": peak * 9 // 10},
                                            {"name": "drain"}])}
            if collect:
                r["extra.collect_call"] = "hoardlab_collect" if strat.startswith("hoard") \
                    else "mi_collect"
            if key:
                r["params." + key] = "32"
            r.update(extra_params or {})
            for t, k in zip(checks, (1.2, 1.0, 0.8)):
                r[D.col(t, "rss_kb")] = int(peak * held * f * k) + 500
                r[D.col(t, "lazyfree_kb")] = 500
                r[D.col(t, "live_bytes")] = 2 << 20
            rows.append(r)
    return rows


SPREAD = {"glibc": ("glibc", "", 0.98, 100e6), "jemalloc": ("jemalloc", "", 0.97, 90e6),
          "mimalloc3": ("mimalloc3", "", 0.99, 120e6),
          "hoard2026-off": ("hoard2026", "purge=off", 1.0, 150e6),
          "hoard2026-free-0": ("hoard2026", "purge=free;retain=0", 0.96, 100e6),
          "hoard2026-holes-0": ("hoard2026", "purge=free;purge_holes=on;retain=0", 0.4, 130e6),
          "hoard2026-off +c": ("hoard2026", "purge=off", 0.9, 140e6, 1)}
TOGETHER = {"glibc": ("glibc", "", 0.6, 100e6), "jemalloc": ("jemalloc", "", 0.15, 90e6),
            "mimalloc3": ("mimalloc3", "", 0.2, 120e6),
            "hoard2026-off": ("hoard2026", "purge=off", 0.9, 150e6),
            "hoard2026-free-64M": ("hoard2026", "purge=free;retain=64M", 0.1, 145e6),
            "hoard2026-free-0": ("hoard2026", "purge=free;retain=0", 0.05, 100e6)}


def test_pattern_and_point_of_a_row():
    assert D.pattern_of({}) == "random" and D.pattern_of({"params.keep_every": "0"}) == "random"
    assert D.pattern_of({"params.keep_every": "32"}) == "spread"
    assert D.pattern_of({"params.keep_first": "32"}) == "together"
    assert D.pattern_of({"params.churn": "4", "params.keep_every": "20"}) == "churn"
    assert D.point_name({"variant": "jemalloc", "params.collect": "1"}) == "jemalloc +collect"
    assert D.point_name({"variant": "jemalloc"}) == "jemalloc"
    assert S.checkpoint_keys({"params.checkpoints": "0.1,1,10"}) == ["100ms", "1s", "10s"]
    # the peak: RSS at the drain when the spike's samples saw less
    r = rows_of({"glibc": ("glibc", "", 0.5, 1e6)}, "spread", reps=(1.0,))[0]
    assert D.peak_kb(r) == 100000 and abs(D.held_fraction(r) - 0.5) < 1e-3
    # the harness's tables of live blocks out of both: 20000 kB before the drain, 500 after
    r.update({"extra.drain_table_kb": 20000, "extra.kept_table_kb": 500})
    assert D.peak_kb(r) == 80000
    assert abs(D.held_fraction(r) - (50000 + 500 - 500 - 500) / 80000) < 1e-6


def test_the_patterns_are_kept_apart():
    """The random drain's section does not take the survivor rows, and each pattern its own."""
    rows = rows_of(SPREAD, "spread") + rows_of(TOGETHER, "together")
    assert D.points(rows) == []
    assert [p[0] for p in D.points(rows, "spread")][:3] == ["glibc", "jemalloc", "mimalloc3"]
    assert "hoard2026-off +collect" in [p[0] for p in D.points(rows, "spread")]
    assert len(D.points(rows, "together")) == len(TOGETHER)


def test_spread_section_table_frontier_and_aims():
    text = "\n".join(S.section(rows_of(SPREAD, "spread")))
    assert "## " + P.SECTION in text
    assert "### Survivors spread: one block in 32 kept" in text
    assert "`keep_every = 32` (blocks of 16..512 B)" in text
    assert "Kept: 0.0312 of the live blocks" in text
    assert "| glibc | its own | 1.18 ±2% | 0.98 ±2% | 0.78 ±2% | 100M ±2% | 2.00 ±2% | – |" \
        in text
    assert "| hoard2026-holes-0 | purge = free, purge_holes = on, retain = 0 |" in text
    assert "| hoard2026-off +collect | purge = off; collect: hoardlab_collect |" in text
    assert "purge-pareto-spread.png" in text
    assert "### The trade-off, survivors spread: held 1 s after the drain" in text
    assert "- The production allocators hold 0.97 (`jemalloc`) to 0.99 (`mimalloc3`) of the " \
        "peak 1 s after the drain (medians)." in text
    # hole purging: 0.40 held (at most 0.5), next burst 130 / 150 = 0.87 of purge = off's
    assert "- `hoard2026-holes-0` (purge = free, purge_holes = on, retain = 0): held 1 s " \
        "0.40 [0.39, 0.41]: at most 0.5; next burst / `purge = off` 0.87 [0.83, 0.90]: at " \
        "least 0.8; both: yes." in text
    assert "- `hoard2026-off +collect` (hoardlab_collect): held 1 s 0.90 [0.88, 0.92]; " \
        "over without the call 0.90 [0.86, 0.94]: gives back more." in text
    # hoard2026's best within 10% of off: off itself and off with the collect left out (the
    # holes row's burst is 0.87 of off's); 1.00 against jemalloc's 0.97
    assert "`hoard2026`'s best policy whose next burst is within 10% of `purge = off` " \
        "(ratio >= 0.9 by its interval): `hoard2026-off`, held 1 s 1.00 [0.98, 1.02]; the " \
        "production allocator holding least, `jemalloc`: 0.97 [0.95, 0.99]; ratio 1.03 " \
        "[0.99, 1.07]: within noise." in text
    assert "- `hoard202607` with its defaults: not measured." in text
    assert "target" not in text.lower() and "issue" not in text.lower()


def test_spread_aims_computed_not_written():
    """The same sentence turns when the numbers do: hole purging holding 0.6 and slow."""
    pts = dict(SPREAD)
    pts["hoard2026-holes-0"] = ("hoard2026", "purge=free;purge_holes=on;retain=0", 0.6, 90e6)
    text = "\n".join(S.section(rows_of(pts, "spread")))
    assert "held 1 s 0.60 [0.59, 0.61]: above 0.5; next burst / `purge = off` 0.60 " \
        "[0.58, 0.62]: below 0.8; both: no." in text
    del pts["hoard2026-holes-0"]
    text = "\n".join(S.section(rows_of(pts, "spread")))
    assert "- `hoard2026` with `purge_holes = on`: not measured (no such row)." in text


def test_together_section_best_policy_against_best_production():
    text = "\n".join(S.section(rows_of(TOGETHER, "together")))
    assert "### Survivors together: the first 1/32 kept" in text
    assert "purge_holes" not in text                    # the hole line is spread's
    # free-64M: next burst 145 / 150 (within 10% of off), held 0.10; jemalloc 0.15
    assert "`hoard2026`'s best policy whose next burst is within 10% of `purge = off` " \
        "(ratio >= 0.9 by its interval): `hoard2026-free-64M`, held 1 s 0.10 [0.10, 0.10]; " \
        "the production allocator holding least, `jemalloc`: 0.15 [0.15, 0.15]; ratio 0.67 " \
        "[0.64, 0.69]: holds no more." in text
    # one repetition decides nothing
    text = "\n".join(S.section(rows_of(TOGETHER, "together", reps=(1.0,))))
    assert "within noise: no policy's next burst is within 10%" in text


def test_a_plot_per_pattern(tmp_path):
    rows = rows_of(SPREAD, "spread") + rows_of(TOGETHER, "together")
    files = P.pareto_plot(rows, str(tmp_path))
    assert files == ["purge-pareto-spread.png", "purge-pareto-together.png"]
    for f in files:
        with open(tmp_path / f, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    files = P.pareto_plot(rows + rows_of({"glibc": ("glibc", "", 0.5, 1e8)}, "random"),
                          str(tmp_path))
    assert files[0] == P.PLOT and len(files) == 3


CHURN = {"glibc": ("glibc", "", 0.97, 0), "jemalloc": ("jemalloc", "", 0.9, 0),
         "mimalloc3": ("mimalloc3", "", 0.3, 0),
         "hoard2026-off": ("hoard2026", "purge=off", 0.95, 0),
         "hoard2026-free-0": ("hoard2026", "purge=free;retain=0", 0.2, 0)}


def churn_rows(points=CHURN, reps=(0.98, 1.0, 1.02)):
    rows = rows_of(points, "churn", reps=reps, checks=("100ms", "1s", "10s"),
                   extra_params={"params.churn": "4", "params.keep_every": "20",
                                 "params.min_size": "512", "params.max_size": "2048"})
    for r in rows:
        r["extra.next_burst_ops_per_s"] = None
    return rows


def test_churn_table_and_lines():
    text = "\n".join(S.section(churn_rows()))
    assert "## " + P.SECTION in text
    assert "### Thread churn, then idle: what comes back 10 s after the threads are gone" in text
    assert "`churn = 4`: each thread's share is run by 4 threads in turn" in text
    assert "blocks of 512..2048 B" in text and "one block in 20" in text
    assert "| allocator | policy | RSS peak MiB | held 100 ms | held 1 s | held 10 s | " \
        "returned 10 s |" in text
    assert "| mimalloc3 | its own | 97.66 ±0% | 0.36 ±2% | 0.30 ±2% | 0.24 ±2% | " \
        "0.76 [0.76, 0.76] |" in text
    assert "- Returns most 10 s after: `hoard2026-free-0`" in text
    assert "- `hoard2026`'s policy holding least, `hoard2026-free-0` (0.16 [0.16, 0.16]), " \
        "against the production allocator holding least, `mimalloc3` (0.24 [0.24, 0.24]): " \
        "held ratio 0.67 [0.64, 0.69]: holds no more." in text
    # the churn rows are no points of the random drain's section
    assert D.points(churn_rows()) == []


def test_sections_absent_without_rows():
    rows = rows_of(SPREAD, "spread")
    for r in rows:
        del r["extra.next_burst_ops_per_s"]
    assert S.section(rows) == [] and P.pareto_plot(rows, "/nonexistent") == []


def test_collect_points_in_the_random_drain_leave_the_claim_alone():
    """A collect = 1 row of the random drain is a point of its own (`+collect`), with its
    line; the claim table and purge = off's throughput come from the rows without it."""
    pts = {"glibc": ("glibc", "", 0.6, 100e6),
           "hoard2026-off": ("hoard2026", "purge=off", 0.9, 150e6),
           "hoard2026-free-0": ("hoard2026", "purge=free;retain=0", 0.3, 70e6),
           "hoard2026-free-64M": ("hoard2026", "purge=free;retain=64M", 0.5, 120e6),
           "hoard2026-free-64M +c": ("hoard2026", "purge=free;retain=64M", 0.1, 10e6, 1),
           "hoard2026-off +c": ("hoard2026", "purge=off", 0.2, 300e6, 1)}
    text = "\n".join(S.section(rows_of(pts, "random")))
    assert "| hoard2026-free-64M +collect | purge = free, retain = 64M; collect: " \
        "hoardlab_collect |" in text
    # the claim: 64M against retain 0 from the rows without collect (120 / 70, 0.5 / 0.3)
    assert "| hoard2026 | free | 64M | 1.71 [1.65, 1.78] | 1.67 [1.60, 1.73] | yes | yes | " \
        "agrees |" in text
    # next / purge = off divides by off without collect (150M), not off +collect (300M)
    assert "| 120M ±2% | 2.00 ±2% | 0.80 ±4% |" in text
    assert "The explicit collect right after the drain:" in text
    assert "- `hoard2026-off +collect` (hoardlab_collect): held 1 s 0.20 [0.20, 0.20]; over " \
        "without the call 0.22 [0.21, 0.23]: gives back more." in text

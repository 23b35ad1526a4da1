"""The "Hoard after PR 88" report section (report/history.py) on hand-made tidy rows with
made-up numbers: claims decided as agrees, MISMATCH, within noise, or left to machines with
more cores; the section's absence when the sweep did not measure its inputs; the attribution
recovered from the steps' knobs."""
import itertools

from hoardlab_lib import report
from hoardlab_lib.report import history as H

_ids = itertools.count()
PROD = ("glibc", "jemalloc", "mimalloc", "mimalloc3", "tcmalloc")
SPREAD = (0.98, 1.0, 1.02)


def rows_of(variant, wl, t, thr, strategy=None, knobs="", a=None, rss=None, spread=SPREAD):
    strategy = strategy or variant
    return [{"index": next(_ids), "variant": variant, "allocator": variant,
             "strategy": strategy, "knobs": knobs, "workload": wl, "workload_label": wl,
             "threads": t, "status": "ok", "repetition": i,
             "alloc_kind": "production" if strategy in PROD else "hoardlab",
             "throughput": thr * f, "peak_rss_kb": rss * f if rss else None,
             "hoardlab.held_bytes_peak": a * f if a else None, "hoardlab.in_use_peak": None,
             "hoardlab.os_bytes_peak": a * f if a else None}
            for i, f in enumerate(spread)]


def history_rows(home_spread=SPREAD):
    """hoard2026 = 100 everywhere; h26-home holds half the memory on migrate and is slower
    there (0.8); hoard202607 is faster than jemalloc everywhere but behind mimalloc at 1
    thread; h26-flush's threadtest ratio overlaps 1."""
    rows = []
    for wl in ("larson", "threadtest", "migrate"):      # no xfree
        for t in (1, 2):
            rows += rows_of("hoard", wl, t, 80, a=1000, rss=4000)
            rows += rows_of("hoard2026", wl, t, 100, a=2000, rss=5000)
            rows += rows_of("hoard202607", wl, t, 120, strategy="hoard202607", a=1500,
                            rss=4500)
            rows += rows_of("jemalloc", wl, t, 90, rss=4000)
            rows += rows_of("mimalloc", wl, t, 150 if t == 1 else 110, rss=3000)
            home = 80 if wl == "migrate" else 100
            rows += rows_of("h26-home", wl, t, home, strategy="hoard2026",
                            knobs="heap_select=home;tlab_foreign=home",
                            a=1000 if wl == "migrate" else 2000,
                            rss=2500 if wl == "migrate" else 5000, spread=home_spread)
            rows += rows_of("h26-flush", wl, t, 100, strategy="hoard2026",
                            knobs="tlab_flush=batch", a=2000, rss=5000, spread=(0.9, 1, 1.1))
    return rows


def section(rows):
    return "\n".join(H.history_section(rows, [], 2))


def claim_line(text, pr, start):
    return next(line for line in text.splitlines()
                if line.startswith("| %s | %s" % (pr, start)))


def test_claims_agree_mismatch_noise_and_cannot_decide():
    text = section(history_rows())
    assert "## Hoard after PR 88" in text
    # #103: memory under migration halves (RSS and A): agrees; throughput falls: MISMATCH
    assert claim_line(text, "#103", "A thread-stable").endswith("| agrees |")
    assert "h26-home / hoard2026, migrate, peak RSS, t=2: 0.50" in text
    assert claim_line(text, "#103", "... the same read in A").endswith("| agrees |")
    assert "h26-home / hoard2026, migrate, A, t=2: 0.50" in text
    assert claim_line(text, "#103", "... and throughput").endswith("| **MISMATCH** |")
    # #103's larson claim is at 8 threads: shown, not decided
    assert "two cores cannot decide (8 threads)" in claim_line(text, "#103", "Frees routed")
    # #111: 0.9..1.1 against 0.98..1.02: the interval reaches 1
    assert claim_line(text, "#111", "Freeing").endswith("| within noise |")
    # #99: hoard202607 above jemalloc on every workload and thread count
    assert claim_line(text, "#99", "Batched").endswith("| agrees (on what was measured) |")
    # #109: behind jemalloc (no: 120 > 90) and mimalloc (yes): one fails, so MISMATCH
    assert claim_line(text, "#109", "Single").endswith("| **MISMATCH** |")
    # #99 on the workloads measured (no xfree rows here), #98's adaptive TLAB not at all
    assert "jemalloc, xfree, throughput, t=1: not measured" in text
    assert claim_line(text, "#98", "An adaptive").endswith("| not measured |")
    assert "#123" not in text.split("| PR |")[1].split("Verdict:")[0]
    assert "not measured: h26-adaptive" in text
    # no hist-* steps: the attribution says why it is missing
    assert "Not shown: the sweep did not run the steps" in text


def test_noise_in_the_element_makes_the_claim_undecided():
    text = section(history_rows(home_spread=(0.4, 1.0, 2.5)))
    assert claim_line(text, "#103", "A thread-stable").endswith("| within noise |")


def test_absent_without_the_july_row_or_any_element():
    rows = [r for r in history_rows() if r["variant"] != "hoard202607"]
    assert H.history_section(rows, [], 2) == []
    rows = [r for r in history_rows() if not r["variant"].startswith("h26-")]
    assert H.history_section(rows, [], 2) == []


def steps(rows):
    """hoard -> hoard202607 in 3 elements, larson at 2 threads: tlab doubles, shards do
    nothing, home adds 50 % but only with the TLAB (an interaction)."""
    els = [{"tlab": "on"}, {"global_shards": "64"}, {"heap_select": "home"}]

    def value(k):
        v = 100.0 * (2 if "tlab" in k else 1)
        return v * (1.5 if "heap_select" in k and "tlab" in k else 1)
    for name, idx in (("f1", [0]), ("f2", [0, 1]), ("r1", [2]), ("r2", [1, 2])):
        k = {}
        for i in idx:
            k.update(els[i])
        rows += rows_of("hist-" + name, "larson", 2, value(k), strategy="hoard",
                        knobs=";".join("%s=%s" % kv for kv in sorted(k.items())))
    rows = [r for r in rows if not (r["workload"] == "larson" and r["threads"] == 2 and
                                    r["variant"] in ("hoard", "hoard202607"))]
    rows += rows_of("hoard", "larson", 2, 100)
    rows += rows_of("hoard202607", "larson", 2, 300, strategy="hoard202607")
    return rows


def test_attribution_from_the_steps():
    text = section(steps(history_rows()))
    assert "Elements, in the forward (chronological) order: `tlab`, `global_shards`, " \
        "`heap_select`" in text
    assert "**larson, 2 threads, throughput**" in text
    table = text[text.index("**larson, 2 threads, throughput**"):]
    assert "| tlab | 2.000 ±4% | 3.000 ±4% | interaction |" in table
    assert "| global_shards | 1.000 ±4% | 1.000 ±4% | same within noise |" in table
    assert "| heap_select | 1.500 ±4% | 1.000 ±4% | interaction |" in table


def test_attribution_with_a_reverse_order_bent_by_a_dependency():
    """The reverse order adds shards, then home, then the TLAB (home needing nothing): the
    elements come from the steps' knobs, whatever the order."""
    rows = steps(history_rows())
    for r in rows:
        if r["variant"] == "hist-r1":
            r["knobs"] = "global_shards=64"
        if r["variant"] == "hist-r2":
            r["knobs"] = "global_shards=64;heap_select=home"
    p, why = H.history_plan(rows, H._variants(rows))
    assert why is None and p.rev_order == [1, 2, 0]
    assert [n for n, _ in p.elements] == ["tlab", "global_shards", "heap_select"]


def test_attribution_refuses_steps_that_are_not_one_path():
    rows = steps(history_rows())
    for r in rows:
        if r["variant"] == "hist-r2":
            r["knobs"] = "global_shards=64;tlab=on"
    assert "Not shown: a step does not add new keys" in section(rows)
    for r in rows:
        if r["variant"] == "hist-r2":
            r["knobs"] = "heap_select=home;lock=mutex"
    assert "Not shown: the forward and reverse steps do not add the same elements" in \
        section(rows)
    rows = [r for r in rows if r["variant"] != "hist-r1"]
    assert "are not complete" in section(rows)


def test_report_write_carries_the_section(tmp_path):
    rows = history_rows()
    path, _ = report.write(str(tmp_path), rows, [], {"machine": {"cores": 2},
                                                      "sweep": {"name": "hoard-history"}},
                           [], [])
    assert "## Hoard after PR 88" in open(path).read()

"""Memory over time and latency (issue 28): what tidy makes of a record's `series` and
`latency` (series.csv, time-weighted means, percentile columns), that records without them
tidy as before, and that the report's sections and plots appear only with their data.
Synthetic records and rows: every number is made up."""
import copy
import itertools
import json
import time

import pytest

from hoardlab_lib import plotkit, report
from hoardlab_lib.runkit import tidy
from hoardlab_lib.report import latency as L, plots, series as S
from test_tidy import RUN, record, result

COLS = ["t_s", "held_bytes", "in_use_bytes", "self_bytes", "rss_kb", "private_dirty_kb",
        "lazyfree_kb", "anonymous_kb"]


def series(rows=None):
    """A step function: held_bytes 10 from 0 s to 1 s, then 40 until the last sample at 3 s
    (time-weighted mean 30; the plain mean of the samples would be 25 or 30 by accident of
    spacing, so the samples are spaced unevenly); rss_kb unknown in the first sample."""
    return {"interval_s": 0.01, "columns": COLS, "rows": rows if rows is not None else [
        [0.0, 10, 5, 1, None, 100, 0, 110],
        [1.0, 40, 20, 1, 200, 150, 50, 210],
        [1.5, 40, 20, 1, 400, 150, 250, 410],
        [3.0, 40, 20, 1, 100, 90, 0, 120]]}


LATENCY = {"sample_every": 64, "clock": "rdtsc", "overhead_ns": 3.2,
           "malloc": {"samples": 1000, "p50_ns": 20, "p90_ns": 40, "p99_ns": 90,
                      "p999_ns": 500, "max_ns": 12000},
           "free": {"samples": 1000, "p50_ns": 15, "p90_ns": 30, "p99_ns": None,
                    "p999_ns": None, "max_ns": None}}


def sampled_record():
    rec = record()
    rec["series"] = series()
    rec["latency"] = copy.deepcopy(LATENCY)
    return rec


def test_time_weighted_mean_of_a_step_function():
    ts, vs = [0.0, 1.0, 1.5, 3.0], [10, 40, 40, 40]
    assert tidy.time_weighted_mean(ts, vs) == pytest.approx(30.0)
    # a sample without a value leaves its interval out: 40 over [1, 3]
    assert tidy.time_weighted_mean(ts, [None, 40, 40, 0]) == pytest.approx(40.0)
    # uneven spacing weighs by time, not by sample: 0 for 2 s, 90 for 1 s
    assert tidy.time_weighted_mean([0, 2, 3], [0, 90, 5]) == pytest.approx(30.0)
    assert tidy.time_weighted_mean([0.0], [7]) == 7
    assert tidy.time_weighted_mean([], []) is None


def test_series_and_latency_columns_and_series_csv(tmp_path):
    ser = []
    rows, _ = tidy.rows_for(RUN, result(recs=[sampled_record()]), "s", 0, series=ser)
    r = rows[0]
    assert r["series.samples"] == 4 and r["series.interval_s"] == 0.01
    assert r["series.held_bytes_mean"] == pytest.approx(30.0)
    assert r["series.held_bytes_peak"] == 40 and r["series.held_bytes_last"] == 40
    # rss_kb: 200 for 0.5 s, 400 for 1.5 s (the first sample has none)
    assert r["series.rss_kb_mean"] == pytest.approx((200 * 0.5 + 400 * 1.5) / 2.0)
    assert r["series.rss_kb_peak"] == 400 and r["series.rss_kb_last"] == 100
    assert r["series.lazyfree_kb_peak"] == 250
    assert r["latency.malloc_p999_ns"] == 500 and r["latency.malloc_samples"] == 1000
    assert r["latency.free_p99_ns"] is None and r["latency.clock"] == "rdtsc"
    assert r["latency.sample_every"] == 64 and r["latency.overhead_ns"] == 3.2
    # series.csv: the run's identifying columns, then t_s and each column, a row per sample
    assert len(ser) == 4
    assert ser[1]["index"] == RUN["index"] and ser[1]["variant"] == "pad"
    assert ser[1]["t_s"] == 1.0 and ser[1]["held_bytes"] == 40 and ser[0]["rss_kb"] is None
    tidy.write_series(str(tmp_path), ser)
    back = tidy.read_series(str(tmp_path))
    assert list(back[0]) == tidy.SERIES_COLUMNS
    assert [x["held_bytes"] for x in back] == [10, 40, 40, 40]
    # runs.csv: the new groups come after extra.*, and read back as written
    cols = tidy.columns_for(rows)
    assert cols.index("series.held_bytes_mean") > cols.index("extra.latency_ns.p99")
    assert cols.index("latency.malloc_p50_ns") > cols.index("series.rss_kb_mean")
    tidy.write_csv(str(tmp_path / "runs.csv"), rows, cols)
    got = tidy.read_csv(str(tmp_path / "runs.csv"))[0]
    assert got["latency.clock"] == "rdtsc" and got["series.held_bytes_mean"] == 30.0
    # no samples: no file, and none left from before
    tidy.write_series(str(tmp_path), [])
    assert tidy.read_series(str(tmp_path)) == []


def test_stalls_latency_per_mode_is_flattened_from_extra():
    rec = sampled_record()
    rec["workload"] = "stall"
    rec["extra"]["latency_delayed"] = {"malloc": {"samples": 9, "p50_ns": 1, "p999_ns": 9},
                                       "free": {"samples": 9, "p50_ns": 2, "p999_ns": None}}
    r = tidy.rows_for(RUN, result(recs=[rec]), "s", 0)[0][0]
    assert r["extra.latency_delayed.malloc.p999_ns"] == 9
    assert L.stall_column("delayed", "malloc", "p999_ns") in r
    assert L.stall_modes(r) == ["delayed"]


def test_a_series_with_extra_columns_and_odd_rows():
    s = {"interval_s": 0.1, "columns": ["t_s", "rss_kb", "processes"],
         "rows": [[0.0, 10, 1], [1.0, 30, 2], [2.0, 5]]}           # the last row is cut short
    assert tidy.series_summary(s)["series.samples"] == 2
    assert tidy.series_summary(s)["series.processes_peak"] == 2
    rows = tidy.series_rows({"index": 1}, s)
    assert tidy.series_columns(rows) == tidy.SERIES_COLUMNS + ["processes"]
    assert tidy.series_summary({"columns": ["rss_kb"], "rows": [[1]]}) == \
        {"series.samples": 1, "series.interval_s": None}


def test_records_without_series_or_latency_tidy_as_before(tmp_path):
    ser = []
    old, _ = tidy.rows_for(RUN, result(), "s", 0)
    new, _ = tidy.rows_for(RUN, result(), "s", 0, series=ser)
    assert old == new and ser == []
    assert not any(k.startswith(("series.", "latency.")) for k in old[0])
    assert tidy.columns_for(old) == tidy.columns_for(new)


# --- the report's sections and plots ---------------------------------------------------------

_ids = itertools.count()


def row(variant, wl, t, rep, held, lazy, p999, **extra):
    r = {"index": next(_ids), "record": 0, "variant": variant, "allocator": variant,
         "strategy": variant, "alloc_kind": "hoardlab", "knobs": "", "workload": wl,
         "workload_label": wl, "threads": t, "repetition": rep, "status": "ok",
         "throughput": 100.0, "wall_s": 1.0, "peak_rss_kb": 1000,
         "series.samples": 3, "series.held_bytes_peak": held, "series.held_bytes_mean":
         held and held / 2, "series.rss_kb_peak": 1000, "series.rss_kb_mean": 800,
         "series.rss_kb_last": 300, "series.private_dirty_kb_mean": 700,
         "series.lazyfree_kb_peak": lazy, "latency.sample_every": 64, "latency.clock": "rdtsc",
         "latency.overhead_ns": 3.0}
    for op, k in (("malloc", 1.0), ("free", 0.8)):
        r.update({"latency.%s_samples" % op: 1000, "latency.%s_p50_ns" % op: 20 * k,
                  "latency.%s_p90_ns" % op: 40 * k, "latency.%s_p99_ns" % op: 100 * k,
                  "latency.%s_p999_ns" % op: p999 * k, "latency.%s_max_ns" % op: 50 * p999})
    r.update(extra)
    return r


def phases(held, rss_kb, kept):
    """extra.phases as runs.csv holds it (JSON text): a spike to held / rss_kb, and the end
    at `kept` times the spike's peak, lazy_kb of it LazyFree."""
    def ph(name, start, end, h, r, lazy=0):
        return {"name": name, "start_s": start, "end_s": end, "held_bytes_peak": h,
                "held_bytes_end": h, "rss_kb_peak": r, "rss_kb_end": r,
                "private_dirty_kb_end": r - lazy, "lazyfree_kb_end": lazy}
    end = int(rss_kb * kept)
    return json.dumps([ph("steady", 0, 1, held and held // 2, rss_kb // 2),
                       ph("spike", 1, 2, held, rss_kb),
                       ph("drain", 2, 3, held and held // 4, rss_kb // 4),
                       ph("steady", 3, 4, held and int(held * kept), end, lazy=end // 2)])


def sampled_rows():
    rows = []
    for v, held, lazy, tail in (("hoard", 4 << 20, 0, 800), ("glibc", None, 2048, 3000)):
        for rep, f in enumerate((0.9, 1.0, 1.1)):
            rows.append(row(v, "phased", 1, rep, held and int(held * f), lazy, tail * f,
                            **{"extra.phases": phases(held, 4096, 0.5 if held else 1.0)}))
    for v, out, delayed in (("hoard", 1000, 5e6), ("lockfree", 1000, 1100)):
        for rep in range(2):
            extra = {}
            for m, p in (("undelayed", 900), ("outside", out), ("delayed", delayed)):
                for op in L.OPS:
                    extra.update({"extra.latency_%s.%s.p50_ns" % (m, op): 30,
                                  "extra.latency_%s.%s.p999_ns" % (m, op): p * (1 + rep / 10),
                                  "extra.latency_%s.%s.max_ns" % (m, op): p * 3})
            rows.append(row(v, "stall", 2, rep, 1 << 20, 0, 900, **extra))
    return rows


def series_of(rows):
    out = []
    for r in rows:
        for t, held, rss, lazy in ((0.0, 1 << 20, 500, 0), (1.0, 4 << 20, 1000, 0),
                                   (2.0, 1 << 20, 900, 600)):
            out.append({"index": r["index"], "record": 0, "t_s": t, "variant": r["variant"],
                        "held_bytes": held if r["variant"] != "glibc" else None,
                        "rss_kb": rss, "private_dirty_kb": rss - lazy, "lazyfree_kb": lazy})
    return out


def test_sections_appear_only_with_their_data():
    rows = sampled_rows()
    text = "\n".join(S.memory_over_time_section(rows) + L.latency_section(rows, 2))
    assert "## Memory over time" in text and "## Latency" in text
    assert "LazyFree" in text and "MADV_FREE" in text
    # hoard's A peak 4 MiB ±10% over three repetitions; glibc has no A
    assert "| phased | 1 | hoard | 4.00 ±10% | 2.00 ±10% |" in text
    assert "| phased | 1 | glibc | – | – |" in text
    # after the spike: hoard keeps half its A; glibc keeps all its RSS, half of it LazyFree,
    # so half of the spike's RSS in Private_Dirty
    assert "### After the spike: what each allocator gives back" in text
    assert "| phased | 1 | hoard | 4.00 ±0% | 2.00 ±0% | 4.00 ±0% | 2.00 ±0% | 1.00 ±0% | " \
        "1.00 ±0% | 0.50 ±0% | 0.25 ±0% |" in text
    assert "| phased | 1 | glibc | – | – | 4.00 ±0% | 4.00 ±0% | 2.00 ±0% | 2.00 ±0% | – | " \
        "0.50 ±0% |" in text
    assert "| phased | 1 | glibc | malloc | 20 ns ±0% | 40 ns ±0% | 100 ns ±0% | 3 µs ±10% |" \
        in text
    # the stall table: every mode, and delayed / outside p99.9 on the delayed row
    assert "### Who waits when a thread stalls?" in text
    lines = [ln for ln in text.splitlines() if ln.startswith("| hoard | 2 | malloc |")]
    assert [ln.split(" | ")[3] for ln in lines] == ["undelayed", "outside", "delayed"]
    assert lines[2].startswith("| hoard | 2 | malloc | delayed | 30 ns ±0% | – | – | "
                               "5.25 ms ±5% | 15 ms ±0% | 5000.00 ±10% |")
    assert lines[1].endswith("|  |")              # the ratio only on the delayed row
    assert "| lockfree | 2 | malloc | delayed | 30 ns ±0% | – | – | 1.16 µs ±5% | 3.3 µs ±0% " \
        "| 1.10 ±10% |" in text
    # old rows: no series, no latency columns -> neither section, nor the stall table
    old = [{k: v for k, v in r.items() if not k.startswith(("series.", "latency.",
                                                              "extra.latency_"))}
           for r in rows]
    assert S.memory_over_time_section(old) == [] and L.latency_section(old, 2) == []
    assert L.stall_table(old) == []
    assert S.phases_table([dict(r, **{"extra.phases": None}) for r in rows]) == []


def test_report_mentions_series_csv_only_with_samples(tmp_path):
    rows = sampled_rows()
    meta = {"sweep": {"name": "x"}, "machine": {"cores": 2}}
    path, _ = report.write(str(tmp_path), rows, [], meta, [], [])
    with open(path) as f:
        text = f.read()
    assert "`series.csv` (memory over time)" in text and "## Memory over time" in text
    old = [{k: v for k, v in r.items() if not k.startswith(("series.", "latency."))}
           for r in rows]
    path, _ = report.write(str(tmp_path), old, [], meta, [], [])
    with open(path) as f:
        text = f.read()
    assert "series.csv" not in text and "## Latency" not in text


@pytest.fixture
def figures(monkeypatch):
    pytest.importorskip("matplotlib")
    saved = []

    def keep(fig, outdir, name):
        fig.tight_layout()
        fig.canvas.draw()
        saved.append((name, fig))
        return name
    monkeypatch.setattr(plotkit, "save", keep)
    yield saved
    plotkit.plt().close("all")


def _legend_outside(ax):
    leg = ax.get_legend()
    assert leg is not None
    assert leg.get_window_extent().x0 >= ax.get_window_extent().x1 - 1


def test_series_plot_lines_per_allocator_and_lazyfree_apart(tmp_path, figures):
    rows = [r for r in sampled_rows() if r["workload"] == "phased"]
    files = S.series_plots(rows, series_of(rows), str(tmp_path))
    assert files == ["series-phased.png"]
    fig = figures[0][1]
    a, rss, split = fig.axes
    def data(ax):                  # the allocators' lines, not the phases' (dotted)
        return [ln for ln in ax.get_lines() if ln.get_linestyle() != ":"]
    assert [ln.get_label() for ln in data(a)] == ["hoard"]      # glibc has no A
    assert {ln.get_label() for ln in data(rss)} == {"hoard", "glibc"}
    styles = sorted(ln.get_linestyle() for ln in data(split))
    assert styles == ["-", "-", "--", "--"]          # LazyFree dashed beside Private_Dirty
    # a dotted line where each phase after the first starts, in every panel
    assert sorted(ln.get_xdata()[0] for ln in a.get_lines() if ln.get_linestyle() == ":") \
        == [1, 2, 3]
    for ax in fig.axes:
        _legend_outside(ax)
    assert "memory over time" in fig.axes[0].get_title()
    # the A panel's peak is 4 MiB
    assert max(max(ln.get_ydata()) for ln in data(a)) == pytest.approx(4.0)
    assert S.series_plots(rows, [], str(tmp_path)) == []


def test_latency_plot_points_have_error_bars(tmp_path, figures):
    rows = sampled_rows()
    files = L.latency_plots(rows, str(tmp_path), 2)
    assert files == ["latency-phased.png", "latency-stall.png"]
    fig = figures[0][1]
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert ax.get_xscale() == "log"
        errs = [c for c in ax.containers if c.__class__.__name__ == "ErrorbarContainer"]
        assert len(errs) == 2                       # hoard and glibc
        assert [t.get_text() for t in ax.get_yticklabels()] == \
            ["p50", "p90", "p99", "p99.9", "max"]
    _legend_outside(fig.axes[-1])
    assert "sampled percentiles" in fig._suptitle.get_text()


def test_plots_written_as_files(tmp_path):
    pytest.importorskip("matplotlib")
    rows = sampled_rows()
    files, errors = plots.all_plots(rows, [], str(tmp_path), None, 2, series_of(rows))
    assert not errors
    for f in ("series-phased.png", "series-stall.png", "latency-phased.png"):
        assert f in files and (tmp_path / f).stat().st_size > 0


def test_a_programs_series_from_hlruns_lines(tmp_path):
    """programs.Proc reads hlrun's first line (rusage) and its `series` lines (hlrun -i);
    a stand-in hlrun writes both, the format harness/hlrun.c documents."""
    from hoardlab_lib import programs
    fake = tmp_path / "hlrun"
    fake.write_text("#!/bin/sh\n"
                    "while [ \"$1\" != -o ]; do shift; done\n"
                    "printf 'status=0 wall_ns=5 utime_us=1 stime_us=2 maxrss_kb=300\\n"
                    "series t_s=0.000 rss_kb=100 private_dirty_kb=90 lazyfree_kb=null "
                    "anonymous_kb=95 procs=1\\n"
                    "series t_s=0.050 rss_kb=300 private_dirty_kb=200 lazyfree_kb=50 "
                    "anonymous_kb=280 procs=2\\n' > \"$2\"\n")
    fake.chmod(0o755)
    p = programs.Proc("true", str(tmp_path), {}, str(tmp_path / "out"), str(tmp_path / "err"),
                      str(fake), sample=True).wait(time.perf_counter() + 60)
    assert p.code == 0 and p.maxrss_kb == 300
    s = p.series()
    assert s["columns"] == ["t_s", "rss_kb", "private_dirty_kb", "lazyfree_kb",
                            "anonymous_kb", "procs"]
    assert s["rows"] == [[0.0, 100, 90, None, 95, 1], [0.05, 300, 200, 50, 280, 2]]
    summary = tidy.series_summary(s)
    assert summary["series.rss_kb_peak"] == 300 and summary["series.procs_peak"] == 2
    assert summary["series.lazyfree_kb_last"] == 50
    rows = tidy.series_rows({"index": 0}, s)
    assert tidy.series_columns(rows) == tidy.SERIES_COLUMNS + ["procs"]


def test_programs_memory_section_leaves_out_what_hlrun_cannot_measure():
    rows = [dict(r, workload="program", **{"series.held_bytes_peak": None,
                                            "series.held_bytes_mean": None})
            for r in sampled_rows() if r["workload_label"] == "phased"]
    text = "\n".join(S.memory_over_time_section(rows, programs=True))
    assert "## Real programs: memory over time" in text and "hlrun samples" in text
    assert "| program | threads | allocator | MiB RSS peak |" in text and "A peak" not in text

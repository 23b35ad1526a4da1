"""The plots' readability rules (report/plots.py's docstring): error bars on every bar, labelled log
ticks (never a lone "1"), legends outside the axes, whole titles. Synthetic rows."""
import itertools

import pytest

from hoardlab_lib import plotkit, verdicts as V
from hoardlab_lib.report import plots

pytest.importorskip("matplotlib")
_ids = itertools.count()


def row(variant, wl, t, thr, rep, mem=None):
    return {"index": next(_ids), "variant": variant, "strategy": variant, "alloc_kind":
            "hoardlab", "workload": wl, "workload_label": wl, "threads": t, "throughput": thr,
            "status": "ok", "repetition": rep, "knobs": "", "wall_s": 0.5,
            "hoardlab.held_bytes_peak": mem, "hoardlab.in_use_peak": mem and mem // 2,
            "hoardlab.fragmentation": 2.0 if mem else None, "peak_rss_kb": None}


def rows_of(spread=1.0):
    rs = []
    for v, k in (("base", 1.0), ("fast", 1.3 * spread), ("slow", 0.9)):
        for wl in ("threadtest", "larson"):
            for t in (1, 2):
                for rep, f in enumerate((0.95, 1.0, 1.08)):
                    rs.append(row(v, wl, t, 100 * k * t * f, rep, mem=int(1e6 * k)))
    return rs


@pytest.fixture
def figures(monkeypatch):
    """The figures the plot functions save, kept open for inspection."""
    saved = []

    def keep(fig, outdir, name):
        fig.tight_layout()
        fig.canvas.draw()
        saved.append(fig)
        return name
    monkeypatch.setattr(plotkit, "save", keep)
    yield saved
    plotkit.plt().close("all")


def _bars_have_error_bars(ax):
    bars = [c for c in ax.containers if c.__class__.__name__ == "BarContainer"]
    assert bars
    assert all(c.errorbar is not None for c in bars)


def _legend_outside(ax):
    leg = ax.get_legend()
    assert leg is not None
    lb = leg.get_window_extent()
    ab = ax.get_window_extent()
    assert lb.x0 >= ab.x1 - 1                      # right of the axes: covers no data


def test_relative_plot_error_bars_legend_and_linear_axis(tmp_path, figures):
    files = plots.relative_plot(rows_of(), str(tmp_path), "base", ncores=2)
    assert files == ["relative-throughput-1thread.png", "relative-throughput-maxthreads.png"]
    ax = figures[0].axes[0]
    _bars_have_error_bars(ax)
    _legend_outside(ax)
    assert ax.get_yscale() == "linear"             # 0.9 to 1.3: no log axis
    title = ax.get_title()
    assert title.replace("\n", " ").endswith("(bars: the ratio's interval over repetitions)")


def test_wide_range_gets_a_log_axis_with_several_labels(tmp_path, figures):
    plots.relative_plot(rows_of(spread=40), str(tmp_path), "base", ncores=2)
    ax = figures[0].axes[0]
    assert ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()
              and ax.get_ylim()[0] <= t.get_position()[1] <= ax.get_ylim()[1]]
    assert len(labels) >= 3 and labels != ["1"], labels


def test_memory_plot_error_bars(tmp_path, figures):
    plots.memory_plot(rows_of(), str(tmp_path))
    for ax in figures[0].axes:
        _bars_have_error_bars(ax)
    _legend_outside(figures[0].axes[0])


def test_speedup_plot_error_bars_and_legend(tmp_path, figures):
    files = plots.speedup_plots(rows_of(), str(tmp_path), 2)
    assert files
    ax = figures[0].axes[0]
    assert any(c.__class__.__name__ == "ErrorbarContainer" for c in ax.containers)
    _legend_outside(ax)


def test_a_long_legend_takes_columns_and_stays_in_the_figure(figures):
    """45 allocators (residual's sweep): the legend's columns keep it within the figure's
    height, and the figure widens for them, so that tight_layout can lay it out."""
    import warnings
    fig, ax = plotkit.plt().subplots(figsize=(6, 4))
    for i in range(45):
        ax.plot([0, 1], [i, i + 1], label="mimalloc-like.f%d" % i)
    plotkit.legend(ax)
    assert fig.get_figwidth() > 6                      # a column beyond the first
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.tight_layout()
    fig.canvas.draw()
    lb, fb = ax.get_legend().get_window_extent(), fig.bbox
    assert lb.y0 >= fb.y0 - 1 and lb.x1 <= fb.x1 + 1   # inside the figure
    _legend_outside(ax)


def test_yerr_from_spreads():
    lo, hi = plotkit.yerr([V.spread_of([1, 2, 4]), None, V.spread_of([3])])
    assert lo == [1.0, 0.0, 0.0] and hi == [2.0, 0.0, 0.0]


def test_programs_plot_error_bars_and_legend(tmp_path, figures):
    from hoardlab_lib.report import programs as report_programs
    rows = []
    for v, k in (("glibc", 1.0), ("hoard", 0.9), ("mimalloc", 1.1)):
        for prog in ("python3", "xz"):
            for rep, f in enumerate((0.97, 1.0, 1.05)):
                r = row(v, prog, 1, None, rep)
                r.update({"workload": "program", "wall_s": 2.0 * k * f,
                          "peak_rss_kb": int(1000 * k * f)})
                rows.append(r)
    assert report_programs.programs_plot(rows, str(tmp_path)) == ["programs.png"]
    for ax in figures[0].axes:
        _bars_have_error_bars(ax)
    _legend_outside(figures[0].axes[0])

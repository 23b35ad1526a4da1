"""PNG plots of a sweep: speedup over 1 thread per workload (in the manner of Hoard's
Figure 3), throughput relative to a baseline allocator, memory (A or RSS, and A/U), and
memory over rounds for the blowup workloads. Returns the files written.

Every bar and every point of a median carries an error bar: the interval over its
repetitions (min-max; for a ratio, the ratio's interval, verdicts.ratio), the same spread as
the report's `±p%`. An axis is linear from 0 unless its values span 10x or more; a log axis
is labelled at 1, 2 and 5 times the powers of ten, so it never shows a lone "1". Legends sit
outside the axes, to the right; titles are wrapped, never cut."""
import os

from .. import plotkit as K, verdicts as V
from . import figure8, fronts, hugepages, latency as L, programs, purge, series as S


def _speed_workloads(tab):
    """Workloads whose throughput is the point (not the blowup ones, which measure memory)."""
    return sorted({w for (_, w, _) in tab} - set(V.BLOWUP_WORKLOADS))


def speedup_plots(rows, outdir, ncores):
    plt = K.plt()
    tab = V.throughput_spreads(rows)
    files = []
    for wl in _speed_workloads(tab):
        series = {}
        for v in V.variants(rows):
            base = tab.get((v, wl, 1))
            pts = sorted((t, V.ratio(thr, base) if t != 1 else V.exact(1.0))
                         for (vv, w, t), thr in tab.items()
                         if vv == v and w == wl and V.ratio(thr, base))
            if len(pts) >= 2:
                series[v] = pts
        if not series:
            continue
        fig, ax = plt.subplots(figsize=(6, 4.2))
        ts = sorted({t for pts in series.values() for t, _ in pts} | {1})
        knee = [t for t in ts if t < ncores] + [ncores] + [t for t in ts if t > ncores] \
            if ts[-1] > ncores else ts
        ax.plot(knee, [min(t, ncores) for t in knee], color="0.75", ls="--",
                label="ideal (%d cores)" % ncores)
        for i, (v, pts) in enumerate(series.items()):
            ax.errorbar([t for t, _ in pts], [s.med for _, s in pts],
                        yerr=K.yerr([s for _, s in pts]), marker=K.MARKERS[i % len(K.MARKERS)],
                        capsize=3, label=v)
        ax.set_xlabel("threads")
        ax.set_ylabel("speedup over 1 thread (same allocator)")
        K.title(ax, "%s: speedup over 1 thread (bars: the ratio's interval over repetitions)"
               % wl,
               fontsize=10)
        ax.set_xticks(sorted({t for pts in series.values() for t, _ in pts}))
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        K.legend(ax)
        f = K.save(fig, outdir, "speedup-%s.png" % K.fname(wl))
        files.append(f)
    return files


def relative_plot(rows, outdir, baseline, ncores=None):
    """Grouped bars: throughput / baseline's throughput at the same threads, per workload,
    at 1 thread and at P (verdicts.THREADS_RULE; the highest thread count without ncores).
    The second file keeps its name, relative-throughput-maxthreads.png."""
    if not baseline:
        return []
    plt = K.plt()
    tab = V.throughput_spreads(rows)
    wls = _speed_workloads(tab)
    variants = V.variants([r for r in V.timing_rows(rows)])
    files = []
    for which in ("1", "max"):
        data = {}
        for wl in wls:
            ts = sorted({t for (v, w, t) in tab if w == wl and v == baseline})
            if not ts:
                continue
            t = 1 if which == "1" else (V.timing_threads([u for u in ts if u > 1], ncores)
                                        if ncores and ts[-1] > 1 else ts[-1])
            if which == "max" and t == 1:
                continue
            if t not in ts:
                continue
            ref = tab.get((baseline, wl, t))
            data[(wl, t)] = {v: V.ratio(tab[(v, wl, t)], ref) for v in variants
                             if V.ratio(tab.get((v, wl, t)), ref)}
        if not data:
            continue
        fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(data) + 2) + 1.5, 4.5))
        n = len(variants)
        width = 0.8 / max(n, 1)
        keys = sorted(data)
        allv = [s.lo for d in data.values() for s in d.values()] + \
            [s.hi for d in data.values() for s in d.values()]
        for i, v in enumerate(variants):
            xs = [k + (i - (n - 1) / 2) * width for k in range(len(keys))]
            sp = [data[key].get(v) for key in keys]
            ax.bar(xs, [s.med if s else 0 for s in sp], width, label=v, yerr=K.yerr(sp),
                   capsize=2, error_kw={"lw": 0.8})
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels(["%s\nt=%d" % k for k in keys], fontsize=8)
        ax.set_ylabel("throughput / %s" % baseline)
        K.value_axis(ax, allv + [1.0])
        K.title(ax, "throughput relative to %s at %s (bars: the ratio's interval over "
               "repetitions)" % (baseline, "1 thread" if which == "1" else
                                 "P threads" if ncores else "the highest thread count"),
               fontsize=10)
        K.legend(ax)
        ax.grid(alpha=0.3, axis="y")
        f = K.save(fig, outdir, "relative-throughput-%s.png"
                  % ("1thread" if which == "1" else "maxthreads"))
        files.append(f)
    return files


def memory_plot(rows, outdir):
    """Two panels per workload group: memory held (A, else RSS) and A/U, at the highest
    thread count measured, median over repetitions."""
    plt = K.plt()
    okr = [r for r in V.ok(rows) if not V.is_census(r)]
    wls = sorted({r["workload_label"] for r in okr})
    variants = V.variants(okr)
    if not wls:
        return []
    mem, frag = {}, {}
    for wl in wls:
        tmax = max(r["threads"] for r in okr if r["workload_label"] == wl)
        for v in variants:
            rs = [r for r in okr if r["workload_label"] == wl and r["variant"] == v and
                  r["threads"] == tmax]
            m = V.spread_of([V.memory_of(r)[0] for r in rs])
            if m and m.med:
                mem[(wl, tmax, v)] = V.Spread(*(x / (1 << 20) for x in m[:3]), m.n)
            fr = V.spread_of([r.get("hoardlab.fragmentation") for r in rs])
            if fr and fr.med:
                frag[(wl, tmax, v)] = fr
    keys = sorted({(w, t) for (w, t, _) in mem})
    if not keys:
        return []
    fig, axes = plt.subplots(2, 1, figsize=(max(7, 1.2 * len(keys) + 2) + 1.5, 8))
    n = len(variants)
    width = 0.8 / max(n, 1)
    for ax, data, ylabel in ((axes[0], mem, "MiB held (A; RSS if no hoardlab stats)"),
                             (axes[1], frag, "fragmentation A/U")):
        for i, v in enumerate(variants):
            xs = [k + (i - (n - 1) / 2) * width for k in range(len(keys))]
            sp = [data.get((w, t, v)) for (w, t) in keys]
            ax.bar(xs, [s.med if s else 0 for s in sp], width, label=v, yerr=K.yerr(sp),
                   capsize=2, error_kw={"lw": 0.8})
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels(["%s\nt=%d" % k for k in keys], fontsize=8)
        ax.set_ylabel(ylabel)
        K.value_axis(ax, [s.lo for s in data.values()] + [s.hi for s in data.values()])
        ax.grid(alpha=0.3, axis="y")
    axes[1].axhline(1.0, color="k", lw=0.8)
    K.title(axes[0], "memory at the highest thread count (median over repetitions; bars: "
           "min-max)", fontsize=10)
    K.legend(axes[0])
    f = K.save(fig, outdir, "memory.png")
    return [f]


def rounds_plot(rows, rounds, outdir):
    """Memory held over rounds in each blowup workload (first repetition, highest threads)."""
    if not rounds:
        return []
    plt = K.plt()
    okr = [r for r in V.ok(rows) if r["workload"] in V.BLOWUP_WORKLOADS and not V.is_census(r)]
    wls = sorted({r["workload_label"] for r in okr})
    files = []
    for wl in wls:
        rs = [r for r in okr if r["workload_label"] == wl]
        tmax = max(r["threads"] for r in rs)
        fig, ax = plt.subplots(figsize=(6.5, 4.2))
        drawn = 0
        live_drawn = False
        for i, v in enumerate(V.variants(rs)):
            cand = sorted((r for r in rs if r["variant"] == v and r["threads"] == tmax),
                          key=lambda r: r["repetition"])
            if not cand:
                continue
            mem, live = V.round_series(rounds, cand[0]["index"])
            if not mem or None in mem:
                continue
            ax.plot(range(len(mem)), [m / (1 << 20) for m in mem],
                    marker=K.MARKERS[i % len(K.MARKERS)], ms=3, label=v)
            if not live_drawn and None not in live:
                ax.plot(range(len(live)), [x / (1 << 20) for x in live], color="k", ls=":",
                        label="live bytes")
                live_drawn = True
            drawn += 1
        if not drawn:
            plt.close(fig)
            continue
        ax.set_xlabel("round")
        ax.set_ylabel("MiB held from the OS (A; RSS if no stats)")
        K.title(ax, "%s, %d threads: memory over rounds (first repetition)" % (wl, tmax),
               fontsize=10)
        ax.grid(alpha=0.3)
        K.legend(ax)
        f = K.save(fig, outdir, "rounds-%s.png" % K.fname(wl))
        files.append(f)
    return files


def figure8_plot(rows, outdir):
    """Michael 2004 Figure 8 (a)-(h): one panel per workload, x = threads, y = speedup over
    contention-free glibc (glibc's median throughput at 1 thread), a line per allocator.
    Drawn when glibc was measured at 1 thread on at least one of the panels' workloads."""
    fig8 = figure8.figure8_ratio_spreads(rows)
    if not fig8:
        return []
    plt = K.plt()
    panels = [p for p in figure8.FIG8 if p in fig8]
    ncols = min(4, len(panels))
    nrows = (len(panels) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 3.2 * nrows), squeeze=False)
    names = list(figure8.PAPER_SET) + list(figure8.PRODUCTION)
    for k, p in enumerate(panels):
        ax = axes[k // ncols][k % ncols]
        for i, n in enumerate(names):
            pts = sorted(fig8[p].get(n, {}).items())
            if not pts:
                continue
            ax.errorbar([t for t, _ in pts], [s.med for _, s in pts],
                        yerr=K.yerr([s for _, s in pts]), marker=K.MARKERS[i % len(K.MARKERS)],
                        ms=4, capsize=2, label=n, lw=2.2 if n == "lockfree" else 1.2)
        ax.set_title(figure8.panel_name(p), fontsize=9)
        ax.set_xticks(sorted({t for pts in fig8[p].values() for t in pts}))
        ax.set_xlabel("threads", fontsize=8)
        ax.set_ylabel("speedup over contention-free glibc", fontsize=7)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    for k in range(len(panels), nrows * ncols):
        axes[k // ncols][k % ncols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(8, len(labels)), fontsize=8)
    fig.suptitle("Michael 2004 Figure 8: speedup over glibc at 1 thread (bars: the ratio's "
                 "interval over repetitions)", fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    fig.savefig(os.path.join(outdir, "figure8.png"), dpi=110)
    plt.close(fig)
    return ["figure8.png"]


def all_plots(rows, rounds, outdir, baseline, ncores, series=()):
    """Every plot; a plotting error is reported, never fatal for the sweep's data."""
    files, errors = [], []
    bench = programs.bench_rows(rows)      # real programs: programs.png only
    # today's allocators' `today-<label>` runs drawn in <label>'s plots (verdicts.today)
    merged, merged_bench = V.relabel(rows), V.relabel(bench)
    for fn, args in ((speedup_plots, (merged, outdir, ncores)),
                     (relative_plot, (merged, outdir, baseline, ncores)),
                     (memory_plot, (merged_bench, outdir)),
                     (rounds_plot, (rows, rounds, outdir)),
                     (figure8_plot, (rows, outdir)),
                     (S.series_plots, (rows, series, outdir)),
                     (L.latency_plots, (merged_bench, outdir, ncores)),
                     (purge.pareto_plot, (bench, outdir)),
                     (hugepages.coverage_plot, (bench, outdir, ncores)),
                     (fronts.fronts_plot, (bench, outdir)),
                     (programs.programs_plot, (rows, outdir))):
        try:
            files += fn(*args)
        except ImportError as e:
            return files, ["matplotlib is not importable (%s): run tools/install-deps" % e]
        except Exception as e:     # keep the other plots and the report
            errors.append("%s: %s: %s" % (fn.__name__, type(e).__name__, e))
    return files, errors


def plots_section(files, errors):
    out = ["## Plots", ""]
    for f in files:
        out += ["![%s](%s)" % (f, f), ""]
    for e in errors:
        out.append("- plot not drawn: %s" % e)
    if not files and not errors:
        out.append("No plots (nothing measured).")
    return out + [""]

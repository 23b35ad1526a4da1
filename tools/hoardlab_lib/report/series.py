"""The report's section on memory over time, from the columns runkit/tidy.py makes of a
record's `series`, the phased workload's phases and purge policy, and series-<workload>.png
(memory over time, a line per allocator). It appears only when the sweep sampled memory:
results from before hlbench sampled have no such column, and their reports do not change.
Latency, the other sampled measure, is latency.py's."""
import json

from .. import fmt as F, plotkit as K, verdicts as V

# series.<column>_<summary> columns of the memory table, with their unit (bytes or kB)
MEMORY_CELLS = (("A peak", "held_bytes_peak", 1), ("A mean", "held_bytes_mean", 1),
                ("RSS peak", "rss_kb_peak", 1024), ("RSS mean", "rss_kb_mean", 1024),
                ("RSS at end", "rss_kb_last", 1024),
                ("Private_Dirty mean", "private_dirty_kb_mean", 1024),
                ("LazyFree peak", "lazyfree_kb_peak", 1024))


def sampled(rows):
    """The ok, non-census rows whose record carried a series with samples."""
    return [r for r in V.ok(rows) if not V.is_census(r) and r.get("series.samples")]


def _highest_threads(rows):
    """{workload_label: its highest thread count}: memory needs no cores (as in ## Memory)."""
    out = {}
    for r in rows:
        out[r["workload_label"]] = max(out.get(r["workload_label"], 0), r["threads"])
    return out


def _scaled(s, k):
    return None if s is None else V.Spread(s.med * k, s.lo * k, s.hi * k, s.n)


BENCH_INTRO = (
    "hlbench samples the process every `interval_s` (`series.csv`: one row per run and "
    "sample): A (bytes the allocator holds from the OS; hoardlab statistics only), U, the "
    "testbed's own memory and the process's RSS as `/proc/self/smaps_rollup` splits it. ")
PROGRAMS_INTRO = (
    "hlrun samples the command's process tree (the server's, in server mode) every "
    "`interval_s` (`series.csv`), summing the processes' `/proc/PID/smaps_rollup`; no A, "
    "which hoardlab counts per process (the statistics above). ")
RSS_NOTE = (
    "Private_Dirty is memory the process wrote and still holds; LazyFree is memory the "
    "allocator returned with MADV_FREE, which RSS still counts until the kernel reclaims it "
    "under memory pressure, so an allocator that purges lazily looks larger in RSS than in "
    "Private_Dirty. Mean: time-weighted over the run (a sample's value holds until the "
    "next); at end: the last sample. Median over repetitions at the highest thread count; "
    "the plots series-<workload>.png draw the first repetition's samples.")


def _groups(rows):
    """(workload, threads, allocator, its rows) at each workload's highest thread count."""
    for w, t in sorted(_highest_threads(rows).items()):
        for v in V.variants(rows):
            rr = [r for r in rows if r["workload_label"] == w and r["variant"] == v and
                  r["threads"] == t]
            if rr:
                yield w, t, v, rr


def memory_over_time_section(rows, programs=False):
    """The table of every sampled workload (or, with `programs`, real program); a column
    no run measured (A under hlrun) is left out."""
    sr = sampled(rows)
    if not sr:
        return []
    out = ["## %s" % ("Real programs: memory over time" if programs else "Memory over time"),
           "", (PROGRAMS_INTRO if programs else BENCH_INTRO) + RSS_NOTE, ""]
    cells = [c for c in MEMORY_CELLS if any(r.get("series." + c[1]) is not None for r in sr)]
    rs = []
    for w, t, v, rr in _groups(sr):
        row = [w, V.threads_text(rr, w, t), v]
        for _, col, unit in cells:
            s = V.spread_of([r.get("series." + col) for r in rr])
            row.append(F.pm(_scaled(s, unit), F.mib))
        rs.append(row)
    head = ["program" if programs else "workload", "threads", "allocator"] + \
        ["MiB " + c for c, _, _ in cells]
    return out + [F.table(head, rs), ""] + phases_table(sr)


def phases_of(r):
    """The record's phases (phased: extra.phases, JSON text in runs.csv), [] without."""
    try:
        ph = json.loads(r.get("extra.phases") or "[]")
    except (TypeError, ValueError):
        return []
    return [p for p in ph if isinstance(p, dict)] if isinstance(ph, list) else []


# (column title, phase: 1 the spike, -1 the last, key in the phase's object, bytes per unit)
PHASE_CELLS = (("A spike peak", 1, "held_bytes_peak", 1), ("A at end", -1, "held_bytes_end", 1),
               ("RSS spike peak", 1, "rss_kb_peak", 1024), ("RSS at end", -1, "rss_kb_end", 1024),
               ("Private_Dirty at end", -1, "private_dirty_kb_end", 1024),
               ("LazyFree at end", -1, "lazyfree_kb_end", 1024))


# The purge policy a strategy runs with when no knob sets one (src/core's defaults: hoard2026's
# as PR #88 had it, hoard202607's as Hoard through July 2026), and the section of the purge
# sweep (purge.py) that measures the others.
PURGE_DEFAULTS = {"hoard": "purge = off", "hoard2026": "purge = off",
                  "hoard202607": "purge = free, retain = 64M"}
PURGE_KNOBS = ("purge", "decay_ms", "purge_delay", "purge_thread", "purge_holes", "retain",
               "retain_counts")
PURGE_SECTION = "Purge: memory held after a drain against the next burst"
SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def purge_policy(r):
    """A row's purge policy in words: its knobs, else its strategy's defaults; None for an
    allocator without one (a production allocator: its own)."""
    knobs = V.knobs_of(r)
    set_ = ["%s = %s" % (k, knobs[k]) for k in PURGE_KNOBS if k in knobs]
    return ", ".join(set_) if set_ else PURGE_DEFAULTS.get(r.get("strategy"))


def retain_bytes(policy):
    """The retain budget a policy text names, in bytes (None without one)."""
    for part in (policy or "").split(","):
        k, _, v = part.partition("=")
        v = v.strip().upper()
        if k.strip() == "retain" and v and v.rstrip("KMG").isdigit():
            return int(v.rstrip("KMG")) * SIZE_UNITS[v[len(v.rstrip("KMG")):]]
    return None


def purge_notes(groups):
    """What the rows with a purge policy kept, and where the purge sweep measures the
    others: groups [(allocator, rows, A kept, Private_Dirty kept, Private_Dirty at end)]."""
    out = []
    for v, rr, a, pd, end in groups:
        pol = purge_policy(rr[0])
        if not pol:
            continue
        text = "`%s` ran with %s: it kept %s of its A and %s of its RSS peak in " \
            "Private_Dirty" % (v, pol, F.iv(a), F.iv(pd))
        budget = retain_bytes(pol)
        live = V.spread_of([phases_of(r)[-1].get("live_bytes_peak") for r in rr])
        if budget is not None and end and live:
            text += "; at the end %s MiB of Private_Dirty beyond the live bytes (the last " \
                "phase's peak), against a retain budget of %s MiB" % (
                    F.mib(end.med - live.med), F.mib(budget))
        out.append("- %s." % text)
    if not out:
        return []
    return ["A counts pages a strategy purged (they stay mapped), Private_Dirty does not. "
            "The purge policy of each row:", ""] + out + [
        "", "What each purge policy keeps 100 ms, 1 s and 5 s after a drain, and what it "
        "costs the next burst: the purge sweep (configs/sweeps/purge.ini), its section "
        "\"%s\"." % PURGE_SECTION, ""]


def phases_table(sr):
    """Does memory come back? Per allocator of a phased workload, the spike's peak beside
    the end of the run (the last sample of the last steady phase), and what A and
    Private_Dirty kept of the spike's peak."""
    pr = [r for r in sr if len(phases_of(r)) >= 3]
    if not pr:
        return []
    out = ["### After the spike: what each allocator gives back", "",
           "The phased workload's phases (steady, spike, drain, steady; extra.phases): the "
           "peak of the spike and the last sample of the run, in MiB, median over repetitions "
           "at the highest thread count. Kept: the end over the spike's peak (1.00: nothing "
           "given back); of RSS, a LazyFree share the kernel has not reclaimed yet.", ""]
    rs, kept = [], []
    for w, t, v, rr in _groups(pr):
        cells, got = [w, V.threads_text(rr, w, t), v], {}
        for title, ph, key, unit in PHASE_CELLS:
            got[title] = _scaled(V.spread_of([phases_of(r)[ph].get(key) for r in rr]), unit)
            cells.append(F.pm(got[title], F.mib))
        q = [V.ratio(got[a], got[b]) for a, b in (("A at end", "A spike peak"),
                                                  ("Private_Dirty at end", "RSS spike peak"))]
        cells += [F.pm(x, "%.2f") if x else "–" for x in q]
        rs.append(cells)
        kept.append((v, rr, q[0], q[1], got["Private_Dirty at end"]))
    head = ["workload", "threads", "allocator"] + [c for c, _, _, _ in PHASE_CELLS] + \
        ["A kept", "Private_Dirty kept (of RSS peak)"]
    return out + [F.table(head, rs), ""] + purge_notes(kept)


# --- plots ---------------------------------------------------------------------------------

def _first_runs(rows, w):
    """{variant: (index, record)} of the first repetition at the highest thread count of w."""
    rs = [r for r in rows if r["workload_label"] == w]
    t = max(r["threads"] for r in rs)
    out = {}
    for v in V.variants(rs):
        cand = sorted((r for r in rs if r["variant"] == v and r["threads"] == t),
                      key=lambda r: (r["repetition"], r.get("record") or 0))
        if cand:
            out[v] = (cand[0]["index"], cand[0].get("record") or 0)
    return out, t


def _by_run(series):
    """series.csv's rows grouped by run: {(index, record): [row, ...]}."""
    out = {}
    for s in series:
        out.setdefault((s["index"], s.get("record") or 0), []).append(s)
    return out


def _samples(by_run, run, col):
    """[(t_s, value)] of one column of a run, in time order, samples without a value left
    out."""
    return sorted((s["t_s"], s.get(col)) for s in by_run.get(run, ())
                  if s["t_s"] is not None and s.get(col) is not None)


# the panels of series-<workload>.png: (y label, [(column, bytes per unit, line style)])
SERIES_PANELS = (("MiB held from the OS (A)", (("held_bytes", 1, "-"),)),
                 ("MiB RSS", (("rss_kb", 1024, "-"),)),
                 ("MiB: Private_Dirty (solid), LazyFree (dashed)",
                  (("private_dirty_kb", 1024, "-"), ("lazyfree_kb", 1024, "--"))))


def _phase_lines(axes, phases):
    """A dotted line at each phase's start, its name at the top of the first panel."""
    for p in phases[1:]:
        if p.get("start_s") is None:
            continue
        for ax in axes:
            ax.axvline(p["start_s"], color="0.5", ls=":", lw=0.9)
    for p in phases:
        if p.get("start_s") is not None:
            axes[0].annotate(p.get("name", ""), (p["start_s"], 1.0), xycoords=("data",
                             "axes fraction"), xytext=(2, -10), textcoords="offset points",
                             fontsize=7, color="0.35")


def series_plots(rows, series, outdir):
    """series-<workload>.png: memory over time, a line per allocator (first repetition,
    highest thread count): A, RSS, and RSS's Private_Dirty and LazyFree apart. A panel no
    allocator has samples for is left out."""
    sr = sampled(rows)
    if not sr or not series:
        return []
    plt = K.plt()
    files = []
    by_run = _by_run(series)
    for w in sorted({r["workload_label"] for r in sr}):
        runs, t = _first_runs(sr, w)
        panels = []
        for ylabel, cols in SERIES_PANELS:
            lines = [(v, col, k, ls, _samples(by_run, run, col))
                     for v, run in runs.items() for col, k, ls in cols]
            lines = [x for x in lines if x[-1]]
            if lines:
                panels.append((ylabel, lines))
        if not panels:
            continue
        fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, 2.6 * len(panels) + 0.8),
                                 sharex=True, squeeze=False)
        colors = {v: "C%d" % (i % 10) for i, v in enumerate(runs)}
        for ax, (ylabel, lines) in zip(axes[:, 0], panels):
            for v, col, k, ls, pts in lines:
                ax.plot([p[0] for p in pts], [p[1] * k / (1 << 20) for p in pts], ls=ls,
                        color=colors[v], lw=1.2, label=v if ls == "-" else None,
                        marker=K.MARKERS[list(runs).index(v) % len(K.MARKERS)], ms=2,
                        markevery=max(1, len(pts) // 10))
            ax.set_ylabel(ylabel, fontsize=8)
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            K.legend(ax)
        first = next((r for r in sr if (r["index"], r.get("record") or 0) in
                      {ix for ix in runs.values()}), None)
        _phase_lines(axes[:, 0], phases_of(first) if first else [])
        axes[-1, 0].set_xlabel("seconds since the run started")
        K.title(axes[0, 0], "%s, t=%d: memory over time (first repetition; one sample "
               "every interval_s)" % (w, t), fontsize=10)
        files.append(K.save(fig, outdir, "series-%s.png" % K.fname(w)))
    return files

"""The report's head: the sweep, machine, compiler and commit, the runs, how noise is shown
and decided, and warnings when the machine was busy or the build stale."""
from .. import fmt as F, runkit, verdicts as V

NOISY = 1.25         # warn when repetitions differ by more than this (median group)


def header(meta, rows, name):
    m = meta.get("machine") or {}
    sw = meta.get("sweep") or {}
    comp = meta.get("compiler") or {}
    git = meta.get("git") or {}
    n_ok = sum(1 for r in rows if r.get("status") == "ok")
    lines = ["# hoardlab sweep `%s`" % name, ""]
    if sw.get("description"):
        lines += [sw["description"], ""]
    topo = m.get("topology") or {}
    lines += [
        "- date: %s" % meta.get("created_at", "?"),
        "- machine: %s, %s cores (hwloc: %s packages, %s cores, %s PUs), %s, kernel %s"
        % (m.get("cpu_model", "?"), m.get("cores", "?"), topo.get("package", "?"),
           topo.get("core", "?"), topo.get("pu", "?"), m.get("os", "?"), m.get("kernel", "?")),
        "- compiler: %s; commit %s%s" % (comp.get("version", "?"),
                                         (git.get("commit") or "?")[:12],
                                         " (uncommitted changes)" if git.get("dirty") else ""),
        "- runs: %d, %d ok, %d not ok; shuffle seed %s" % (len(rows), n_ok, len(rows) - n_ok,
                                                           meta.get("shuffle_seed", "?")),
        "- data: `runs.csv` (one row per run), `rounds.csv` (blowup rounds), %s`meta.json`; "
        "columns in `results/README.md`" % ("`series.csv` (memory over time), " if any(
            r.get("series.samples") for r in rows) else "")]
    where = runkit.kinds_header_line(meta)         # a sweep on Slurm: its jobs and nodes
    if where:
        lines.append(where)
    if meta.get("interrupted"):
        lines.append("- **interrupted**: %s of %s planned runs were done" % (
            meta.get("runs_done", "?"), meta.get("runs_planned", "?")))
    lines += noise_lines(rows, F.cores_of(meta, rows))
    la0, la1 = m.get("loadavg_start"), m.get("loadavg_end")
    if la0 or la1:
        most = max([V.threads_run(r) or 0 for r in rows] or [0])
        lines.append("- load average (1 min) at start / end: %s / %s on %s cores%s" % (
            la0[0] if la0 else "?", la1[0] if la1 else "?", m.get("cores", "?"),
            "; the sweep's own runs use up to %d threads, which raises it" % most
            if most > (m.get("cores") or most) else ""))
    lines += load_lines(meta, rows) + calibration_lines(meta)
    lines.append("")
    build = meta.get("build") or {}
    if build.get("ran") is False and build.get("stale"):
        lines += ["> **Warning: this sweep ran with --no-build while the build was older than "
                  "the source**: the runs measured binaries that do not match the tree above. "
                  "Rerun without --no-build to measure the code as it is.", ""]
    return lines + machine_warnings(meta, rows)


def machine_warnings(meta, rows):
    """The warning (busy machine) or note (the machine's own noise) a sweep's timing
    verdicts carry, as blockquote lines followed by an empty line; [] when the runs were
    quiet. One function, so the report's head and `compare` say the same thing."""
    m = meta.get("machine") or {}
    la0, la1 = m.get("loadavg_start"), m.get("loadavg_end")
    spread = V.rep_spread(rows)
    noise = V.median(sorted(spread.values())) if spread else None
    lines = []
    cores = m.get("cores") or 1
    busy = [x[0] for x in (la0, la1) if x and x[0] > cores + 0.5]
    seen_idle = meta.get("load") and not any(r.get("load.busy") for r in rows)
    if noise and noise > NOISY and not busy and seen_idle:
        # Other processes were watched and never showed up: the spread is the machine's own
        # (a VM's host, frequency changes), which no idle rerun removes.
        lines += ["> **Note: repetitions differ by %.2fx in the median group although no other "
                  "load was seen** during any run: that is this machine's own run-to-run noise, "
                  "which an idle rerun does not remove. Verdicts whose interval reaches their "
                  "threshold say *within noise*; more repetitions (`repetitions`, "
                  "`--extra-time`) narrow the intervals." % noise, ""]
    elif busy or (noise and noise > NOISY):
        lines += ["> **Warning: the machine was busy or noisy during this sweep** (%s). "
                  "Timing verdicts (fast?, scalable?, and false sharing where decided from "
                  "speed) are unreliable here; the census and memory verdicts do not depend on "
                  "timing. Rerun on an otherwise idle machine to decide the timing claims." %
                  "; ".join(([("load average %.1f on %d cores" % (max(busy), cores))]
                             if busy else []) +
                            ([("repetitions differ by %.2fx in the median group" % noise)]
                             if noise and noise > NOISY else [])), ""]
    return lines


def load_lines(meta, rows):
    """The header's lines on other processes' load (runs.csv's load.* columns, meta.json's
    `load`): the runs made on a busy machine and the groups they touched, the waiting, the
    runs redone and the repetitions added to undecided groups."""
    ld = meta.get("load")
    if not ld:
        return []
    out = []
    during = [r["load.during_cpus"] for r in rows if r.get("load.during_cpus") is not None]
    out.append("- other load: before each run the sweep waited up to %gs for other processes "
               "to use at most %g CPUs (%d runs waited, %.0f s in all)%s; other processes' "
               "median use during a run: %.2f CPUs" % (
                   ld.get("quiet_wait_s", 0), ld.get("busy_cpus", 0), ld.get("runs_waited", 0),
                   ld.get("waited_s", 0), "; the load did not stop, so from run %d on it no "
                   "longer waited" % ld["gave_up_waiting_at"] if ld.get("gave_up_waiting_at")
                   is not None else "", V.median(during) or 0.0))
    out += busy_lines(meta, rows)
    stop = ld.get("extra_stopped")
    if stop:
        # the load never paused: every added run would have been set aside as busy too
        what = "looks" if "looks" in stop else "runs"
        out.append("- **%srepetitions added**: the machine was busy throughout %s: %d %s, "
                   "none quiet; more repetitions could not decide these verdicts: %s" % (
                       "no more " if ld.get("extra_runs") else "no ", stop.get("during"),
                       stop.get(what, 0), what,
                       "; ".join(ld.get("still_undecided") or []) or "none"))
    if ld.get("extra_runs") or (ld.get("still_undecided") and not stop):
        lost = ld.get("extra_lost_s")
        out.append("- **repetitions added**: %d runs (budget %g s%s) for groups whose timing "
                   "verdict was within noise: %s%s" % (
                       ld.get("extra_runs", 0), ld.get("extra_time_s", 0),
                       " + %g s the disturbed runs took" % lost if lost else "",
                       "; ".join(ld.get("extra") or []) or "none",
                       "; still within noise: %s" % "; ".join(ld["still_undecided"])
                       if ld.get("still_undecided") else ""))
    return out


def busy_lines(meta, rows):
    """The line naming the runs made while other processes used more CPUs than the sweep
    allows (runs.csv's load.busy) and the groups they touched, and the runs redone; [] when
    none. `compare` repeats it for each folder it reads."""
    ld = meta.get("load") or {}
    busy = [r for r in rows if r.get("load.busy")]
    keys = sorted({(r["variant"], r["workload_label"], r["threads"]) for r in busy})
    redone = ld.get("redone") or []
    if not (busy or redone):
        return []
    return ["- **busy machine**: %d of %d runs ran while other processes used more than %g "
            "CPUs%s; %d disturbed runs were redone later in the order (budget %d%% of the "
            "runs)" % (len(busy), len(rows), ld.get("busy_cpus", 0),
                       ", in %d groups: %s%s" % (len(keys), "; ".join(
                           group_text(k) for k in keys[:8]), "; and %d more" % (len(keys) - 8)
                           if len(keys) > 8 else "") if keys else "", len(redone),
                       round(100 * ld.get("redo_share", 0)))]


def calibration_lines(meta):
    """The header's line on the scales calibrated to this machine (sweeps/calibrate.py)."""
    cal = meta.get("calibration")
    if not cal:
        return []
    wl = cal.get("workloads") or {}
    grown = ["%s %g -> %g (shortest run %.3f s: %s)" % (k, w["planned"], w["scale"],
                                                        w["shortest_s"], w["by"])
             for k, w in sorted(wl.items()) if w["scale"] != w["planned"]]
    return ["- runs sized to the machine: each timing workload's shortest run estimated from "
            "one run of every group at %g of its scale%s; a scale grows until that run lasts "
            "%g s: %s" % (cal.get("fraction", 0), " (kept from an earlier sweep of this file on "
                          "this machine)" if cal.get("reused") else "",
                          cal.get("target_s", 0), "; ".join(grown) or "none needed to")]


def group_text(key):
    v, w, t = key
    return "%s on %s at t=%d" % (v, w, t)


def noise_lines(rows, ncores):
    """The header's lines on noise: how spreads are shown, when they decide, the noisiest
    groups by name, the runs too short to time, and the rule for thread counts."""
    out = ["- spread: " + F.SPREAD_NOTE, "- noise decides: " + V.NOISE_RULE]
    spread = V.rep_spread(rows)
    if spread:
        vals = sorted(spread.values())
        out.append("- run-to-run noise: throughput max/min over the repetitions of one "
                   "allocator, workload and thread count is %.2f in the median group and "
                   "%.2f in the worst; noisiest: %s" % (
                       V.median(vals), vals[-1], "; ".join(
                           "%s %.2f" % (group_text(k), x) for k, x in V.noisiest(rows))))
    short = V.short_groups(rows)
    if short:
        names = sorted(short, key=lambda k: (short[k], k))
        out.append("- **short runs**: %d group(s) ran for less than %.2g s (median wall time), "
                   "where thread start-up, the first page faults and one lost time slice "
                   "weigh as much as the allocator; their times are not evidence: %s%s" % (
                       len(short), V.SHORT_RUN_S, "; ".join(
                           "%s %.3f s" % (group_text(k), short[k]) for k in names[:8]),
                       "; and %d more" % (len(names) - 8) if len(names) > 8 else ""))
    out.append("- thread counts: " + V.THREADS_RULE + " Here P = %s (%d cores)." % (
        V.timing_threads([r.get("threads") for r in V.timing_rows(rows)], ncores) or "–",
        ncores))
    more = sorted({(r["workload_label"], r["threads"], V.threads_run(r)) for r in V.ok(rows)
                   if V.threads_run(r) != r.get("threads")})
    if more:
        out.append("- threads as run: %s (a table's t is the workload's `threads`)" % "; ".join(
            "%s t=%d ran %d threads" % m for m in more[:6]))
    return out

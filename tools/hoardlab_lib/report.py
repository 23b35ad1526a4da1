"""report.md: the taxonomy (Hoard Table 7) decided from measurements beside the paper's
claims, then the other published results the data of this sweep can speak to (Tables 3-6,
the uC++ padding experiment, Michael's producer-consumer), throughput and memory tables,
failures and plots. Every comparison with a paper states its rule; a disagreement is
flagged as MISMATCH, never smoothed over, and a difference inside the noise of the groups
compared says "within noise" (verdicts.NOISE_RULE). Every measured median is shown with its
spread by one function, pm()."""
import json
import os

from . import (cost, nodes, paper, report_hoard, report_hoard2026, report_history,
               report_michael, report_programs, report_remote, report_series, verdicts as V)

NOISY = 1.25         # warn when repetitions differ by more than this (median group)


def si(x):
    if x is None:
        return "–"
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return "%.3g%s" % (x / div, suf)
    return "%.3g" % x


def mib(x):
    return "–" if x is None else "%.2f" % (x / (1 << 20))


SPREAD_NOTE = ("Every measured median in the tables below (a time, a throughput, memory, or "
               "a ratio of them) is shown as `median ±p%`: all repetitions of the group lie "
               "within p% of the median (p = the larger of max/median - 1 and 1 - "
               "min/median); for a ratio of two medians, p covers every ratio of a repetition "
               "of one group to a repetition of the other. `±?`: one repetition, no spread "
               "known.")


def pm(s, fmt=si):
    """A Spread (verdicts.Spread) as 'median ±p%' (SPREAD_NOTE): the one notation of a
    measured median in every table; fmt formats the median ('%.2f' or a function)."""
    if s is None or s.med is None:
        return "–"
    text = fmt(s.med) if callable(fmt) else fmt % s.med
    if s.n < 2:
        return text + " ±?"
    return "%s ±%.0f%%" % (text, s.rel() * 100)


# A Spread in a check's sentence, with the interval the check decides on:
# '0.38 [0.36, 0.72]' (pm() is the cells' shorter form).
iv = V.interval_text


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def mark(agree):
    """A check's word: True agrees, False **MISMATCH**, None (verdicts.check() could not
    decide: the interval reaches the threshold) within noise."""
    if agree is None:
        return V.WITHIN_NOISE
    return "agrees" if agree else "**MISMATCH**"


def _cores(meta, rows):
    c = (meta.get("machine") or {}).get("cores")
    if not c:
        cs = [r.get("cores") for r in rows if r.get("cores")]
        c = max(cs) if cs else 1
    return int(c)


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
    where = nodes.header_line(meta)         # a sweep on Slurm: its jobs and nodes
    if where:
        lines.append(where)
    if meta.get("interrupted"):
        lines.append("- **interrupted**: %s of %s planned runs were done" % (
            meta.get("runs_done", "?"), meta.get("runs_planned", "?")))
    lines += noise_lines(rows, _cores(meta, rows))
    spread = V.rep_spread(rows)
    noise = V.median(sorted(spread.values())) if spread else None
    la0, la1 = m.get("loadavg_start"), m.get("loadavg_end")
    if la0 or la1:
        most = max([V.threads_run(r) or 0 for r in rows] or [0])
        lines.append("- load average (1 min) at start / end: %s / %s on %s cores%s" % (
            la0[0] if la0 else "?", la1[0] if la1 else "?", m.get("cores", "?"),
            "; the sweep's own runs use up to %d threads, which raises it" % most
            if most > (m.get("cores") or most) else ""))
    lines.append("")
    build = meta.get("build") or {}
    if build.get("ran") is False and build.get("stale"):
        lines += ["> **Warning: this sweep ran with --no-build while the build was older than "
                  "the source**: the runs measured binaries that do not match the tree above. "
                  "Rerun without --no-build to measure the code as it is.", ""]
    cores = m.get("cores") or 1
    busy = [x[0] for x in (la0, la1) if x and x[0] > cores + 0.5]
    if busy or (noise and noise > NOISY):
        lines += ["> **Warning: the machine was busy or noisy during this sweep** (%s). "
                  "Timing verdicts (fast?, scalable?, and false sharing where decided from "
                  "speed) are unreliable here; the census and memory verdicts do not depend on "
                  "timing. Rerun on an otherwise idle machine to decide the timing claims." %
                  "; ".join(([("load average %.1f on %d cores" % (max(busy), cores))]
                             if busy else []) +
                            ([("repetitions differ by %.2fx in the median group" % noise)]
                             if noise and noise > NOISY else [])), ""]
    return lines


def group_text(key):
    v, w, t = key
    return "%s on %s at t=%d" % (v, w, t)


def noise_lines(rows, ncores):
    """The header's lines on noise: how spreads are shown, when they decide, the noisiest
    groups by name, the runs too short to time, and the rule for thread counts."""
    out = ["- spread: " + SPREAD_NOTE, "- noise decides: " + V.NOISE_RULE]
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


def failures(rows):
    bad = [r for r in rows if r.get("status") != "ok"]
    if not bad:
        return ["## Failed runs", "", "None.", ""]
    rs = [(r["variant"], r["workload_label"], r["threads"], r["repetition"], r["status"],
           r.get("exit_code") if r.get("exit_code") is not None else "–",
           (r.get("error") or "").replace("|", "/")[-160:]) for r in bad]
    return ["## Failed runs", "",
            "These runs are excluded from every number below; the sweep went on.", "",
            table(["allocator", "workload", "threads", "rep", "status", "exit", "message"], rs),
            ""]


def taxonomy_section(rows, rounds, ncores):
    """Table 7 compares strategies: it appears only when the sweep measured two or more (a
    one-knob experiment on one strategy has the knob table instead)."""
    tax = V.taxonomy(rows, rounds, ncores)
    if len({e["strategy"] for e in tax}) < 2:
        return [], tax
    out = ["## Taxonomy (Hoard Table 7), from measurements", ""]
    if ncores < V.FEW_CORES:
        out += ["This machine has **%d cores**. Speedups can show at most %d-fold, so "
                "scalable? and the timing side of false sharing are weak evidence here, "
                "and claims that need many processors (the paper used 14) cannot be "
                "confirmed; verdicts that cannot be decided say `undecided` with the reason."
                % (ncores, ncores), ""]
    hdr = ["strategy", "fast?", "paper", "scalable?", "paper", "avoids false sharing?",
           "paper", "blowup", "paper", "mismatches"]
    rs = []
    for e in tax:
        c = e["claim"]
        cells = [e["variant"]]
        for k in ("fast", "scalable", "false_sharing", "blowup"):
            v = e[k]["value"]
            cells.append(("**%s**" % v) if k in e["mismatches"] else v)
            cells.append(paper.claim_text(c[k]) if c else "not in Table 7")
        cells.append(", ".join("**%s**" % m for m in e["mismatches"]) if e["mismatches"]
                     else ("none" if c else "no claim"))
        rs.append(cells)
    out += [table(hdr, rs), ""]
    mism = [(e["variant"], k) for e in tax for k in e["mismatches"]]
    if mism:
        out += ["**Mismatches with the paper (%d):** %s. These are what this machine "
                "measured; they are reported, not corrected." %
                (len(mism), "; ".join("%s %s" % m for m in mism)), ""]
    else:
        out += ["No decided verdict contradicts the paper.", ""]
    out += ["### Evidence", ""]
    for e in tax:
        c = e["claim"]
        out.append("- **%s** (%s):" % (e["variant"], c["category"] if c else "no paper claim"))
        for k, title in (("fast", "fast?"), ("scalable", "scalable?"),
                         ("false_sharing", "avoids false sharing?"), ("blowup", "blowup")):
            v = e[k]
            out.append("  - %s %s — %s%s" % (title, v["value"], v["evidence"],
                                            (" (%s)" % v["note"]) if v["note"] else ""))
    out += ["", "### Rules", ""]
    for k in ("fast", "scalable", "false_sharing", "blowup"):
        out.append("- " + V.RULES[k])
    out += ["- A verdict is a mismatch when it is decided and not among the answers the "
            "paper's Table 7 gives for the strategy's category (for private heaps with "
            "ownership the paper's three allocators differ, so any of their answers agrees).",
            "- fast?, scalable? and false sharing from timing decide on the interval of their "
            "number (the geometric mean of the ratios' intervals; header: noise decides): a "
            "verdict whose interval reaches a threshold is *%s*, which is never a mismatch."
            % V.WITHIN_NOISE, ""]
    return out, tax


def ucpp(rows, ncores):
    conc = [r for r in V.timing_rows(rows) if r.get("strategy") == "concurrent" and
            r["workload"] in ("ucpp-unique", "ucpp-random")]
    pads = {}
    for r in conc:
        p = str(r.get("knob.padding", "off"))
        pads.setdefault(V.truthy(p), set()).add(r["variant"])
    if len(pads) < 2:
        return []
    p = V.timing_threads([r["threads"] for r in conc if r["threads"] > 1], ncores)
    out = ["## Padding the free-list heads (uC++ report)", "",
           "Speedup over 1 thread of `concurrent` with padding off and on, at P = %s (the "
           "thread-count rule in the header; %d cores). The uC++ report found a slowdown with "
           "threads on ucpp-unique without padding, removed by padding each free-list head to "
           "a cache line." % (p or "–", ncores), ""]
    rs, checks = [], []
    for w in ("ucpp-unique", "ucpp-random"):
        s = {}
        for on, vs in sorted(pads.items()):
            for v in sorted(vs):
                sp = V.speedup_spreads(rows, v, (w,), max_threads=p)
                if w in sp:
                    s[(on, v)] = sp[w]
        if not s:
            continue
        for (on, v), (x, t) in sorted(s.items()):
            def census(field):
                vals = [r.get(field) for r in V.ok(rows)
                        if r["variant"] == v and r["workload"] == w and V.is_census(r) and
                        r.get(field) is not None]
                return max(vals) if vals else "–"
            rs.append([w, v, "on" if on else "off", "%s (t=%d)" % (pm(x, "%.2f"), t),
                       census("hoardlab.census_false_blocks"),
                       census("hoardlab.census_meta_false")])
        if w == "ucpp-unique":
            off = [x for (on, _), (x, _) in s.items() if not on]
            on_ = [x for (on, _), (x, _) in s.items() if on]
            if off and on_:
                lo, hi = min(off, key=lambda x: x.med), max(on_, key=lambda x: x.med)
                checks.append("padding=off slows down with threads (S < 1): S = %s — %s"
                              % (iv(lo), mark(V.check(lo, "<", 1.0))))
                checks.append("padding=on removes the slowdown (S >= 1 and above off): "
                              "S = %s against %s — %s" % (iv(hi), iv(lo), mark(V.all_hold(
                                  V.check(hi, ">=", 1.0), V.differ(hi, lo)))))
            meta = {row[2]: row[5] for row in rs if row[0] == w and row[5] != "–"}
            if "off" in meta and "on" in meta:
                checks.append("the census sees the free-list heads falsely shared with "
                              "padding off (> 0) and not with it on (0): %s and %s — %s"
                              % (meta["off"], meta["on"],
                                 mark(meta["off"] > 0 and meta["on"] == 0)))
    if not rs:
        return []
    out += [table(["workload", "allocator", "padding", "speedup", "census blocks",
                   "census metadata"], rs), ""]
    out += ["- " + c for c in checks]
    out += ["", "census blocks: blocks handed out on a line another thread held (the program's "
            "data); census metadata: touches of a free-list head on a cache line last touched "
            "by another thread for another list (the allocator's own data, which padding "
            "separates).", ""]
    return out


def knob_section(rows, meta, ncores=None):
    """Generic: for every swept knob, throughput and A/U by value."""
    swept = sorted({k[5:] for r in rows for k in r if k.startswith("knob.")} - {"census"})
    ncores = ncores or _cores(meta, rows)
    out = []
    for knob in swept:
        vals = sorted({str(r["knob." + knob]) for r in V.ok(rows)
                       if r.get("knob." + knob) is not None})
        if len(vals) < 2 or knob == "empty_fraction":
            continue
        out += ["### Knob `%s`" % knob, ""]
        rs = []
        for w in sorted({r["workload_label"] for r in V.timing_rows(rows)}):
            for strat in sorted({r["strategy"] for r in V.timing_rows(rows)
                                 if r.get("knob." + knob) is not None}):
                rr = [r for r in V.timing_rows(rows) if r["workload_label"] == w and
                      r["strategy"] == strat and r.get("knob." + knob) is not None]
                if not rr:
                    continue
                t = V.timing_threads([r["threads"] for r in rr], ncores)
                cells = [w, strat, V.threads_text(rr, w, t)]
                first = None
                for val in vals:
                    x = V.spread_of([r["throughput"] for r in rr if str(r["knob." + knob]) == val
                                     and r["threads"] == t])
                    fr = V.spread_of([r.get("hoardlab.fragmentation") for r in rr
                                      if str(r["knob." + knob]) == val and r["threads"] == t])
                    first = first or x
                    q = V.ratio(x, first) if x is not first else None
                    vs_first = "" if q is None else " (%s%s)" % (
                        pm(q, "x%.2f"), ", %s" % V.WITHIN_NOISE
                        if V.check(q, ">", 1.0) is None else "")
                    cells.append("%s%s%s" % (pm(x), vs_first,
                                             (" / %s" % pm(fr, "%.2f")) if fr else ""))
                rs.append(cells)
        out += [table(["workload", "strategy", "threads"] + ["%s=%s" % (knob, v) for v in vals],
                      rs), "", "Cells: median throughput (ops/s), in brackets its ratio to the "
                "first column's (`%s=%s`; *%s* when the ratio's interval contains 1: no "
                "evidence the knob changed the speed) / A/U, at P (the thread-count rule in "
                "the header)." % (knob, vals[0], V.WITHIN_NOISE), ""]
    if out:
        out = ["## Knob comparisons", ""] + out
    return out


def throughput_tables(rows, baseline, ncores=None):
    tab = V.throughput_spreads(rows)
    short = V.short_groups(rows)
    out = ["## Throughput", "",
           "Median operations per second over repetitions, at every thread count measured%s; "
           "the speedup is P's over 1 thread (P: the thread-count rule in the header, or the "
           "highest count when every one is above the cores); `(short)`: runs under %.2g s "
           "(header)." %
           ("; in brackets relative to `%s` at the same thread count" % baseline
            if baseline else "", V.SHORT_RUN_S)]
    for w in sorted({w for (_, w, _) in tab}):
        ts = sorted({t for (_, ww, t) in tab if ww == w})
        rs = []
        for v in V.variants(rows):
            if not any((v, w, t) in tab for t in ts):
                continue
            cells = [v]
            for t in ts:
                x = tab.get((v, w, t))
                ref = tab.get((baseline, w, t)) if baseline and baseline != v else None
                rel = V.ratio(x, ref)
                cells.append("–" if x is None else pm(x) + (" (%s)" % pm(rel, "%.2f")
                                                             if rel else "") +
                             (" (short)" if (v, w, t) in short else ""))
            p = V.timing_threads(ts[1:], ncores) if ncores else (ts[-1] if ts else None)
            sp = V.ratio(tab.get((v, w, p)), tab.get((v, w, 1))) \
                if len(ts) > 1 and ts[0] == 1 else None
            cells.append(pm(sp, "%.2f") if sp else "–")
            rs.append(cells)
        p = V.timing_threads(ts[1:], ncores) if ncores and len(ts) > 1 else ts[-1]
        out += ["", "### %s" % w, "",
                table(["allocator"] + ["t=%s" % V.threads_text(rows, w, t) for t in ts] +
                      ["speedup t=%d / t=1" % p if len(ts) > 1 else "speedup"], rs)]
    return out + [""]


def production_section(rows):
    """The best production allocator per workload and thread count (the fastest of all the
    production allocators measured, by median throughput), the runner-up, and every hoardlab
    allocator relative to the best."""
    rank = V.production_ranking(rows)
    prod = sorted({v for lst in rank.values() for v, _ in lst})
    if len(prod) < 2:       # one production allocator: the throughput tables say it all
        return []
    tab = V.throughput_spreads(rows)
    hl = [v for v in V.variants(rows) if any(
        r["variant"] == v and r.get("alloc_kind") != "production" for r in V.timing_rows(rows))]
    out = ["## Against the best production allocator", "",
           "Per workload and thread count, the production allocator with the highest median "
           "throughput among the %d measured (%s), the runner-up with its throughput relative "
           "to the best, and each other allocator's median throughput relative to the best "
           "(above 1: faster than every production allocator measured). A ratio whose interval "
           "contains 1 is within noise." % (len(prod), ", ".join(prod)),
           ""]
    rs = []
    ratios = {v: [] for v in hl}
    for (wl, t) in sorted(rank):
        (best, bthr), rest = rank[(wl, t)][0], rank[(wl, t)][1:]
        b = tab.get((best, wl, t))
        cells = [wl, V.threads_text(rows, wl, t), "%s %s" % (best, pm(b)),
                 "%s (%s)" % (rest[0][0], pm(V.ratio(tab.get((rest[0][0], wl, t)), b), "%.2f"))
                 if rest else "–"]
        for v in hl:
            x = V.ratio(tab.get((v, wl, t)), b)
            cells.append(pm(x, "%.2f") if x else "–")
            if x:
                ratios[v].append(x.med)
        rs.append(cells)
    out += [table(["workload", "threads", "best production (ops/s)", "runner-up"] + hl, rs),
            ""]
    wins = {}
    for lst in rank.values():
        wins[lst[0][0]] = wins.get(lst[0][0], 0) + 1
    out.append("- best production allocator in how many of the %d cells: %s" % (
        len(rank), ", ".join("%s %d" % (v, n)
                             for v, n in sorted(wins.items(), key=lambda vn: (-vn[1], vn[0])))))
    for v in hl:
        g = V.gmean(ratios[v])
        if g:
            out.append("- %s / best production, geometric mean over the %d cells: %.2f"
                       % (v, len(ratios[v]), g))
    excluded = sorted({r["workload_label"] for r in V.timing_rows(rows)
                       if r["workload_label"].startswith(V.TIMING_WORKLOADS_EXCLUDED)})
    if excluded:
        out.append("- not ranked (memory workloads): " + ", ".join(excluded))
    return out + [""]


def memory_tables(rows):
    okr = [r for r in V.ok(rows) if not V.is_census(r)]
    ref = V.reference_variant(rows, "serial")
    out = ["## Memory", "",
           "At the highest thread count (memory needs no cores), median over repetitions. "
           "A = peak bytes held from "
           "the OS and U = peak bytes in use (hoardlab statistics); allocators without them "
           "show peak RSS. Blowup = A / A of `serial` on the same workload and threads.", ""]
    rs = []
    for w in sorted({r["workload_label"] for r in okr}):
        t = max(r["threads"] for r in okr if r["workload_label"] == w)
        refa = V.spread_of([V.memory_of(r)[0] for r in okr if r["variant"] == ref and
                            r["workload_label"] == w and r["threads"] == t]) if ref else None
        for v in V.variants(okr):
            rr = [r for r in okr if r["variant"] == v and r["workload_label"] == w and
                  r["threads"] == t]
            if not rr:
                continue
            a = V.spread_of([V.memory_of(r)[0] for r in rr])
            src = V.memory_of(rr[0])[1]
            u = V.spread_of([r.get("hoardlab.in_use_peak") for r in rr])
            fr = V.spread_of([r.get("hoardlab.fragmentation") for r in rr])
            bl = V.ratio(a, refa) if src == "A" else None
            rs.append([w, V.threads_text(rr, w, t), v, "%s %s" % (pm(a, mib), src),
                       pm(u, mib), pm(fr, "%.2f") if fr and fr.med else "–",
                       pm(bl, "%.2f") if bl else "–"])
    return out + [table(["workload", "threads", "allocator", "MiB held", "MiB U", "A/U",
                         "blowup"], rs), ""]


def cost_section(outdir, meta):
    """From cost.json (a sweep with `cost = yes`, or `hoardlab cost --json` copied there)."""
    title = ["## Instructions per malloc+free pair (callgrind)", ""]
    err = (meta.get("cost") or {}).get("error")
    try:
        with open(os.path.join(outdir, "cost.json")) as f:
            results = json.load(f)
        tab = cost.table(results)
    except FileNotFoundError:
        return title + ["Not measured: %s" % err, ""] if err else []
    except (OSError, ValueError, KeyError, TypeError) as e:
        return title + ["`cost.json` could not be read: %r" % e, ""]
    names = ",".join(dict.fromkeys(r["allocator"] for r in results))
    pairs = results[0].get("pairs") or cost.PAIRS
    return title + [
        "Counted by valgrind's callgrind after the timed runs: `harness/hlcost` mallocs and "
        "frees a block of the case's size (remote: a second thread mallocs, the main thread "
        "frees) %d and 3 x %d times, and a cell is the slope (I(3 x %d) - I(%d)) / (2 x %d), "
        "so start-up and exit cancel. Instruction counts are deterministic, unlike the timings "
        "above: the machine's load does not change them, and a rerun repeats them (except "
        "where an allocator's own path varies from run to run, as jemalloc's does in the "
        "remote case, by a few percent). Strategies run with their default configuration. `tools/hoardlab cost -a %s%s` reproduces this table."
        % (pairs, pairs, pairs, pairs, pairs, names,
           "" if pairs == cost.PAIRS else " --pairs %d" % pairs), "", tab, "",
        "front: the core's code around the strategy (init check, size routing, dispatch, "
        "free routing); counting: the statistics, the pair less the same pair with counting "
        "= off (`uncounted`, fast paths built without counting; older results split stats.h's "
        "lines instead, `stats`); strategy: the rest of libhoardlab.so, the "
        "strategy and the mechanisms it uses; caller: hlcost's loop and the PLT, the same "
        "for every allocator. `tools/hoardlab cost --functions` splits a pair per function.",
        ""]


def plots_section(files, errors):
    out = ["## Plots", ""]
    for f in files:
        out += ["![%s](%s)" % (f, f), ""]
    for e in errors:
        out.append("- plot not drawn: %s" % e)
    if not files and not errors:
        out.append("No plots (nothing measured).")
    return out + [""]


def write(outdir, rows, rounds, meta, plot_files, plot_errors, name=None):
    ncores = _cores(meta, rows)
    sw = meta.get("sweep") or {}
    baseline = sw.get("baseline")
    name = name or sw.get("name") or os.path.basename(outdir.rstrip("/"))
    lines = header(meta, rows, name)
    lines += failures(rows)
    progs = report_programs.programs_section(rows, meta)
    if progs:
        progs += report_series.memory_over_time_section(report_programs.program_rows(rows),
                                                        programs=True)
    tax = []
    bench = report_programs.bench_rows(rows)
    if bench or not progs:          # the hlbench sections, on hlbench's rows
        rows = bench
        tax_lines, tax = taxonomy_section(rows, rounds, ncores)
        lines += tax_lines
        lines += report_hoard.sections(rows, ncores)
        lines += ucpp(rows, ncores)
        lines += report_remote.remote_free_section(rows, rounds, ncores)
        lines += report_michael.michael_section(rows, rounds, ncores, outdir)
        lines += report_hoard2026.hoard2026_section(rows, rounds, ncores)
        lines += report_history.history_section(rows, rounds, ncores)
        lines += knob_section(rows, meta, ncores)
        lines += throughput_tables(rows, baseline, ncores)
        lines += production_section(rows)
        lines += memory_tables(rows)
        lines += report_series.memory_over_time_section(rows)
        lines += report_series.latency_section(rows, ncores)
    lines += progs
    lines += cost_section(outdir, meta)
    lines += plots_section(plot_files, plot_errors)
    path = os.path.join(outdir, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")
    return path, tax

"""The taxonomy verdict rules: fast?, scalable?, avoids false sharing?, blowup, each a
named function whose docstring states it (the report prints RULES), and the taxonomy of
every strategy measured."""
from .. import paper
from .blowup import BLOWUP_WORKLOADS, LIVE_FLAT, P_GROWTH_SHARE, ROUNDS_GROWTH, blowup
from .groups import (TIMING_WORKLOADS_EXCLUDED, is_census, ok, reference_variant,
                     speedup_spreads, throughput_groups, throughput_spreads)
from .noise import (WITHIN_NOISE, Spread, all_hold, check, decided, gmean_spread,
                    interval_text, median, ratio, verdict)

FAST_MIN_RATIO = 0.8          # fast: 1-thread throughput >= 80% of serial's
SCALE_YES_GAIN = 0.5          # scalable yes: at least half the ideal extra speedup
SCALE_NO_GAIN = 0.15          # scalable no: less than 15% of it
FEW_CORES = 4                 # below this many cores, scalability evidence is weak

SCALE_WORKLOADS = ("threadtest", "shbench", "larson", "linux-scalability")
FS_CENSUS_WORKLOADS = ("active-false", "passive-false", "threadtest", "shbench")
# larson's threads inherit the live blocks of the generation before them, so the program
# itself puts two threads' blocks on one line: there the broad census is shown, not used, and
# the paper's measure (census_paper, 0 where no superblock changes heap) decides.
FS_PROGRAM_SHARED = ("larson",)
FS_TIMING_WORKLOADS = ("active-false", "passive-false")

RULES = {
    "fast": "fast? = yes if the geometric mean, over the workloads measured at 1 thread, of "
            "(median throughput / median throughput of `serial`) is >= %.2f; else no."
            % FAST_MIN_RATIO,
    "scalable": "scalable? from speedup S = median throughput at T / median throughput at 1 "
                "thread (geometric mean over %s), T = P of the thread-count rule (the largest "
                "thread count measured not above the cores, else the smallest above 1). With "
                "ideal I = min(T, cores) and gain g = (S-1)/(I-1): yes if g >= %.2f, no if "
                "g < %.2f, maybe in between. Undecided when I < 2."
                % (", ".join(SCALE_WORKLOADS), SCALE_YES_GAIN, SCALE_NO_GAIN),
    "false_sharing": "avoids false sharing? = yes if the census (census=on runs with >= 2 "
                     "threads on %s) counts 0 falsely-shared blocks in every run; no if any "
                     "run counts more. On %s, whose threads inherit live blocks from the "
                     "threads before them so that the program itself shares lines, the broad "
                     "count is shown, not used, and the paper's measure (census_paper: blocks "
                     "other threads held in a superblock a heap took from the global heap) "
                     "counts instead. Without census runs: from active-false "
                     "and passive-false speedups, yes if both reach gain g >= %.2f (as for "
                     "scalable?), else no."
                     % (", ".join(FS_CENSUS_WORKLOADS), ", ".join(FS_PROGRAM_SHARED),
                        SCALE_YES_GAIN),
    "blowup": "blowup: unbounded if, in a blowup workload (%s), memory held (A, or RSS for "
              "allocators without hoardlab statistics) at the last round is >= %.1f x that "
              "at round n/4 while live bytes grew < %d%%; else O(P) if blowup b(T) = A / A "
              "of `serial` at the same thread count on blowup-roundrobin grows from the "
              "lowest to the highest thread count by >= %.1f of the thread ratio's growth "
              "(b(Tmax)/b(Tmin) >= 1 + %.1f (Tmax/Tmin - 1)); else O(1). Both growths are medians "
              "over repetitions, decided on their intervals: one whose interval reaches its "
              "line makes the class within noise. Undecided when the "
              "blowup workloads were not measured or only at one thread count."
              % (", ".join(BLOWUP_WORKLOADS), ROUNDS_GROWTH, round((LIVE_FLAT - 1) * 100),
                 P_GROWTH_SHARE, P_GROWTH_SHARE),
}


def fast(rows, variant, reference):
    """fast?: 1-thread throughput against `serial` (rule: RULES['fast'])."""
    if reference is None:
        return verdict("undecided", "serial was not measured")
    tab = throughput_spreads(rows)
    ratios = []
    for (v, wl, t), thr in sorted(tab.items()):
        if v != variant or t != 1 or wl.startswith(TIMING_WORKLOADS_EXCLUDED):
            continue
        x = ratio(thr, tab.get((reference, wl, 1)))
        if x and x.med:
            ratios.append((wl, x))
    if not ratios:
        return verdict("undecided", "no 1-thread runs shared with %s" % reference)
    g = gmean_spread([x for _, x in ratios])
    ev = "%s x %s (%s)" % (interval_text(g), reference,
                           ", ".join("%s %.2f" % (w, x.med) for w, x in ratios))
    if variant == reference:
        return verdict("yes", "the reference (1.00 x itself)")
    return verdict(decided(check(g, ">=", FAST_MIN_RATIO)), ev)


def gain(s, ideal):
    return (s - 1.0) / (ideal - 1.0)


def scalable(rows, variant, ncores):
    """scalable?: speedup at the highest thread count (rule: RULES['scalable'])."""
    sp = speedup_spreads(rows, variant, SCALE_WORKLOADS, ncores=ncores)
    if not sp:
        return verdict("undecided", "no workload of %s measured at 1 and >= 2 threads"
                       % "/".join(SCALE_WORKLOADS))
    tmax = min(t for _, t in sp.values())
    ideal = min(tmax, ncores)
    s = gmean_spread([x for x, _ in sp.values()])
    ev = "S = %s at %d threads (%s)" % (interval_text(s), tmax, ", ".join(
        "%s %.2f" % (w, x.med) for w, (x, _) in sorted(sp.items())))
    if ideal < 2:
        return verdict("undecided", ev, "this machine has %d core(s): speedup cannot show" % ncores)
    g = Spread(gain(s.med, ideal), gain(s.lo, ideal), gain(s.hi, ideal), s.n)
    note = ""
    if ncores < FEW_CORES:
        note = "weak evidence: %d cores" % ncores
    yes, no = check(g, ">=", SCALE_YES_GAIN), check(g, "<", SCALE_NO_GAIN)
    if yes:
        val = "yes"
    elif no:
        val = "no"
    elif yes is False and no is False:
        val = "maybe"
    else:
        val = WITHIN_NOISE
    return verdict(val, ev + ", gain %s of ideal %d" % (interval_text(g), ideal), note)


def census_counts(rows, variant, workloads=FS_CENSUS_WORKLOADS,
                  column="hoardlab.census_false_blocks"):
    """{workload: max of column over census runs with >= 2 threads}."""
    res = {}
    for r in ok(rows):
        if r["variant"] != variant or not is_census(r) or (r.get("threads") or 0) < 2:
            continue
        c = r.get(column)
        if c is None or r["workload"] not in workloads:
            continue
        wl = r["workload_label"]
        res[wl] = max(res.get(wl, 0), c)
    return res


def false_sharing(rows, variant, ncores):
    """avoids false sharing? (rule: RULES['false_sharing'])."""
    counts = census_counts(rows, variant)
    paper_counts = census_counts(rows, variant, FS_PROGRAM_SHARED, "hoardlab.census_paper")
    sp = speedup_spreads(rows, variant, FS_TIMING_WORKLOADS, ncores=ncores)
    timing = ", ".join("%s S=%s" % (w, interval_text(x)) for w, (x, _) in sorted(sp.items()))
    if counts or paper_counts:
        bad = {w: c for w, c in list(counts.items()) + list(paper_counts.items()) if c > 0}
        ev = "census: " + ", ".join("%s %d" % (w, c) for w, c in sorted(counts.items()))
        if paper_counts:
            ev += "; by the paper's measure: " + ", ".join(
                "%s %d" % (w, c) for w, c in sorted(paper_counts.items()))
        wl_of = {r["workload_label"]: r["workload"] for r in rows}
        kinds = []
        if any(wl_of.get(w) == "active-false" for w in bad):
            kinds.append("actively induced (active-false)")
        if any(wl_of.get(w) == "passive-false" for w in bad):
            kinds.append("passively induced (passive-false)")
        note = "; ".join(kinds)
        outside = census_counts(rows, variant, FS_TIMING_WORKLOADS, "extra.census_false_blocks")
        if outside:     # the census from outside the allocator, of the same runs: shown
            ev += "; from outside the allocator (harness/census.c, not used): " + ", ".join(
                "%s %d" % (w, c) for w, c in sorted(outside.items()))
        shared = census_counts(rows, variant, FS_PROGRAM_SHARED)
        if shared:
            ev += "; broad, not used (the program shares lines): " + ", ".join(
                "%s %d" % (w, c) for w, c in sorted(shared.items()))
        if timing:
            ev += "; timing: " + timing
        return verdict("no" if bad else "yes", ev, note.strip())
    if not sp:
        return verdict("undecided", "no census runs and no active-/passive-false timing")
    tmax = min(t for _, t in sp.values())
    ideal = min(tmax, ncores)
    if ideal < 2:
        return verdict("undecided", "timing: " + timing,
                       "no census runs, and %d core(s) cannot show false sharing" % ncores)
    missing = [w for w in FS_TIMING_WORKLOADS if w not in sp]
    good = all_hold(*[check(Spread(gain(x.med, ideal), gain(x.lo, ideal), gain(x.hi, ideal),
                                   x.n), ">=", SCALE_YES_GAIN) for x, _ in sp.values()])
    if missing and good is not False:
        return verdict("undecided", "timing: " + timing, "%s not measured" % ", ".join(missing))
    return verdict(decided(good), "timing (no census): " + timing,
                   "decided from speed only" + ("; only %d cores" % ncores
                                                if ncores < FEW_CORES else ""))


# What the records count that explains a workload's lost speed, per operation: (column, the
# words). Each is a cause the paper names: a lock taken (and waited for), a block freed to
# another thread's heap; with the census's cache lines that two threads' blocks share.
COUNTED = (("hoardlab.lock_acquisitions", "lock acquisitions/op"),
           ("hoardlab.lock_contended", "contended/op"),
           ("hoardlab.remote_frees", "remote frees/op"))


def fell(rows, variant, key, ref, ncores):
    """[(workload_label, threads)] where the speed behind a "no" fell: for fast?, the
    workloads whose 1-thread ratio to the reference is below FAST_MIN_RATIO; for scalable?,
    those whose gain at T is below SCALE_YES_GAIN. By the medians: this names where to look,
    the verdict itself was decided by the intervals."""
    if key == "fast":
        tab = throughput_spreads(rows)
        qs = {wl: ratio(x, tab.get((ref, wl, 1))) for (v, wl, t), x in tab.items()
              if v == variant and t == 1 and not wl.startswith(TIMING_WORKLOADS_EXCLUDED)}
        return sorted((wl, 1) for wl, q in qs.items() if q and q.med < FAST_MIN_RATIO)
    sp = speedup_spreads(rows, variant, SCALE_WORKLOADS, ncores=ncores)
    return sorted((wl, t) for wl, (x, t) in sp.items()
                  if min(t, ncores) >= 2 and gain(x.med, min(t, ncores)) < SCALE_YES_GAIN)


def counted_text(rows, variant, wl, t):
    """What the records of variant's runs of workload label wl at t threads counted, per
    operation (medians over the runs), and the census's falsely-shared lines (its census runs
    of the same workload, at >= 2 threads); "none counted" where the records hold no
    statistics (a production allocator, or a build without them)."""
    runs = [r for r in ok(rows) if r["variant"] == variant and r["workload_label"] == wl and
            r["threads"] == t and not is_census(r)]
    parts = []
    for col, words in COUNTED:
        xs = [r[col] / r["ops"] for r in runs
              if isinstance(r.get(col), (int, float)) and r.get("ops")]
        if xs:
            parts.append("%.3g %s" % (median(xs), words))
    name = next((r["workload"] for r in runs), wl)
    lines = [r.get("hoardlab.census_false_lines") for r in ok(rows)
             if r["variant"] == variant and is_census(r) and r["workload"] == name and
             (r.get("threads") or 0) >= 2 and r.get("hoardlab.census_false_lines") is not None]
    if lines:
        parts.append("census %d false-sharing lines" % max(lines))
    return "%s at t=%d: %s" % (wl, t, ", ".join(parts) or "none counted (no statistics in "
                                                            "its records)")


def with_counts(entry, rows, ref, ncores):
    """A "no" of fast? or scalable? carries what the records counted where the speed fell
    (counted_text): the number alone says that it fell, the counts say what was in the way."""
    for k in ("fast", "scalable"):
        if entry[k]["value"] != "no":
            continue
        where = fell(rows, entry["variant"], k, ref, ncores)
        if where:
            entry[k]["evidence"] += "; counted where it fell: " + "; ".join(
                counted_text(rows, entry["variant"], wl, t) for wl, t in where)


BUSY_UNDECIDED = "undecided (machine busy)"
TIMING_KEYS = ("fast", "scalable", "false_sharing")
PLACEMENT_NOTE = "depends on thread placement: heap_select = cpu and the runs were not pinned"


def undecided(value):
    return value in ("undecided", WITHIN_NOISE, BUSY_UNDECIDED)


def timing_group_of(key, v, ref, group):
    """Whether the timing group (variant, workload_label, threads) is one the verdict `key`
    of variant v is made of: fast?, v and the reference at 1 thread; scalable?, v on its
    scaling workloads; false sharing from speed, v on active-/passive-false."""
    g, wl, t = group
    if key == "fast":
        return g in (v, ref) and t == 1 and not wl.startswith(TIMING_WORKLOADS_EXCLUDED)
    return g == v and wl in (SCALE_WORKLOADS if key == "scalable" else FS_TIMING_WORKLOADS)


def thinned_groups(rows, quiet, key, v, ref):
    """The groups of verdict `key` that setting the busy runs aside left with one run, though
    more were made: a group measured once has no interval, so a verdict resting on it would
    be decided as if that run were exact."""
    n_all, n_quiet = throughput_groups(rows), throughput_groups(quiet)
    return sorted(g for g, xs in n_all.items() if len(xs) > 1 and
                  len(n_quiet.get(g, ())) == 1 and timing_group_of(key, v, ref, g))


def quiet_timing(entry, rows, quiet, ref, ncores):
    """The timing verdicts of `entry` decided from the runs no other process disturbed
    (`quiet`, runs.csv's load.busy = 0): where those decide, their verdict stands; where they
    do not and runs of the variant (or of the reference, for fast?) were set aside as busy,
    BUSY_UNDECIDED, with both readings as evidence — a verdict never rests on busy runs, nor
    on a group the setting aside left with a single run (thinned_groups)."""
    v = entry["variant"]
    keys = [("scalable", scalable(quiet, v, ncores)),
            ("false_sharing", false_sharing(quiet, v, ncores))]
    if v != ref:                    # the reference is fast by definition, not by timing
        keys.insert(0, ("fast", fast(quiet, v, ref)))
    ids = {id(r) for r in quiet}
    for k, q in keys:
        of = (v, ref) if k == "fast" else (v,)
        n_busy = sum(1 for r in rows if r.get("variant") in of and id(r) not in ids)
        if not n_busy:
            continue
        thin = thinned_groups(rows, quiet, k, v, ref) if k != "false_sharing" or \
            q["evidence"].startswith("timing") else []
        if thin and not undecided(q["value"]):
            q = verdict(WITHIN_NOISE, q["evidence"], "one quiet run left in %s" % "; ".join(
                "%s on %s at t=%d" % g for g in thin))
        if not undecided(q["value"]):
            if q != entry[k]:
                q["note"] = "; ".join(x for x in (q["note"], "from the quiet runs: %d busy "
                                                  "runs set aside" % n_busy) if x)
            entry[k] = q
        elif entry[k]["value"] != "undecided":     # (undecided either way: no data, stays)
            entry[k] = verdict(BUSY_UNDECIDED, "all runs: %s, %s; the quiet runs alone: %s" % (
                entry[k]["value"], entry[k]["evidence"], q["value"] + (
                    " (%s)" % q["note"] if q["note"] else "")),
                "other processes used the CPUs during %d of its runs" % n_busy)


def placement_dependent(rows, v, placement):
    """Whether v's heap follows the CPU (`placement`: such variants) in unpinned runs."""
    return v in placement and not any(r.get("pin") in (1, "1", True) for r in rows
                                      if r.get("variant") == v)


def taxonomy(rows, rounds, ncores, strategies=None, placement=()):
    """One entry per strategy variant without knob overrides (the taxonomy rows). Where the
    runs recorded other processes' load, the timing verdicts come from the quiet runs
    (quiet_timing). `placement`: the variants whose heap selection follows the CPU, whose
    false-sharing verdict depends on where the scheduler puts threads unless pinned."""
    ref = reference_variant(rows, "serial")
    quiet = [r for r in rows if not r.get("load.busy") or is_census(r)]    # counts: no timing
    res = []
    seen = []
    for r in rows:
        if r.get("alloc_kind") != "hoardlab":
            continue
        v = r["variant"]
        if v in seen:
            continue
        seen.append(v)
    for v in seen:
        strat = next(r["strategy"] for r in rows if r["variant"] == v)
        if strategies and strat not in strategies:
            continue
        entry = {"variant": v, "strategy": strat,
                 "fast": fast(rows, v, ref),
                 "scalable": scalable(rows, v, ncores),
                 "false_sharing": false_sharing(rows, v, ncores),
                 "blowup": blowup(rows, rounds, v, ref),
                 "claim": paper.claim(strat)}
        if len(quiet) < len(rows):
            quiet_timing(entry, rows, quiet, ref, ncores)
        with_counts(entry, quiet if len(quiet) < len(rows) else rows, ref, ncores)
        if placement_dependent(rows, v, placement) and \
                not undecided(entry["false_sharing"]["value"]):
            fs = entry["false_sharing"]
            fs["note"] = "; ".join(x for x in (fs["note"], PLACEMENT_NOTE) if x)
        entry["mismatches"] = [k for k in ("fast", "scalable", "false_sharing", "blowup")
                               if entry["claim"] and entry["claim"][k] and
                               not undecided(entry[k]["value"]) and
                               entry[k]["value"] not in entry["claim"][k] and
                               not (k == "false_sharing" and PLACEMENT_NOTE in
                                    entry[k]["note"])]
        res.append(entry)
    return res

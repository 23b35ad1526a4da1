"""The taxonomy verdicts, decided from measured rows only (tidy rows as read from
runs.csv / rounds.csv). Every rule is a named function whose docstring states it; the
report prints the same text (RULES). Thresholds are constants here, chosen before looking
at any measurement and never adjusted per strategy.

Verdict values: fast/scalable/false sharing: yes, maybe (scalable only), no;
blowup: O(1), O(P), unbounded; and 'undecided' (with the reason) when the data cannot
decide — too few cores, a workload not measured, runs that failed.
"""
import math
import statistics

from . import paper
from .common import BOOL_TRUE

FAST_MIN_RATIO = 0.8          # fast: 1-thread throughput >= 80% of serial's
SCALE_YES_GAIN = 0.5          # scalable yes: at least half the ideal extra speedup
SCALE_NO_GAIN = 0.15          # scalable no: less than 15% of it
ROUNDS_GROWTH = 1.5           # unbounded: memory at the last round >= 1.5 x at round n/4
LIVE_FLAT = 1.1               # ... while live bytes grew by less than 10%
P_GROWTH_SHARE = 0.5          # O(P): blowup grows >= half as fast as the thread count
FEW_CORES = 4                 # below this many cores, scalability evidence is weak

# not speeds: memory per round, a replay, a deadlock probe, memory over time
TIMING_WORKLOADS_EXCLUDED = ("blowup-prodcons", "blowup-roundrobin", "replay", "signal-malloc",
                             "phased")
SCALE_WORKLOADS = ("threadtest", "shbench", "larson", "linux-scalability")
FS_CENSUS_WORKLOADS = ("active-false", "passive-false", "threadtest", "shbench")
# larson's threads inherit the live blocks of the generation before them, so the program
# itself puts two threads' blocks on one line: there the broad census is shown, not used, and
# the paper's measure (census_paper, 0 where no superblock changes heap) decides.
FS_PROGRAM_SHARED = ("larson",)
FS_TIMING_WORKLOADS = ("active-false", "passive-false")
BLOWUP_WORKLOADS = ("blowup-prodcons", "blowup-roundrobin")

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
              "(b(Tmax)/b(Tmin) >= 1 + %.1f (Tmax/Tmin - 1)); else O(1). Undecided when the "
              "blowup workloads were not measured or only at one thread count."
              % (", ".join(BLOWUP_WORKLOADS), ROUNDS_GROWTH, round((LIVE_FLAT - 1) * 100),
                 P_GROWTH_SHARE, P_GROWTH_SHARE),
}


def verdict(value, evidence, note=""):
    return {"value": value, "evidence": evidence, "note": note}


def truthy(v):
    return str(v).strip().lower() in BOOL_TRUE


def ok(rows):
    return [r for r in rows if r.get("status") == "ok"]


def is_census(r):
    return truthy(r.get("knob.census", ""))


def timing_rows(rows):
    return [r for r in ok(rows) if not is_census(r) and r.get("throughput") is not None]


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def gmean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def throughput_groups(rows):
    """{(variant, workload_label, threads): [throughput of each timing row]}."""
    acc = {}
    for r in timing_rows(rows):
        acc.setdefault((r["variant"], r["workload_label"], r["threads"]), []).append(
            r["throughput"])
    return acc


def throughput_table(rows):
    """{(variant, workload_label, threads): median throughput} over timing rows."""
    return {k: median(v) for k, v in throughput_groups(rows).items()}


def knobs_of(r):
    """{key: value} of a row's knob overrides (its `knobs` column, "k=v;k=v")."""
    return dict(k.split("=", 1) for k in str(r.get("knobs") or "").split(";") if "=" in k)


def reference_variant(rows, strategy="serial"):
    """The variant that stands for `strategy` with no knob overrides (census aside)."""
    cands = sorted({r["variant"] for r in rows if r.get("strategy") == strategy})
    if strategy in cands:
        return strategy
    for c in cands:
        if set(knobs_of(next(r for r in rows if r["variant"] == c))) <= {"census"}:
            return c
    return cands[0] if cands else None


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


def interval_text(s, fmt="%.2f"):
    """'1.23 [1.18, 1.30]': a Spread in a sentence (a verdict's evidence, a check), with the
    interval it is decided on; '1.23' without spread, '–' for None. fmt: '%.2f' or a
    function. (Table cells use report.pm, the shorter 'median ±p%'.)"""
    if s is None or s.med is None:
        return "–"
    f = fmt if callable(fmt) else (lambda x: fmt % x)
    if s.n < 2 or s.lo == s.hi:
        return f(s.med)
    return "%s [%s, %s]" % (f(s.med), f(s.lo), f(s.hi))


def decided(holds, yes="yes", no="no"):
    """A verdict's value from check(): yes / no, or WITHIN_NOISE."""
    return WITHIN_NOISE if holds is None else (yes if holds else no)


def speedup_spreads(rows, variant, workloads, max_threads=None, ncores=None):
    """{workload: (Spread of S, T)}: as speedups(), with the ratio's interval; with ncores,
    T is P of THREADS_RULE among the thread counts above 1."""
    tab = throughput_spreads(rows)
    res = {}
    for wl in workloads:
        ts = sorted(t for (v, w, t) in tab if v == variant and w == wl and
                    (max_threads is None or t <= max_threads))
        if len(ts) < 2 or ts[0] != 1:
            continue
        t = timing_threads(ts[1:], ncores) if ncores else ts[-1]
        s = ratio(tab[(variant, wl, t)], tab[(variant, wl, 1)])
        if s:
            res[wl] = (s, t)
    return res


def speedups(rows, variant, workloads, max_threads=None):
    """{workload: (S, Tmax)}: median throughput at the highest thread count (at most
    max_threads when given) over 1 thread."""
    tab = throughput_table(rows)
    res = {}
    for wl in workloads:
        ts = sorted(t for (v, w, t) in tab if v == variant and w == wl and
                    (max_threads is None or t <= max_threads))
        if len(ts) < 2 or ts[0] != 1 or not tab.get((variant, wl, 1)):
            continue
        res[wl] = (tab[(variant, wl, ts[-1])] / tab[(variant, wl, 1)], ts[-1])
    return res


def rep_spread(rows):
    """Run-to-run noise: {(variant, workload_label, threads): max/min throughput over
    repetitions} for groups with at least 2 repetitions."""
    return {k: max(x) / min(x) for k, x in throughput_groups(rows).items()
            if len(x) >= 2 and min(x) > 0}


# --- noise: a median with its spread, and checks that say when they cannot decide ---------

# Runs shorter than this are flagged: below about 0.1 s what is timed is no longer mostly the
# allocator. Creating and joining the threads (tens of microseconds each), the first page
# faults of the heap and the binary (a few milliseconds), and above all one scheduler time
# slice lost to another process on a shared machine (4-10 ms) are fixed costs: at 0.1 s one
# lost slice is up to 10% of the run, at 0.04 s a quarter of it.
SHORT_RUN_S = 0.1
WITHIN_NOISE = "within noise"
NOISE_RULE = ("A check or verdict is decided only when the interval of its number lies wholly "
              "on one side of its threshold; when the interval reaches the threshold (or a "
              "number is exactly at it) it says *%s*. The interval of a median is the min-max "
              "over its repetitions; of a ratio of two medians a/b, [min a / max b, max a / "
              "min b]; of a geometric mean, the geometric means of the ends. A group measured "
              "once has no interval (its cell says ±?)." % WITHIN_NOISE)


class Spread(tuple):
    """A median over repetitions and the interval [lo, hi] around it (min-max, or the
    interval of a ratio), from n repetitions (n = 1: no spread known)."""
    __slots__ = ()

    def __new__(cls, med, lo, hi, n):
        return tuple.__new__(cls, (med, lo, hi, n))

    med = property(lambda s: s[0])
    lo = property(lambda s: s[1])
    hi = property(lambda s: s[2])
    n = property(lambda s: s[3])

    def rel(self):
        """The half-width of the interval relative to the median: the larger of
        hi/med - 1 and 1 - lo/med (0 when the median is 0)."""
        if not self.med:
            return 0.0
        return max(self.hi / self.med - 1.0, 1.0 - self.lo / self.med)


def spread_of(xs):
    """Spread(median, min, max, n) of the values (None skipped); None when there are none."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return Spread(statistics.median(xs), min(xs), max(xs), len(xs))


def exact(x):
    """A number with no spread (a paper's value, a count)."""
    return None if x is None else Spread(x, x, x, 1)


def ratio(a, b):
    """a / b of two Spreads, with the interval of every ratio their ranges allow."""
    if a is None or b is None or not b.med or b.lo <= 0 or b.hi <= 0:
        return None
    return Spread(a.med / b.med, a.lo / b.hi, a.hi / b.lo, min(a.n, b.n))


def gmean_spread(ss):
    """Geometric mean of Spreads: of the medians, of the lows, of the highs."""
    ss = [s for s in ss if s is not None and s.lo > 0]
    if not ss:
        return None
    return Spread(gmean([s.med for s in ss]), gmean([s.lo for s in ss]),
                  gmean([s.hi for s in ss]), min(s.n for s in ss))


def check(s, op, threshold):
    """Does `value op threshold` hold (op: '>=', '>', '<=', '<')? True when the whole
    interval of s satisfies it, False when none of it does, None (within noise) when the
    interval reaches the threshold: a value exactly at a threshold decides nothing. A plain
    number is taken as exact. Rule: NOISE_RULE."""
    if s is None:
        return None
    if not isinstance(s, Spread):
        s = exact(s)
    if s.lo <= threshold <= s.hi:
        return None
    above = s.lo > threshold
    return above if op in (">", ">=") else not above


def check_between(s, low, high):
    """Is the value within [low, high]? True when the whole interval is inside, False when
    it lies wholly outside, None (within noise) when it reaches either bound."""
    inside_low, inside_high = check(s, ">=", low), check(s, "<=", high)
    if inside_low is False or inside_high is False:
        return False
    if inside_low is None or inside_high is None:
        return None
    return True


def differ(a, b):
    """a above b? (two Spreads): True / False / None when the ratio's interval contains 1."""
    return check(ratio(a, b), ">", 1.0)


def all_hold(*holds):
    """Several checks together: False if any fails, None (within noise) if any is within
    noise, else True."""
    if any(h is False for h in holds):
        return False
    return None if any(h is None for h in holds) else True


def throughput_spreads(rows):
    """{(variant, workload_label, threads): Spread of throughput} over timing rows."""
    return {k: spread_of(v) for k, v in throughput_groups(rows).items()}


def noisiest(rows, k=3):
    """The k groups with the largest run-to-run spread: [((variant, workload, threads),
    max/min)], the noisiest first."""
    return sorted(rep_spread(rows).items(), key=lambda kv: (-kv[1], kv[0]))[:k]


def short_groups(rows, floor=SHORT_RUN_S):
    """{(variant, workload_label, threads): median wall seconds} of the timing groups (not the
    memory workloads) whose median run is shorter than `floor` seconds."""
    acc = {}
    for r in timing_rows(rows):
        if r["workload"].startswith(TIMING_WORKLOADS_EXCLUDED) or r.get("wall_s") is None:
            continue
        acc.setdefault((r["variant"], r["workload_label"], r["threads"]), []).append(r["wall_s"])
    return {k: median(v) for k, v in acc.items() if median(v) < floor}


# --- thread counts ------------------------------------------------------------------------

THREADS_RULE = ("Sections on time use P, the largest thread count measured not above the "
                "machine's cores (the smallest measured when every one is above): more "
                "threads than cores time the scheduler's slicing, not the allocator. Sections "
                "on memory use the highest thread count measured (memory needs no cores). "
                "Each section names the count it uses.")


def timing_threads(ts, ncores):
    """P of THREADS_RULE among the thread counts ts (None when ts is empty)."""
    ts = sorted(set(t for t in ts if t is not None))
    if not ts:
        return None
    under = [t for t in ts if t <= ncores]
    return under[-1] if under else ts[0]


def threads_run(r):
    """The threads a run actually ran (besides main): `threads`, except where a workload runs
    more per unit of its `threads` parameter, as xfree does (a producer and a consumer per
    unit: 2T), which its record says in extra.producers and extra.consumers."""
    p, c = r.get("extra.producers"), r.get("extra.consumers")
    if p is not None and c is not None:
        return int(p) + int(c)
    if r.get("workload") == "xfree" and r.get("threads"):
        return 2 * r["threads"]
    return r.get("threads")


def threads_text(rows, workload_label, t):
    """'4', or '4 (8 threads run)' when the runs of that workload ran more than t."""
    ran = {threads_run(r) for r in rows if r.get("workload_label") == workload_label and
           r.get("threads") == t and r.get("status") == "ok"}
    ran.discard(None)
    if ran and max(ran) != t:
        return "%d (%d threads run)" % (t, max(ran))
    return "%d" % t


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


def memory_of(r):
    """(bytes held, source): hoardlab's A (the policy's: held_bytes_peak; os_bytes_peak in
    results from before that column existed) when loaded, else peak RSS."""
    a = r.get("hoardlab.held_bytes_peak")
    if a is None:
        a = r.get("hoardlab.os_bytes_peak")
    if a is not None:
        return a, "A"
    rss = r.get("peak_rss_kb")
    return (rss * 1024 if rss is not None else None), "RSS"


def round_series(rounds, index):
    rs = sorted((r for r in rounds if r["index"] == index), key=lambda r: r["round"])
    mem = [(r["os_bytes"] if r.get("os_bytes") is not None else
            (r["rss_kb"] * 1024 if r.get("rss_kb") is not None else None)) for r in rs]
    live = [r.get("live_bytes") for r in rs]
    return mem, live


def rounds_growth(mem, live):
    """(memory growth, live growth) from round n/4 to the last; None when < 4 rounds."""
    n = len(mem)
    if n < 4 or None in mem:
        return None
    e = n // 4
    if not mem[e]:
        return None
    lg = (live[-1] / live[e]) if live[e] else 1.0
    return mem[-1] / mem[e], lg


def blowup(rows, rounds, variant, reference):
    """blowup class (rule: RULES['blowup'])."""
    okrows = [r for r in ok(rows) if r["variant"] == variant and
              r["workload"] in BLOWUP_WORKLOADS and not is_census(r)]
    if not okrows:
        return verdict("undecided", "blowup workloads not measured (or all failed)")
    # Growth over rounds, per workload and thread count: median over repetitions.
    growth = {}
    for r in okrows:
        g = rounds_growth(*round_series(rounds, r["index"]))
        if g is not None:
            growth.setdefault((r["workload_label"], r["threads"]), []).append(g)
    ev = []
    unbounded = []
    for key, gs in sorted(growth.items()):
        mg = median([g[0] for g in gs])
        lg = median([g[1] for g in gs])
        ev.append("%s t=%d rounds x%.2f" % (key[0], key[1], mg))
        if mg >= ROUNDS_GROWTH and lg < LIVE_FLAT:
            unbounded.append(key)
    if unbounded:
        return verdict("unbounded", "; ".join(ev))
    # Growth over P on blowup-roundrobin: b(T) = A / A(serial), or A/U without serial.
    def med_mem(v, t):
        return median([memory_of(r)[0] for r in ok(rows) if r["variant"] == v and
                       r["workload"] == "blowup-roundrobin" and r["threads"] == t and
                       not is_census(r)])
    ts = sorted({r["threads"] for r in okrows if r["workload"] == "blowup-roundrobin"})
    b, how = {}, ""
    for t in ts:
        a = med_mem(variant, t)
        ref = med_mem(reference, t) if reference else None
        if a and ref:
            b[t], how = a / ref, "A/A(%s)" % reference
        elif a:
            u = median([r.get("hoardlab.in_use_peak") for r in okrows
                        if r["workload"] == "blowup-roundrobin" and r["threads"] == t])
            if u:
                b[t], how = a / u, "A/U (serial not measured)"
    if len(b) < 2:
        why = "blowup-roundrobin measured at fewer than 2 thread counts"
        if not growth:
            why += ", and no round-by-round memory"
        return verdict("undecided", "; ".join(ev) or "no usable data", why)
    tmin, tmax = min(b), max(b)
    pg = b[tmax] / b[tmin]
    need = 1 + P_GROWTH_SHARE * (tmax / tmin - 1)
    ev.append("%s %.2f at t=%d -> %.2f at t=%d (x%.2f, O(P) needs x%.2f)"
              % (how, b[tmin], tmin, b[tmax], tmax, pg, need))
    u = {t: median([r.get("hoardlab.in_use_peak") for r in okrows
                    if r["workload"] == "blowup-roundrobin" and r["threads"] == t])
         for t in (tmin, tmax)}
    if u[tmin] and u[tmax]:
        ev.append("live peak U x%.2f over the same threads" % (u[tmax] / u[tmin]))
    return verdict("O(P)" if pg >= need else "O(1)", "; ".join(ev))


def taxonomy(rows, rounds, ncores, strategies=None):
    """One entry per strategy variant without knob overrides (the taxonomy rows)."""
    ref = reference_variant(rows, "serial")
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
        entry["mismatches"] = [k for k in ("fast", "scalable", "false_sharing", "blowup")
                               if entry["claim"] and entry["claim"][k] and
                               entry[k]["value"] not in ("undecided", WITHIN_NOISE) and
                               entry[k]["value"] not in entry["claim"][k]]
        res.append(entry)
    return res


def production_ranking(rows):
    """{(workload_label, threads): [(variant, median throughput)], fastest first} over the
    production allocators (alloc_kind `production`: glibc, jemalloc, mimalloc, mimalloc3,
    tcmalloc, snmalloc, whichever the sweep measured), on the timing workloads. The first of
    each list is the best production allocator of that workload and thread count."""
    prod = {r["variant"] for r in rows if r.get("alloc_kind") == "production"}
    res = {}
    for (v, wl, t), thr in throughput_table(rows).items():
        if v in prod and thr and not wl.startswith(TIMING_WORKLOADS_EXCLUDED):
            res.setdefault((wl, t), []).append((v, thr))
    for k in res:
        res[k].sort(key=lambda vt: (-vt[1], vt[0]))
    return res


def variants(rows):
    """The allocator variants of rows, in order of first appearance."""
    seen = []
    for r in rows:
        if r["variant"] not in seen:
            seen.append(r["variant"])
    return seen

"""The blowup rule (rules.RULES['blowup']): memory that grows over the rounds of a blowup
workload while the live bytes stay flat (unbounded), or that grows with the thread count
(O(P)), each growth a median over repetitions decided on its interval (noise.NOISE_RULE).
Used for the strategies (A, from hoardlab's statistics) and for today's allocators (RSS less
LazyFree, today.blowup_outside)."""
from .groups import is_census, memory_of, ok, round_series
from .noise import WITHIN_NOISE, Spread, check, decided, interval_text, median, ratio, spread_of, \
    verdict

ROUNDS_GROWTH = 1.5           # unbounded: memory at the last round >= 1.5 x at round n/4
LIVE_FLAT = 1.1               # ... while live bytes grew by less than 10%
P_GROWTH_SHARE = 0.5          # O(P): blowup grows >= half as fast as the thread count
BLOWUP_WORKLOADS = ("blowup-prodcons", "blowup-roundrobin")


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


def rounds_rule(runs, rounds):
    """The rounds half of the blowup rule over one variant's blowup runs: (evidence,
    the (workload_label, threads) keys decided unbounded, those within noise of it). A key's
    memory growth is the median over its repetitions with its interval (NOISE_RULE), checked
    against ROUNDS_GROWTH, so a growth whose repetitions straddle the line decides nothing
    (jemalloc's largest growth on blowup-roundrobin read x1.23, x1.47 and x1.51 in three
    main jobs, one repetition each: unbounded in one, O(P) in two)."""
    growth = {}
    for r in runs:
        g = rounds_growth(*round_series(rounds, r["index"]))
        if g is not None:
            growth.setdefault((r["workload_label"], r["threads"]), []).append(g)
    ev, unbounded, near = [], [], []
    for key, gs in sorted(growth.items()):
        mg = spread_of([g[0] for g in gs])
        ev.append("%s t=%d rounds x%s" % (key[0], key[1], interval_text(mg)))
        if median([g[1] for g in gs]) >= LIVE_FLAT:
            continue
        held = check(mg, ">=", ROUNDS_GROWTH)
        if held:
            unbounded.append(key)
        elif held is None:
            near.append(key)
    return ev, unbounded, near


def near_text(near):
    return "the growth over rounds of %s is within noise of x%.1f" % (
        ", ".join("%s t=%d" % k for k in near), ROUNDS_GROWTH)


def no_p_rule(ev, near, why):
    """The blowup class without the O(P) half (fewer than 2 thread counts): within noise if
    the rounds rule was, else undecided."""
    if near:
        return dict(verdict(WITHIN_NOISE, "; ".join(ev), "unbounded or not: %s; %s"
                            % (near_text(near), why)), repeat=near)
    return verdict("undecided", "; ".join(ev) or "no usable data", why)


def p_rule(b, ev, how, near, label="blowup-roundrobin"):
    """The O(P) half of the blowup rule: b = {threads: Spread of the blowup at that thread
    count}; O(P) if b(Tmax)/b(Tmin), with its interval, reaches 1 + P_GROWTH_SHARE
    (Tmax/Tmin - 1); O(1) if it stays below; within noise otherwise, or when the rounds rule
    was (`near`: its keys), naming what could not be told apart. The verdict's `repeat`
    lists the (workload_label, threads) groups more repetitions would decide it from."""
    tmin, tmax = min(b), max(b)
    pg = ratio(b[tmax], b[tmin]) if b[tmin].med > 0 else Spread(float("inf"), float("inf"),
                                                                 float("inf"), 1)
    need = 1 + P_GROWTH_SHARE * (tmax / tmin - 1)
    ev.append("%s %s at t=%d -> %s at t=%d (x%s, O(P) needs x%.2f)"
              % (how, interval_text(b[tmin]), tmin, interval_text(b[tmax]), tmax,
                 interval_text(pg), need))
    over_p = check(pg, ">=", need)
    cls = decided(over_p, "O(P)", "O(1)")
    repeat = [(label, tmin), (label, tmax)] if over_p is None else []
    if near:
        return dict(verdict(WITHIN_NOISE, "; ".join(ev), "unbounded or %s: %s"
                            % ("O(1) or O(P)" if over_p is None else cls, near_text(near))),
                    repeat=near + repeat)
    if over_p is None:
        return dict(verdict(WITHIN_NOISE, "; ".join(ev), "O(1) or O(P): the growth over "
                            "threads is within noise of x%.2f" % need), repeat=repeat)
    return verdict(cls, "; ".join(ev))


def rounds_first(rows, rounds, variant, note=""):
    """The variant's blowup runs and the rounds rule over them, the first half of both
    blowup rules (this one's and today.blowup_outside): (runs, evidence, keys within noise,
    the verdict when that half decides it: undecided without runs, or unbounded; else None)."""
    runs = [r for r in ok(rows) if r["variant"] == variant and
            r["workload"] in BLOWUP_WORKLOADS and not is_census(r)]
    if not runs:
        return runs, [], [], verdict("undecided", "blowup workloads not measured (or all failed)")
    ev, unbounded, near = rounds_rule(runs, rounds)
    return runs, ev, near, verdict("unbounded", "; ".join(ev), note) if unbounded else None


def blowup(rows, rounds, variant, reference):
    """blowup class (rule: RULES['blowup'])."""
    okrows, ev, near, decided_early = rounds_first(rows, rounds, variant)
    if decided_early:
        return decided_early
    # Growth over P on blowup-roundrobin: b(T) = A / A(serial), or A/U without serial.
    def mem(v, t):
        return spread_of([memory_of(r)[0] for r in ok(rows) if r["variant"] == v and
                          r["workload"] == "blowup-roundrobin" and r["threads"] == t and
                          not is_census(r)])
    rr = [r for r in okrows if r["workload"] == "blowup-roundrobin"]
    b, how = {}, ""
    for t in sorted({r["threads"] for r in rr}):
        a = mem(variant, t)
        ref = mem(reference, t) if reference else None
        if a and a.med and ref and ref.med:
            b[t], how = ratio(a, ref), "A/A(%s)" % reference
        elif a and a.med:
            u = spread_of([r.get("hoardlab.in_use_peak") for r in rr if r["threads"] == t])
            if u and u.med:
                b[t], how = ratio(a, u), "A/U (serial not measured)"
    if len(b) < 2:
        why = "blowup-roundrobin measured at fewer than 2 thread counts"
        if not ev:
            why += ", and no round-by-round memory"
        return no_p_rule(ev, near, why)
    label = rr[0]["workload_label"]
    u = {t: median([r.get("hoardlab.in_use_peak") for r in rr if r["threads"] == t])
         for t in (min(b), max(b))}
    v = p_rule(b, ev, how, near, label)
    if u[min(b)] and u[max(b)]:
        v["evidence"] += "; live peak U x%.2f over the same threads" % (u[max(b)] / u[min(b)])
    return v

"""The report section of the hugepages sweep (configs/sweeps/hugepages.ini): what huge pages
buy and cost, per heap row x `hugepages` value and per production allocator. The chase workload
(a large working set chased in a random order: TLB-bound unless on huge pages) gives the
throughput and the coverage (huge_coverage: AnonHugePages / Rss at the end of the chase; the
series' anon_huge_kb over rss_kb, time-weighted, over the chase); the phased workload with a
checkpoint 1 s after the drain gives the memory held then (RSS less LazyFree), compared with the
row's `off` under the same purge policy. Temeraire's claim (Hunter et al., OSDI 2021) --
coverage up, memory no worse than a few percent, throughput up on a TLB-bound workload -- is
decided per row and value by the interval (verdicts.NOISE_RULE); hoard2026 with `filler` is set
beside tcmalloc-google and mimalloc3 (a development aim: ratios and the direction their
intervals decide, not judged). hugepages.png: coverage against the chase's throughput."""
from .. import fmt as F, plotkit as K, verdicts as V
from .drain import col
from .series import purge_policy

SECTION = "Huge pages: coverage, the TLB-bound chase, and memory after a drain"
CHASE = "chase"                          # the hlbench workload
VALUES = ("off", "madvise", "filler")    # the key's values, the reference first
HELD_AT = "1s"                           # the checkpoint after the drain the memory is read at
# Temeraire's "memory no worse than a few percent", read as 5%: fixed before any measurement.
CLAIM_MEMORY = 1.05
# hoard2026 with filler against off: the memory held 1 s after the drain within 1.1x.
AIM_MEMORY = 1.1
AIM_COVERAGE = 0.9
AIM_ROW, AIM_VALUE, AIM_PEERS = "hoard2026", "filler", ("tcmalloc-google", "mimalloc3")
OWN = "its own"
PLOT = "hugepages.png"


def value_of(r):
    """The row's hugepages value (off when not set: the key's default); None for an allocator
    libhoardlab does not run (a production allocator)."""
    if r.get("alloc_kind") == "production" or r.get("alloc_kind") == "preload":
        return None
    return V.knobs_of(r).get("hugepages", "off")


def key_of(r):
    """(the allocator's label, its hugepages value or None)."""
    return (r.get("allocator") or r["variant"], value_of(r))


def policy_of(r):
    """The purge policy a drain ran under, in words: its purge knobs, else its strategy's
    defaults; OWN where neither says (a production allocator, a composed row, ownership)."""
    return purge_policy(r) or OWN


def held_bytes(r, t=HELD_AT):
    """RSS less LazyFree t after the drain, bytes (None without that checkpoint)."""
    rss, lazy = r.get(col(t, "rss_kb")), r.get(col(t, "lazyfree_kb"))
    return None if rss is None else (rss - (lazy or 0)) * 1024


def coverage_mean(r):
    """The share of RSS on huge pages over the chase: the series' time-weighted means of
    anon_huge_kb over rss_kb (None without a series)."""
    h, rss = r.get("series.anon_huge_kb_mean"), r.get("series.rss_kb_mean")
    return h / rss if h is not None and rss else None


def chase_rows(rows, ncores):
    """The ok, timed chase rows at P of THREADS_RULE among its thread counts, and P."""
    rr = [r for r in V.timing_rows(rows) if r.get("workload") == CHASE]
    t = V.timing_threads([r["threads"] for r in rr], ncores)
    return [r for r in rr if r["threads"] == t], t


def drain_rows(rows):
    """The ok phased rows with the HELD_AT checkpoint."""
    return [r for r in V.ok(rows) if not V.is_census(r) and r.get("workload") == "phased" and
            held_bytes(r) is not None]


def measure(rows, ncores):
    """{(label, value): {"thr", "cov", "cov_mean": Spread, "held": {policy: Spread}}} in the
    order of the variants, every value of a row in VALUES' order; and the chase's threads."""
    cr, t = chase_rows(rows, ncores)
    dr = drain_rows(rows)
    keys = []
    for r in V.ok(rows):
        if r.get("workload") == CHASE and key_of(r) not in keys:
            keys.append(key_of(r))
    order = {v: i for i, v in enumerate(VALUES)}
    labels = []
    for k in keys:
        if k[0] not in labels:
            labels.append(k[0])
    keys.sort(key=lambda k: (labels.index(k[0]), order.get(k[1], len(order))))
    out = {}
    for k in keys:
        mine = [r for r in cr if key_of(r) == k]
        held = {}
        for r in dr:
            if key_of(r) == k:
                held.setdefault(policy_of(r), []).append(held_bytes(r))
        out[k] = {"thr": V.spread_of([r["throughput"] for r in mine]),
                  "cov": V.spread_of([r.get("huge_coverage") for r in mine]),
                  "cov_mean": V.spread_of([coverage_mean(r) for r in mine]),
                  "held": {p: V.spread_of(xs) for p, xs in held.items()}}
    return out, t


def decide(s, op, threshold):
    """verdicts.check, but one repetition decides nothing (its interval is unknown)."""
    return None if s is None or s.n < 2 else V.check(s, op, threshold)


def above(a, b, strict=True):
    """Is a above b (strict) or at least b, by the interval? Two Spreads of a share (coverage):
    their ratio's interval against 1 when b's interval is above 0; b exactly 0 in every
    repetition: a at least b always, a above it when its whole interval is above 0; otherwise
    (b's interval reaches 0, no ratio) the two intervals apart, or None (within noise). One
    repetition on either side decides nothing."""
    if a is None or b is None or a.n < 2 or b.n < 2:
        return None
    if b.lo > 0:
        return V.check(V.ratio(a, b), ">" if strict else ">=", 1.0)
    if b.hi == 0:
        if not strict or a.lo > 0:
            return True
        return False if a.hi == 0 else None     # both 0 throughout: not up
    if a.lo > b.hi:
        return True
    if a.hi < b.lo:
        return False
    return None


def memory_ratios(m, label, value):
    """{policy: held(value) / held(off) Spread} of a row under each policy both measured."""
    off = m.get((label, "off"), {}).get("held", {})
    mine = m.get((label, value), {}).get("held", {})
    return {p: V.ratio(s, off[p]) for p, s in mine.items() if p in off and V.ratio(s, off[p])}


def claim(m, label, value):
    """Temeraire's claim for a row's value against its off: (coverage up, memory no worse than
    CLAIM_MEMORY x under every purge policy measured, throughput up, the claim: all three);
    each True / False / None (within noise, or not measured)."""
    me, off = m.get((label, value)), m.get((label, "off"))
    if not me or not off:
        return None, None, None, None
    cov = above(me["cov"], off["cov"])
    qs = memory_ratios(m, label, value)
    mem = V.all_hold(*[decide(q, "<=", CLAIM_MEMORY) for q in qs.values()]) if qs else None
    thr = decide(V.ratio(me["thr"], off["thr"]), ">", 1.0)
    return cov, mem, thr, V.all_hold(cov, mem, thr)


def thp_mode(meta):
    """The kernel's transparent huge page mode meta.json recorded ('always', 'madvise',
    'never'), or None."""
    return ((meta or {}).get("machine") or {}).get("thp")


def hugepages_section(rows, meta=None, ncores=1):
    m, t = measure(rows, ncores)
    if not any(v is not None for _, v in m):      # no heap row ran the chase
        return []
    never = thp_mode(meta) == "never"
    policies = []
    for k in m:
        for p in m[k]["held"]:
            if p not in policies:
                policies.append(p)
    out = ["## %s" % SECTION, ""]
    if never:
        out += ["**This machine's transparent huge pages are `never`** "
                "(/sys/kernel/mm/transparent_hugepage/enabled): no allocator gets a huge page, "
                "coverage is 0 in every run, and Temeraire's claim cannot be tested here.", ""]
    out += ["`hugepages = off | madvise | filler` under every heap row, beside the production "
            "allocators (their own huge-page policies). Chase (configs/sweeps/hugepages.ini; "
            "%d thread%s): a working set of small nodes chased in a random order, TLB-bound "
            "unless on huge pages; nodes visited per second, and over the row's `off`. "
            "Coverage: AnonHugePages over Rss of the whole process at the end of the chase "
            "(huge_coverage); over the chase, the series' time-weighted mean of the same. "
            "Held: RSS less LazyFree %s after the drain of the phased workload (MiB), and over "
            "the row's `off` under the same purge policy (%s: no purge key set, the allocator's "
            "own policy: a production allocator's, a composed row's file's, or none, as "
            "ownership has). Median over repetitions, `±p%%` their spread." % (t or 0, "" if t == 1 else "s", spoken(HELD_AT), OWN), ""]
    head = ["allocator", "hugepages", "chase visits/s", "/ off", "coverage",
            "coverage over the chase"]
    for p in policies:
        head += ["held MiB, %s" % p, "/ off"]
    rs = []
    for (label, value), s in m.items():
        off = m.get((label, "off")) if value is not None else None
        q = V.ratio(s["thr"], off["thr"]) if off and value != "off" else None
        cells = [label, value or "–", F.pm(s["thr"]), F.pm(q, "%.2f") if q else "–",
                 F.pm(s["cov"], "%.2f"), F.pm(s["cov_mean"], "%.2f")]
        qs = memory_ratios(m, label, value) if value not in (None, "off") else {}
        for p in policies:
            cells += [F.pm(s["held"].get(p), F.mib),
                      F.pm(qs[p], "%.2f") if p in qs else "–"]
        rs.append(cells)
    out += [F.table(head, rs), ""]
    out += _claim_text(m, never) + _aim_text(m, never)
    return out


def spoken(t):
    return t[:-2] + " ms" if t.endswith("ms") else t[:-1] + " s"


def _claim_text(m, never):
    out = ["### Temeraire: coverage up, memory no worse, the TLB-bound workload faster", "",
           "Hunter et al. (OSDI 2021) claim that a huge-page-aware allocator raises the share "
           "of memory on huge pages at a cost in memory of no more than a few percent (read "
           "here as %d%%: held %s after the drain at most %.2fx `off`'s under every purge "
           "policy measured), and that a TLB-bound program runs faster for it. Per row, each "
           "value against its `off`: coverage up (its interval above `off`'s: the ratio's, or "
           "above 0 when `off` had none), memory no worse, chase throughput up (the ratio's "
           "interval above 1); the claim agrees when all three hold, **MISMATCH** when one "
           "fails, %s when one cannot be decided (one repetition decides nothing)."
           % (round(100 * (CLAIM_MEMORY - 1)), spoken(HELD_AT), CLAIM_MEMORY,
              V.WITHIN_NOISE), ""]
    rs, tally = [], {True: 0, False: 0, None: 0, "unmeasured": 0}
    for (label, value) in m:
        if value in (None, "off"):
            continue
        cov, mem, thr, all_ = claim(m, label, value)
        measured = bool(memory_ratios(m, label, value))
        if never:
            verdict = "not testable (THP never)"
        else:
            undecided = not measured and all_ is not False
            verdict = "undecided: memory not measured" if undecided else F.mark(all_)
            tally["unmeasured" if undecided else all_] += 1
        rs.append([label, value, V.decided(cov, "up", "not up"),
                   V.decided(mem, "yes", "no") if measured else "not measured",
                   V.decided(thr, "up", "not up"), verdict])
    if not rs:
        return out + ["Not measured: no row ran the chase under `off` and another value.", ""]
    out += [F.table(["allocator", "hugepages", "coverage", "memory <= %.2fx off" % CLAIM_MEMORY,
                     "chase throughput", "claim"], rs), ""]
    if not never:
        out += ["The claim agrees in %d of %d, **MISMATCH** in %d, %s in %d%s." % (
            tally[True], len(rs), tally[False], V.WITHIN_NOISE, tally[None],
            ", undecided in %d (memory not measured)" % tally["unmeasured"]
            if tally["unmeasured"] else ""), ""]
    return out


def _aim_text(m, never):
    """hoard2026 with filler beside the production allocators' coverage and mimalloc3's
    throughput, and its memory against its off: ratios and decided directions."""
    out = ["### `%s` with `%s` beside `%s`" % (AIM_ROW, AIM_VALUE, "` and `".join(AIM_PEERS)),
           ""]
    me = m.get((AIM_ROW, AIM_VALUE))
    if not me:
        return out + ["Not measured: the sweep did not run `%s` with `hugepages = %s` on the "
                      "chase." % (AIM_ROW, AIM_VALUE), ""]
    out.append("A development aim, not a paper's claim: each comparison's number and the "
               "direction its interval decides.")
    out.append("")
    for peer in AIM_PEERS:
        p = m.get((peer, None))
        if not p:
            out.append("- coverage against `%s`: not measured." % peer)
            continue
        out.append("- coverage %s against `%s`'s %s: %s." % (
            F.iv(me["cov"]), peer, F.iv(p["cov"]),
            V.decided(above(me["cov"], p["cov"], strict=False), "at least", "below")))
    out.append("- coverage %s against %.2f: %s." % (
        F.iv(me["cov"]), AIM_COVERAGE,
        V.decided(decide(me["cov"], ">=", AIM_COVERAGE), "at least", "below")))
    p = m.get((AIM_PEERS[1], None))
    if p:
        q = V.ratio(me["thr"], p["thr"])
        out.append("- chase throughput over `%s`'s: %s: %s." % (
            AIM_PEERS[1], F.iv(q), V.decided(decide(q, ">=", 1.0), "at least", "below")))
    qs = memory_ratios(m, AIM_ROW, AIM_VALUE)
    for pol, q in qs.items():
        out.append("- held %s after the drain over `off`'s, %s: %s: %s." % (
            spoken(HELD_AT), pol, F.iv(q),
            V.decided(decide(q, "<=", AIM_MEMORY), "within %.1fx" % AIM_MEMORY,
                      "beyond %.1fx" % AIM_MEMORY)))
    if not qs:
        out.append("- held after the drain over `off`'s: not measured.")
    if never:
        out.append("- (THP `never`: every coverage above is 0.)")
    return out + [""]


def coverage_plot(rows, outdir, ncores=1):
    """hugepages.png: each allocator and value a point, coverage at the end of the chase (x)
    against the chase's throughput (y), with their intervals; a colour per allocator, a
    marker per value."""
    m, _ = measure(rows, ncores)
    pts = [(k, s) for k, s in m.items() if s["thr"] and s["cov"]]
    if not any(v is not None for (_, v), _ in pts):
        return []
    plt = K.plt()
    fig, ax = plt.subplots(figsize=(8.5, 5.2))
    labels = []
    for (label, _), _ in pts:
        if label not in labels:
            labels.append(label)
    for (label, value), s in pts:
        i = labels.index(label)
        marker = K.MARKERS[VALUES.index(value)] if value in VALUES else "*"
        ax.errorbar([s["cov"].med], [s["thr"].med / 1e6], xerr=K.yerr([s["cov"]]),
                    yerr=K.yerr([s["thr"]], 1e-6), marker=marker, ms=7 if value is None else 5,
                    capsize=2, color="C%d" % (i % 10), ls="none",
                    label=label if value is None else "%s, %s" % (label, value))
    ax.set_xlabel("huge-page coverage at the end of the chase (AnonHugePages / Rss)")
    ax.set_ylabel("chase: million nodes visited / s")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    K.legend(ax)
    K.title(ax, "Huge-page coverage against the TLB-bound chase's throughput (circle off, "
            "square madvise, triangle filler, star production; bars: the interval over "
            "repetitions)",
            fontsize=10)
    return [K.save(fig, outdir, PLOT)]

"""Today's allocators in Table 7: glibc, jemalloc, tcmalloc, mimalloc 3, snmalloc
judged by the same rules as the strategies (rules.py), measured from outside the allocator.

- fast? and scalable?: the same workloads, run under the allocator as workload labels
  `today-<label>` (fewer repetitions than the strategies' `<label>`); read as `<label>`
  beside `serial`'s runs (relabel()).
- avoids false sharing?: libhoardlab's census is a hook inside the allocator (the census=on
  knob turns on src/core/instruments/census.c, read back through hoardlab_stats); here the
  census comes from outside it: the workload logs the addresses it received and computes the
  same count (harness/census.c; the parameter census = 1 of active-false and passive-false;
  runs.csv extra.census_false_blocks).
- blowup: libhoardlab's A (held_bytes_peak, os_bytes per round) is also a hook; here memory
  is RSS less LazyFree (pages freed with MADV_FREE stay in RSS until reclaimed), per round of
  the blowup workloads, and the floor before the phase (extra.floor_kb) is subtracted, against
  the live bytes the workload itself knows (the rounds' live_bytes)."""
from .groups import is_census, ok, outside_bytes, reference_variant
from .blowup import no_p_rule, p_rule, rounds_first
from .noise import spread_of, verdict
from .rules import false_sharing, fast, quiet_timing, scalable, undecided

__all__ = ["TODAY_PREFIX", "TODAY_KEYS", "OUTSIDE_CENSUS_COLUMN", "OUTSIDE_RULE", "relabel",
           "outside_census", "false_sharing_outside", "outside_held", "blowup_outside",
           "today_verdicts"]

TODAY_PREFIX = "today-"
TODAY_KEYS = ("fast", "scalable", "false_sharing", "blowup")
OUTSIDE_CENSUS_COLUMN = "extra.census_false_blocks"
OUTSIDE_RULE = (
    "Today's allocators are judged by the rules above, from outside the allocator: their "
    "runs are labelled `today-<workload>` and read as `<workload>` beside `serial`'s; false "
    "sharing from the census the workload computes on the addresses it received (active-false "
    "and passive-false with census = 1, harness/census.c: objects handed to a thread while "
    "another thread's object was live on a cache line they touch); blowup from RSS less "
    "LazyFree at each round's peak, less the same before the phase (extra.floor_kb): "
    "unbounded by the rounds rule; O(P) when b(T) = that memory / the live bytes the workload "
    "counts grows over the thread counts as the O(P) rule says; else O(1).")


def relabel(rows):
    """Rows with `today-<label>` read as `<label>` (copies; other rows as they are)."""
    out = []
    for r in rows:
        wl = r.get("workload_label") or ""
        if wl.startswith(TODAY_PREFIX):
            r = dict(r, workload_label=wl[len(TODAY_PREFIX):])
        out.append(r)
    return out


def outside_census(rows, variant):
    """{workload_label: max extra.census_false_blocks} over variant's census runs with
    census = 1 and >= 2 threads (the census from outside the allocator)."""
    res = {}
    for r in ok(rows):
        if r["variant"] != variant or not is_census(r) or (r.get("threads") or 0) < 2:
            continue
        c = r.get(OUTSIDE_CENSUS_COLUMN)
        if c is None:
            continue
        res[r["workload_label"]] = max(res.get(r["workload_label"], 0), c)
    return res


def false_sharing_outside(rows, variant, ncores):
    """avoids false sharing? from the outside census: yes if every census run counts 0
    falsely-shared blocks, no if any counts more (which workload: actively or passively
    induced); without census runs, the timing rule of rules.false_sharing."""
    counts = outside_census(rows, variant)
    if not counts:
        v = false_sharing(rows, variant, ncores)
        v["note"] = "; ".join(x for x in (v["note"], "no census from outside") if x)
        return v
    wl_of = {r["workload_label"]: r["workload"] for r in rows}
    bad = {w: c for w, c in counts.items() if c > 0}
    kinds = []
    for name, how in (("active-false", "actively induced"), ("passive-false",
                                                            "passively induced")):
        if any(wl_of.get(w) == name for w in bad):
            kinds.append("%s (%s)" % (how, name))
    ev = "census from outside: " + ", ".join("%s %d" % (w, c) for w, c in sorted(counts.items()))
    return verdict("no" if bad else "yes", ev, "; ".join(kinds))


def outside_held(r, rounds):
    """(peak of RSS less LazyFree over the run's rounds, less its floor_kb; the live bytes
    at that peak's run) for one blowup run; None without rounds."""
    rs = [x for x in rounds if x["index"] == r["index"]]
    mems = [(outside_bytes(x), x.get("live_bytes")) for x in rs]
    mems = [m for m in mems if m[0] is not None]
    if not mems:
        return None
    peak, live = max(mems, key=lambda m: m[0])
    floor = r.get("extra.floor_kb")
    return peak - (floor * 1024 if floor is not None else 0), max(m[1] or 0 for m in mems)


def blowup_outside(rows, rounds, variant):
    """blowup from outside the allocator (OUTSIDE_RULE; the rules of rules.blowup, with
    their intervals)."""
    runs, ev, near, decided_early = rounds_first(rows, rounds, variant, "RSS less LazyFree")
    if decided_early:
        return decided_early
    rr = [r for r in runs if r["workload"] == "blowup-roundrobin"]
    b = {}
    for t in sorted({r["threads"] for r in rr}):
        xs = [outside_held(r, rounds) for r in rr if r["threads"] == t]
        xs = spread_of([h / live for h, live in (x for x in xs if x) if live])
        if xs:
            b[t] = xs
    if len(b) < 2:
        return no_p_rule(ev, near, "blowup-roundrobin measured at fewer than 2 thread counts")
    return p_rule(b, ev, "(RSS - LazyFree - floor)/live", near, rr[0]["workload_label"])


def today_verdicts(rows, rounds, ncores, expected, installed=None):
    """One entry per allocator of `expected` ({name: {"category", "fast", ...: set of
    answers or None, "source"}}), in its order: the measured verdicts of its `today-*` runs
    (None when it has no runs: `installed(name)` then says "not installed" or "not measured"),
    its expected class and the mismatches (decided verdicts outside the expected answers)."""
    rl = relabel(rows)
    ref = reference_variant(rl, "serial")
    quiet = [r for r in rl if not r.get("load.busy") or is_census(r)]
    out = []
    for name, exp in expected.items():
        mine = [r for r in rl if r.get("variant") == name]
        entry = {"variant": name, "expected": exp, "mismatches": []}
        if not mine:
            entry["missing"] = "not installed" if installed and not installed(name) \
                else "not measured"
            out.append(entry)
            continue
        entry.update({"fast": fast(rl, name, ref), "scalable": scalable(rl, name, ncores),
                      "false_sharing": false_sharing_outside(rl, name, ncores),
                      "blowup": blowup_outside(rl, rounds, name)})
        if len(quiet) < len(rl):
            fs = entry["false_sharing"]
            quiet_timing(entry, rl, quiet, ref, ncores)
            if fs["evidence"].startswith("census"):     # counts: not a timing verdict
                entry["false_sharing"] = fs
        entry["mismatches"] = [k for k in TODAY_KEYS if exp.get(k) and
                               not undecided(entry[k]["value"]) and
                               entry[k]["value"] not in exp[k]]
        out.append(entry)
    return out

"""Hoard's Table 7 decided from the measurements beside the paper's claims, with the evidence
and the rules."""
from .. import fmt as F, paper, verdicts as V
from .today import today_section


def follows_cpu(meta):
    """The variants whose effective heap_select is cpu (meta.json's allocators)."""
    out = set()
    for a in (meta or {}).get("allocators") or ():
        text = (a.get("effective") or {}).get("text") or []
        if any(ln.split(":", 1)[-1].split()[:3] == ["heap_select", "=", "cpu"] for ln in text):
            out.add(a.get("variant"))
    return out


def taxonomy_section(rows, rounds, ncores, meta=None):
    """Table 7 compares strategies: it appears only when the sweep measured two or more (a
    one-knob experiment on one strategy has the knob table instead)."""
    tax = V.taxonomy(rows, rounds, ncores, placement=follows_cpu(meta))
    if len({e["strategy"] for e in tax}) < 2:
        return [], tax
    return strategies_table(rows, ncores, tax) + today_section(rows, rounds, ncores, meta)[0], \
        tax


def strategies_table(rows, ncores, tax):
    """Table 7 of the strategies, its mismatches, evidence and rules."""
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
    out += [F.table(hdr, rs), ""]
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
            % V.WITHIN_NOISE,
            "- Where the runs recorded other processes' load (runs.csv `load.busy`), fast?, "
            "scalable? and false sharing from speed are decided from the runs no other "
            "process disturbed; a verdict only the busy runs would decide, or one that "
            "setting them aside left resting on a group of one run, says *%s*. A "
            "false-sharing verdict of a strategy whose heap follows the CPU (heap_select = "
            "cpu) in unpinned runs says it %s, and is never a mismatch."
            % (V.BUSY_UNDECIDED, V.PLACEMENT_NOTE.split(":")[0]),
            "- A *no* of fast? or scalable? names, after *counted where it fell*, the "
            "workloads whose speed fell (by the medians: 1-thread throughput below %.2f of "
            "serial's; a gain below %.2f at T) and what their runs' records counted there: "
            "lock acquisitions and contended acquisitions per operation, remote frees per "
            "operation (medians over the runs), and the census's false-sharing lines (its "
            "census runs of that workload); *none counted* where the records hold no "
            "statistics." % (V.FAST_MIN_RATIO, V.SCALE_YES_GAIN), ""]
    return out

"""Today's allocators: the second table of the taxonomy, each production
allocator's row measured from outside it (verdicts/today.py) beside its Table 7 class as its
documentation describes it, the mismatches stated.

EXPECTED is static data, not a verdict: per allocator, the Table 7 category its design
falls in, the answers that category (or its own documentation, where that says more) gives,
and one line naming the source. A None answer: the documentation does not say, never a
mismatch; a set of two: the documentation allows both."""
from .. import allocators, common, fmt as F, paper, verdicts as V

EXPECTED = {
    "glibc": {
        "category": "private heaps with ownership (ptmalloc2 arenas)",
        "fast": {"yes"}, "scalable": {"yes"}, "false_sharing": {"no"}, "blowup": {"O(P)"},
        "source": "Hoard ASPLOS 2000 Table 7 places Ptmalloc here (fast, scalable, induces "
                  "false sharing, O(P) blowup); glibc's malloc.c (2.36) keeps the design: "
                  "arenas up to 8 x cores, a chunk freed back to its own arena, and a per-"
                  "thread tcache of at most 7 chunks a size in front (freed chunks of any "
                  "arena reused by the freeing thread)"},
    "jemalloc": {
        "category": "private heaps with ownership (arenas, threads assigned round-robin)",
        "fast": {"yes"}, "scalable": {"yes"}, "false_sharing": {"no", "yes"},
        "blowup": {"O(P)"},
        "source": "jemalloc(3) 5.3 and Evans (BSDCan 2006): 4 x cores arenas, a region freed "
                  "to its own arena, a bounded per-thread tcache in front; the paper argues "
                  "arenas keep threads' objects on separate lines, while the tcache reuses "
                  "remote frees in the freeing thread (so its docs do not decide false "
                  "sharing); memory per arena, purged by decay: the class's O(P)"},
    "tcmalloc": {
        "category": "private heaps with thresholds (per-thread caches over central free "
                    "lists; gperftools 2.10)",
        "fast": {"yes"}, "scalable": {"yes"}, "false_sharing": {"no"}, "blowup": {"O(1)"},
        "source": "gperftools docs/tcmalloc.html: a freed object goes to the freeing "
                  "thread's cache (so passive false sharing is not avoided), caches are "
                  "bounded (max_total_thread_cache_bytes, 32 MiB by default) and their surplus "
                  "returns to the central lists: bounded, like Hoard's thresholds"},
    "mimalloc3": {
        "category": "private heaps with ownership (per-thread heaps owning pages, sharded "
                    "free lists)",
        "fast": {"yes"}, "scalable": {"yes"}, "false_sharing": {"yes"},
        "blowup": {"O(1)", "O(P)"},
        "source": "Leijen, Zorn, de Moura (2019, mimalloc tech report) and the 3.x README: "
                  "a page holds one thread's objects, a remote free goes back to its page's "
                  "owner (so neither active nor passive false sharing by design); empty pages "
                  "return to shared arenas after a purge delay, which the docs present as "
                  "bounding memory, though the class is O(P): both allowed"},
    "snmalloc": {
        "category": "private heaps with ownership (message passing, snmalloc 0.7)",
        "fast": {"yes"}, "scalable": {"yes"}, "false_sharing": {"yes"},
        "blowup": {"O(1)", "O(P)"},
        "source": "Lietar et al. (ISMM 2019, snmalloc): each thread's allocator owns its "
                  "slabs, remote frees are batched and sent to the owner, which frees them "
                  "(no false sharing by design); the paper targets producer-consumer memory "
                  "(returned to the owner), but per-thread free slabs make the class O(P): "
                  "both allowed"},
}


def installed(name):
    """Whether a production allocator's library is on this machine."""
    try:
        allocators.production_library(name)
        return True
    except common.ToolError:
        return False


def wanted(rows, meta):
    """Whether the sweep measured (or meant to measure) today's allocators: today-* runs, or
    the sweep file's only_where_named (all of them may be missing on this machine)."""
    if any(str(r.get("workload_label") or "").startswith(V.TODAY_PREFIX) for r in rows):
        return True
    text = ((meta or {}).get("sweep") or {}).get("text") or ""
    return "only_where_named" in text and V.TODAY_PREFIX in text


def today_section(rows, rounds, ncores, meta=None, expected=None, is_installed=installed):
    """The "Today's allocators" table, its mismatches, evidence and sources."""
    if not wanted(rows, meta):
        return [], []
    expected = EXPECTED if expected is None else expected
    ents = V.today_verdicts(rows, rounds, ncores, expected, is_installed)
    out = ["## Today's allocators in Table 7, from outside the allocator", "",
           "Each production allocator measured on the taxonomy's workloads (labelled "
           "`today-<workload>`), with no hook inside it: false sharing from the census the "
           "workload computes on the addresses it received, blowup from RSS less LazyFree "
           "over the rounds against the live bytes the workload counts. Beside each "
           "verdict, the Table 7 answer of the class its documentation describes (sources "
           "below).", ""]
    hdr = ["allocator", "class (documented)", "fast?", "expected", "scalable?", "expected",
           "avoids false sharing?", "expected", "blowup", "expected", "mismatches"]
    rs = []
    for e in ents:
        exp = e["expected"]
        cells = [e["variant"], exp["category"]]
        for k in V.TODAY_KEYS:
            if "missing" in e:
                cells.append(e["missing"])
            else:
                v = e[k]["value"]
                cells.append(("**%s**" % v) if k in e["mismatches"] else v)
            cells.append(paper.claim_text(exp.get(k)))
        cells.append(e["missing"] if "missing" in e else
                     (", ".join("**%s**" % m for m in e["mismatches"]) or "none"))
        rs.append(cells)
    out += [F.table(hdr, rs), ""]
    mism = [(e["variant"], k) for e in ents for k in e["mismatches"]]
    names = {"fast": "fast?", "scalable": "scalable?", "false_sharing": "avoids false sharing?",
             "blowup": "blowup"}
    if mism:
        out += ["**Mismatches with their documentation (%d):** %s. Measured on this machine; "
                "reported, not corrected." % (len(mism), "; ".join(
                    "%s %s measured %s, documented %s" % (
                        v, names[k], next(e for e in ents if e["variant"] == v)[k]["value"],
                        paper.claim_text(expected[v][k])) for v, k in mism)), ""]
    else:
        out += ["No decided verdict contradicts the allocators' documentation.", ""]
    missing = [e["variant"] for e in ents if "missing" in e]
    if missing:
        out += ["Not measured here: %s." % ", ".join(
            "%s (%s)" % (e["variant"], e["missing"]) for e in ents if "missing" in e), ""]
    out += ["### Evidence (today's allocators)", ""]
    for e in ents:
        if "missing" in e:
            continue
        out.append("- **%s**:" % e["variant"])
        for k in V.TODAY_KEYS:
            v = e[k]
            out.append("  - %s %s — %s%s" % (names[k], v["value"], v["evidence"],
                                            (" (%s)" % v["note"]) if v["note"] else ""))
    out += ["", "### Sources of the documented classes", ""]
    out += ["- **%s** (%s): %s" % (n, x["category"], x["source"]) for n, x in expected.items()]
    out += ["", "- " + V.OUTSIDE_RULE, ""]
    return out, ents

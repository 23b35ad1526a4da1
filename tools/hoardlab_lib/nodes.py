"""The node a run ran on, and kinds of node.

Every row of runs.csv names its node (`node`), that node's CPU model (`cpu_model`) and its
topology as hwloc counts it (`topology`), so a sweep spread over a cluster keeps where each
number came from. A kind of node is a CPU model with a topology: throughputs measured on two
kinds are not comparable, so a report compares allocators only within one kind; a sweep that
spans several gets one report per kind (`kind-<n>/`) under an index that says so."""
import functools
import os
import platform
import re
import shutil

from . import meta as metamod

TOPOLOGY_COUNTS = ("package", "numanode", "core", "pu", "l3cache", "l2cache", "l1cache")
KIND_DIR = re.compile(r"^kind-\d+$")


def name():
    """Slurm's name for this node inside a job (SLURMD_NODENAME), else the host name."""
    return os.environ.get("SLURMD_NODENAME") or platform.node()


def topology_text(topo):
    """hwloc's object counts as one cell: 'package=1 numanode=1 core=2 pu=2 ...'."""
    return " ".join("%s=%s" % (k, topo[k]) for k in TOPOLOGY_COUNTS if k in (topo or {}))


@functools.lru_cache(maxsize=None)
def _here():
    return (name(), metamod.cpu_model() or "", topology_text(metamod.topology()))


def here():
    """The row columns of a run made by this process: node, cpu_model, topology."""
    node, cpu, topo = _here()
    return {"node": node, "cpu_model": cpu, "topology": topo}


def kind_key(row):
    return (row.get("cpu_model") or "", row.get("topology") or "")


def kinds(rows):
    """[{label, cpu_model, topology, nodes, rows}], the kind with the most runs first. Rows
    without node columns (results from before they existed) count as one kind."""
    by = {}
    for r in rows:
        by.setdefault(kind_key(r), []).append(r)
    res = []
    for (cpu, topo), rs in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        res.append({"cpu_model": cpu, "topology": topo, "rows": rs,
                    "nodes": sorted({str(r.get("node")) for r in rs if r.get("node")})})
    for i, k in enumerate(res):
        k["label"] = "kind-%d" % (i + 1)
    return res


def header_line(meta):
    """The report header's line on where the runs ran (a sweep on Slurm, or one kind of a
    sweep over several), or None."""
    sl, kind = meta.get("slurm"), meta.get("node_kind")
    if not sl and not kind:
        return None
    names = sorted(meta.get("nodes") or {}) or (kind or {}).get("nodes") or []
    where = ("%s of the %d kinds of node this sweep ran on (allocators are compared only "
             "within it; index: ../report.md)" % (kind["label"], kind["of"])) if kind else \
        "one kind of node"
    jobs = ""
    if sl:
        n = sl.get("tasks", 0)
        jobs = "Slurm: job%s %s, %d task%s; " % (
            "s" if len(sl.get("jobs", [])) > 1 else "", ", ".join(sl.get("jobs", [])) or "?",
            n, "s" if n != 1 else "")
    return "- %snodes %s: %s%s" % (jobs, ", ".join(names) or "?", where, "".join(
        "; **warning**: " + w for w in (sl or {}).get("warnings", [])))


def _kind_meta(meta, kind, n):
    """meta.json of one kind's folder: `machine` is a node of that kind."""
    m = dict(meta)
    nodes = {k: v for k, v in (meta.get("nodes") or {}).items() if k in kind["nodes"]}
    m["nodes"] = nodes
    m["node_kind"] = {"label": kind["label"], "of": n, "cpu_model": kind["cpu_model"],
                      "topology": kind["topology"], "nodes": kind["nodes"]}
    if nodes:
        m["machine"] = dict(next(iter(nodes.values())).get("machine") or {})
    else:
        m["machine"] = dict(meta.get("machine") or {}, cpu_model=kind["cpu_model"])
    idx = {r["index"] for r in kind["rows"]}
    m["runs_planned"] = len(idx)
    m["runs_done"] = len(idx)
    m["runs_not_ok"] = sum(1 for r in kind["rows"] if r.get("status") != "ok")
    m.pop("interrupted", None)
    return m


def report_by_kind(outdir, rows, rounds, meta, kinds_, baseline, make_report, series=()):
    """A sweep that ran on several kinds of node: runs.csv, rounds.csv, meta.json and a whole
    report per kind in `kind-<n>/` (make_report on each), and report.md an index saying so.
    Returns report.md's path."""
    from . import tidy
    for f in os.listdir(outdir):        # the folders of an earlier report: written anew
        p = os.path.join(outdir, f)
        if KIND_DIR.match(f) and os.path.isfile(os.path.join(p, "runs.csv")):
            shutil.rmtree(p)
    table = []
    fields = tidy.read_fields(rows)     # runs.csv's own order: no build needed to split it
    for k in kinds_:
        sub = os.path.join(outdir, k["label"])
        os.makedirs(sub)
        idx = {r["index"] for r in k["rows"]}
        tidy.write_csv(os.path.join(sub, "runs.csv"), k["rows"],
                       tidy.columns_for(k["rows"], fields=fields))
        tidy.write_csv(os.path.join(sub, "rounds.csv"),
                       [r for r in rounds if r.get("index") in idx], tidy.ROUND_COLUMNS)
        tidy.write_series(sub, [r for r in series if r.get("index") in idx])
        metamod.write(os.path.join(sub, "meta.json"), _kind_meta(meta, k, len(kinds_)))
        make_report(sub, baseline)
        ok = sum(1 for r in k["rows"] if r.get("status") == "ok")
        table.append("| [%s](%s/report.md) | %s | %s | %s | %d | %d |" % (
            k["label"], k["label"], k["cpu_model"] or "?", k["topology"] or "?",
            ", ".join(k["nodes"]) or "?", len(idx), ok))
    sw = meta.get("sweep") or {}
    lines = ["# hoardlab sweep `%s`" % (sw.get("name") or os.path.basename(outdir)), ""]
    if sw.get("description"):
        lines += [sw["description"], ""]
    lines += ["This sweep ran on **%d kinds of node** (a kind: a CPU model with a topology, "
              "as hwloc counts it). A throughput measured on one kind is not comparable with "
              "one measured on another, so allocators are compared only within one kind: "
              "each has its own report, made from its runs alone. `runs.csv` here holds "
              "every run, with its `node`, `cpu_model` and `topology`." % len(kinds_), "",
              "| kind | CPU model | topology (hwloc) | nodes | runs | ok |",
              "|---|---|---|---|---|---|"] + table + [""]
    sl = meta.get("slurm") or {}
    if sl.get("incomplete"):
        lines += ["**Incomplete**: %s (`tools/hoardlab collect %s --resume` runs them)." % (
            "; ".join(sl["incomplete"]), outdir), ""]
    path = os.path.join(outdir, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")
    return path

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

"""`hoardlab layers`: the use graph of libhoardlab's files, from the symbols each object file
defines and uses (nm), checked against the layer order of src/core/hl.h: a file may use only
files of its own layer or below. Prints every edge that points upward; exit 1 if there is one.

The registry is the one sanctioned exception: its table names the strategies' rows (data, not
calls), so registry.c -> strategies/*.c is allowed.
"""
import collections
import glob
import os
import subprocess

from .common import ToolError

LAYERS = [
    ("base", ["msg", "os", "lock", "bootstrap", "config", "registry"]),
    ("parts", ["arena", "pagemap", "meta", "large", "sizeclass", "thread", "stats",
               "superblock", "heap", "heapselect", "tlab", "remote", "carveheap", "hazard"]),
    ("strategies", ["strategies/*"]),
    ("instruments", ["observe", "census", "trace", "checks"]),
    ("front", ["interpose", "export", "fork", "init", "api"]),
]
ALLOWED = {("registry", "strategies")}
TARGETS = ("src/libhoardlab_core.a",)   # what `hoardlab layers` builds first: the objects read


def layer_of(name):
    for i, (layer, members) in enumerate(LAYERS):
        if name in members or ("strategies/*" in members and name.startswith("strategies/")):
            return i, layer
    return None, None


def objects(bdir):
    """{file name: object path} of the static core, e.g. 'heap' or 'strategies/hoard'."""
    out = {}
    for o in glob.glob(os.path.join(bdir, "src", "libhoardlab_core.a.p", "*.o")):
        base = os.path.basename(o)[:-len(".c.o")]
        if base.startswith("core_"):
            out[base[len("core_"):]] = o
        elif base.startswith("strategies_"):
            out["strategies/" + base[len("strategies_"):]] = o
    if not out:
        raise ToolError("no object files under %s/src/libhoardlab_core.a.p: build first" % bdir)
    return out


def graph(bdir):
    """{(user, definer): [symbols]} over the core's object files."""
    defs, uses = {}, collections.defaultdict(set)
    for name, path in objects(bdir).items():
        p = subprocess.run(["nm", path], capture_output=True, text=True, check=True)
        for line in p.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRV":
                defs[parts[2]] = name
            elif len(parts) == 2 and parts[0] == "U":
                uses[name].add(parts[1])
    edges = collections.defaultdict(list)
    for user, syms in uses.items():
        for s in sorted(syms):
            definer = defs.get(s)
            if definer and definer != user:
                edges[(user, definer)].append(s)
    return edges


def upward(edges):
    """The edges that point to a higher layer (or touch a file no layer lists)."""
    bad = []
    for (user, definer), syms in sorted(edges.items()):
        (lu, nu), (ld, nd) = layer_of(user), layer_of(definer)
        if lu is None or ld is None:
            bad.append((user, nu, definer, nd, syms))
        elif ld > lu and (user, nd) not in ALLOWED:
            bad.append((user, nu, definer, nd, syms))
    return bad


def report(bdir):
    edges = graph(bdir)
    bad = upward(edges)
    lines = ["%d files, %d use edges, %d pointing upward" % (
        len({u for u, _ in edges} | {d for _, d in edges}), len(edges), len(bad))]
    for user, nu, definer, nd, syms in bad:
        lines.append("  %s (%s) -> %s (%s): %s" % (user, nu or "no layer", definer,
                                                  nd or "no layer", ", ".join(syms[:4])))
    return bad, "\n".join(lines)

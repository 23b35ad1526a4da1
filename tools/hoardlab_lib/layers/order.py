"""The layer orders, bottom up: the one place they are written. docs/layout.md's Layers table,
docs/architecture.md's and harness/README.md's are checked against them
(tests/tools/test_docs.py); src/core/base/base.h points here.

A tree is a part of the house whose files the check reads the same way: its objects (nm) and
its headers' code. Its nodes are files named by their stem relative to the tree (`heap/heap`
is src/core/heap/heap.c with heap.h, `strategies/hoard` is src/strategies/hoard.c,
`workloads/xfree` is harness/workloads/xfree.c). A member `DIR/*` stands for every file of
that folder.
"""
import collections

# src/: libhoardlab's core (its static library, so every object of the shared one but
# front/export.c). Its layers are its folders, bottom up: src/core/FOLDER, and src/strategies
# between the mechanisms and what observes and fronts them. A file's node is FOLDER/STEM, its
# layer its folder's; a new file joins the layer of the folder it is put in.
SRC_FOLDERS = ["base", "ds", "mem", "heap", "remote", "heaps", "cache", "strategies",
               "instruments", "front"]
LAYERS = [(folder, [folder + "/*"]) for folder in SRC_FOLDERS]
# Upward data edges the check lets pass: none (the registry's table of rows stands at the top,
# front/registry.c; config reads the strategies' names, base/config.c).
ALLOWED = set()
# A header whose code is another file's, where reading it as its own node would close a loop
# with that file: front.h is the inline malloc and free of interpose's (which sets the entries
# front.h jumps to); rseq.h is the per-CPU cache's critical sections (which read the cache's
# offset). entry.h, the front's test made in every strategy's entry, is its own node (base).
HEADER_NODE = {"front/front": "front/interpose", "cache/rseq": "cache/cpucache"}

# harness/: hlbench. The utilities every file may use, the machine, the samplers a measured
# phase drives, the run machinery, the record, the workloads, and the driver (main and the
# table that names every workload).
HARNESS_LAYERS = [
    ("utilities", ["util", "json", "histogram", "census", "huge"]),
    ("topology", ["topology"]),
    ("samplers", ["latency", "series"]),
    ("run", ["run", "params", "blocks"]),
    ("record", ["record"]),
    ("workloads", ["workloads/*"]),
    ("driver", ["hlbench"]),
]

# root: the folder under the repository; objdir: the objects under the build directory;
# objmap: (object name prefix, node prefix), first match wins ("" matches every object);
# dirs: (source folder under root, node prefix); layers None: loops only (tools/).
Tree = collections.namedtuple("Tree", "name root layers allowed header_node objdir objmap dirs")

SRC = Tree("src", "src", LAYERS, ALLOWED, HEADER_NODE, "src/libhoardlab_core.a.p",
           tuple(("strategies_" if f == "strategies" else "core_%s_" % f, f + "/")
                 for f in SRC_FOLDERS),
           tuple(("strategies" if f == "strategies" else "core/" + f, f + "/")
                 for f in SRC_FOLDERS))
HARNESS = Tree("harness", "harness", HARNESS_LAYERS, set(), {}, "harness/hlbench.p",
               (("workloads_", "workloads/"), ("", "")),
               (("", ""), ("workloads", "workloads/")))
# tools/: the Python modules' import graph (pygraph.py), named by their dotted path.
TOOLS = Tree("tools", "tools", None, set(), {}, None, (), ())

TREES = (SRC, HARNESS, TOOLS)
# what `hoardlab layers` builds first: the objects it reads
TARGETS = ("src/libhoardlab_core.a", "harness/hlbench")


def layer_of(name, layers=LAYERS):
    """(index, layer name) of a node, or (None, None) when no layer lists it."""
    for i, (layer, members) in enumerate(layers or ()):
        for m in members:
            if name == m or (m.endswith("/*") and name.startswith(m[:-1])):
                return i, layer
    return None, None

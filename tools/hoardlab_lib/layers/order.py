"""The layer orders, bottom up: the one place they are written. The README's Layers table,
docs/architecture.md's and harness/README.md's are checked against them
(tests/tools/test_docs.py); src/core/hl.h points here.

A tree is a part of the house whose files the check reads the same way: its objects (nm) and
its headers' code. Its nodes are files named by their stem relative to the tree (`heap` is
src/core/heap.c with heap.h, `strategies/hoard` is src/strategies/hoard.c, `workloads/xfree`
is harness/workloads/xfree.c). A member `DIR/*` stands for every file of that folder.
"""
import collections

# src/: libhoardlab's core (its static library, so every object of the shared one but the
# generated registry list).
LAYERS = [
    ("base", ["hl", "msg", "fault", "os", "lock", "bootstrap", "config", "registry"]),
    ("parts", ["arena", "pagemap", "meta", "large", "sizeclass", "thread", "stats",
               "superblock", "purge", "heap", "selector", "heapselect", "remote", "mailbox", "inbox", "sender", "heappaths",
               "sharded", "globalheap", "cache", "tlab", "cpucache", "fronts", "singleheap", "hazard", "lfstack", "lfqueue"]),
    ("strategies", ["strategies/*"]),
    ("instruments", ["observe", "census", "trace", "heaplog", "checks"]),
    ("front", ["interpose", "export", "fork", "init", "api"]),
]
# The registry's table names the strategies' rows (data, not calls): allowed upward, and no
# part of a loop (each strategy reads the config, which reads the registry's names).
ALLOWED = {("registry", "strategies")}
# A header whose code is another file's: front.h is the inline malloc and free of
# interpose's; entry.h is the front's test of a call on the thread's own fields (hl_me),
# inlined into every strategy's entry, so `thread`'s; rseq.h is the per-CPU cache's sections.
HEADER_NODE = {"front": "interpose", "entry": "thread", "rseq": "cpucache"}

# harness/: hlbench. The utilities every file may use, the machine, the samplers a measured
# phase drives, the run machinery, the record, the workloads, and the driver (main and the
# table that names every workload).
HARNESS_LAYERS = [
    ("utilities", ["util", "json", "histogram"]),
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
           (("core_", ""), ("strategies_", "strategies/")),
           (("core", ""), ("strategies", "strategies/")))
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

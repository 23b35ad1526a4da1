"""`hoardlab layers`: the files of libhoardlab (src/) and of hlbench (harness/) use only files
of their own layer or below, no files use each other in a loop, and no modules of tools/
import each other in a loop, except what the allow-list (KNOWN) names, which can only shrink.

The rules on hand-made graphs, header texts and Python packages (no build needed), then on the
real build's object files and the sources' headers (HOARDLAB_BUILD_DIR, else build/; skipped
when not built), on tools/ itself, and on a copy of each of src/, harness/ and tools/ with a
planted loop."""
import glob
import os
import re
import subprocess
import sys

import shutil

import pytest

from conftest import REPO
from hoardlab_lib import layers

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
TOOL = os.path.join(REPO, "tools", "hoardlab")
built = pytest.mark.skipif(
    not glob.glob(os.path.join(BDIR, "src", "libhoardlab_core.a.p", "*.o"))
    or not glob.glob(os.path.join(BDIR, "harness", "hlbench.p", "*.o")),
    reason="libhoardlab_core or hlbench not built in %s (run tools/hoardlab build)" % BDIR)


def test_upward_edges_are_found():
    edges = {("heap/heap", "base/os"): ["hl_os_map"],                # heap -> base: down
             ("base/os", "heap/heap"): ["hl_heap_free"],             # base -> heap: up
             ("strategies/hoard", "heap/heap"): ["hl_heap_malloc"],  # strategies -> heap
             ("heap/heap", "instruments/census"): ["hl_census_note"],  # heap -> instruments: up
             ("front/init", "strategies/hoard"): ["hl_strategy_hoard"]}  # front -> strategies
    assert [(u, nu, d, nd) for u, nu, d, nd, _ in layers.upward(edges)] == [
        ("base/os", "base", "heap/heap", "heap"),
        ("heap/heap", "heap", "instruments/census", "instruments")]


def test_the_layers_are_the_folders():
    """The order is written once, as the folder order: a node's layer is its folder's."""
    assert layers.LAYERS == [(f, [f + "/*"]) for f in layers.SRC_FOLDERS]
    assert layers.layer_of("heaps/globalheap")[1] == "heaps"     # not heap/
    assert layers.layer_of("heap/heap")[1] == "heap"
    assert layers.layer_of("strategies/hoard")[1] == "strategies"
    # the objects and sources of every folder are read, named by their folder
    assert ("core_heaps_", "heaps/") in layers.SRC.objmap
    assert ("core/front", "front/") in layers.SRC.dirs
    assert ("strategies", "strategies/") in layers.SRC.dirs


def test_ls_src_core_is_the_layer_order():
    """`ls src/core` shows the layers: every file of the core is in a folder of SRC_FOLDERS (no
    file directly in src/core), no folder holds more than 16 files, src/meson.build compiles
    every .c of each folder (named under its folder) and meson.build's core_layers is the same
    order."""
    core = os.path.join(REPO, "src", "core")
    assert sorted(os.listdir(core)) == sorted(f for f in layers.SRC_FOLDERS if f != "strategies")
    for folder in os.listdir(core):
        assert os.path.isdir(os.path.join(core, folder)), folder
        assert len(os.listdir(os.path.join(core, folder))) <= 16, folder
    with open(os.path.join(REPO, "meson.build")) as f:
        top = f.read()
    listed = re.search(r"^core_layers = \[(.*?)\]", top, re.M | re.S).group(1)
    assert re.findall(r"'(\w+)'", listed) == [f for f in layers.SRC_FOLDERS if f != "strategies"]
    with open(os.path.join(REPO, "src", "meson.build")) as f:
        build = f.read()
    files = dict(re.findall(r"^  '(\w+)' : \[(.*?)\]", build, re.M | re.S))
    for folder in os.listdir(core):
        for name in os.listdir(os.path.join(core, folder)):
            if name.endswith(".c") and name not in ("fault.c", "export.c"):
                assert "'%s'" % name in files.get(folder, ""), (folder, name)
    assert "'core/base/fault.c'" in build and "'core/front/export.c'" in build


def test_nothing_points_upward_by_rule():
    """Issue 46: the registry's table of rows stands at the top (front/registry.c), so it names
    the rows downward, and the configuration (base) knows the strategies by name only: no
    data edge is let pass."""
    assert layers.ALLOWED == set() and layers.SRC.allowed == set()
    assert layers.upward({("front/registry", "strategies/hoard"): ["hl_strategy_hoard"],
                          ("front/registry", "base/config"): ["hl_config_load_with"]}) == []
    assert layers.upward({("base/config", "front/registry"): ["hl_strategies"]})
    assert layers.upward({("base/config", "strategies/hoard"): ["hl_strategy_hoard"]})


def test_a_file_in_no_layer_is_reported():
    bad = layers.upward({("newfile", "base/os"): ["hl_os_map"],
                         ("newfolder/x", "base/os"): ["hl_os_map"]})
    assert [(u, nu, d, nd) for u, nu, d, nd, _ in bad] == [
        ("newfile", None, "base/os", "base"), ("newfolder/x", None, "base/os", "base")]


@built
def test_the_build_points_one_way():
    edges = layers.graph(BDIR)
    assert edges, "no use edges read from %s" % BDIR
    assert layers.upward(edges, layers.KNOWN["src"]["upward"]) == []


@built
def test_the_command():
    p = subprocess.run([sys.executable, TOOL, "layers", "--no-build"], capture_output=True,
                       text=True, env=dict(os.environ, HOARDLAB_BUILD_DIR=BDIR), timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 pointing upward" in p.stdout


# --- loops, and the code in headers ---------------------------------------------------------

def test_a_loop_inside_a_layer_fails_and_is_printed_in_order():
    edges = {("heaps/heappaths", "heaps/globalheap"): ["hl_gh_x"],
             ("heaps/globalheap", "heaps/heapselect"): ["hl_heaps_y"],
             ("heaps/heapselect", "heaps/heappaths"): ["hl_heaps_z"],
             ("heaps/heappaths", "base/os"): ["hl_os_map"]}
    assert layers.upward(edges) == []                     # all in heaps or below: no upward edge
    assert layers.loops(edges) == [(["heaps/globalheap", "heaps/heapselect", "heaps/heappaths",
                                     "heaps/globalheap"], None)]
    failed, text = layers.check(edges, layers.EMPTY)
    assert failed
    assert "LOOP: heaps/globalheap -> heaps/heapselect -> heaps/heappaths -> heaps/globalheap" \
        in text


def test_a_loop_across_layers_and_two_file_loops():
    edges = {("base/config", "base/os"): ["hl_nprocs"], ("base/os", "base/config"): ["hl_cfg"],
             ("strategies/hoard", "instruments/census"): ["x"],
             ("instruments/census", "strategies/hoard"): ["y"]}
    assert [w for w, _ in layers.loops(edges)] == [
        ["base/config", "base/os", "base/config"],
        ["instruments/census", "strategies/hoard", "instruments/census"]]


def test_the_configuration_naming_a_row_would_be_a_loop():
    # every strategy reads the config, and the registry names the rows: were the config to read
    # the registry's table (as before issue 46), that would point upward and close a loop
    edges = {("front/registry", "strategies/hoard"): ["hl_strategy_hoard"],
             ("strategies/hoard", "base/config"): ["hl_cfg"],
             ("base/config", "front/registry"): ["hl_strategies"]}
    assert [w for w, _ in layers.loops(edges)] == [
        ["base/config", "front/registry", "strategies/hoard", "base/config"]]
    assert layers.check(edges, layers.EMPTY)[0]
    del edges[("base/config", "front/registry")]
    assert not layers.check(edges, layers.EMPTY)[0]


def test_a_known_loop_passes_only_as_listed():
    known = {"loops": {frozenset({"a", "b"}): (26, "why")}, "upward": {}}
    two = {("a", "b"): ["x"], ("b", "a"): ["y"]}
    assert layers.loops(two, known["loops"]) == [(["a", "b", "a"], (26, "why"))]
    assert layers.stale(two, known) == []
    # a third file joins the loop: a new loop, and the listed one is stale
    three = dict(two)
    three.update({("b", "c"): ["z"], ("c", "a"): ["w"]})
    assert layers.loops(three, known["loops"]) == [(["a", "b", "c", "a"], None)]
    assert layers.stale(three, known) == [("loop", ["a", "b"])]
    # the loop untied: the entry must go
    assert layers.stale({("a", "b"): ["x"]}, known) == [("loop", ["a", "b"])]
    # the output names what the entry says, never an internal issue number
    known["upward"] = {("b", "a"): (35, "the hook table moves up")}
    text = layers.check(two, known, layers.TOOLS)[1]
    assert "known loop (why): a -> b -> a" in text
    text = layers.check({("a", "b"): ["x"]}, {"loops": {}, "upward": {("a", "b"): (35, "w")}})[1]
    assert "known upward: a -> b: x (w)" in text
    assert not re.search(r"issues? \d", text + layers.check(two, known, layers.TOOLS)[1])


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def test_headers_inline_code_and_macros_are_read(tmp_path):
    src = str(tmp_path)
    # b.h's inline function calls a.c's function: b -> a; a.c uses b.h's macro: a -> b
    write(src, "core/mem/a.c", '#include "b.h"\nint hl_a_fn(void) { return B_TWICE(1); }\n')
    write(src, "core/heap/b.h", "/* b.h: the B_TWICE macro uses hl_a_fn() in a comment only */\n"
          "#define B_TWICE(x) ((x) * 2)\n"
          "struct hl_b { int n; };\n"
          "int hl_b_decl(struct hl_b *b);   /* a prototype: no use */\n"
          "static inline int hl_b_get(void) { return hl_a_fn() + hl_c_var; }\n")
    write(src, "core/base/c.c", '#include "b.h"\nint hl_c_var;\nconst char *s = "hl_b_get";\n')
    sym_defs = {"hl_a_fn": "mem/a", "hl_c_var": "base/c"}
    edges = layers.source_graph(src, sym_defs, ["mem/a", "heap/b", "base/c"])
    assert edges == {("heap/b", "mem/a"): ["b.h: hl_a_fn"], ("heap/b", "base/c"): ["b.h: hl_c_var"],
                     ("mem/a", "heap/b"): ["B_TWICE"]}    # not c -> b: a string is no use
    assert [w for w, _ in layers.loops(edges)] == [["heap/b", "mem/a", "heap/b"]]


def test_a_header_section_belongs_to_the_file_it_names(tmp_path):
    src = str(tmp_path)
    # sections name files by their name alone; each goes to the folder holding that file
    write(src, "core/base/hl.h", "#define HL_ONE 1\n"
          "/* ---- os.c: the OS -------- */\n"
          "static inline int hl_os_x(void) { return hl_cfg_y(); }\n"
          "/* ---- sizeclass.c, large.c: classes -------- */\n"
          "#define HL_CLASS(k) hl_nprocs_z(k)\n")
    write(src, "core/base/config.c", "int f(void) { return hl_os_x() + HL_ONE + HL_CLASS(1); }\n")
    write(src, "core/base/os.c", "\n")
    write(src, "core/mem/sizeclass.c", "\n")
    sym_defs = {"hl_cfg_y": "base/config", "hl_nprocs_z": "base/os"}
    edges = layers.source_graph(src, sym_defs, ["base/config", "base/os", "mem/sizeclass"])
    assert edges == {("base/os", "base/config"): ["hl.h: hl_cfg_y"],
                     ("mem/sizeclass", "base/os"): ["hl.h: hl_nprocs_z"],
                     ("base/config", "base/os"): ["hl_os_x"],
                     ("base/config", "base/hl"): ["HL_ONE"],
                     ("base/config", "mem/sizeclass"): ["HL_CLASS"]}


@built
def test_known_is_exactly_what_remains():
    """The allow-list: every loop and upward edge of the build and of tools/ is listed, and
    every listed one still exists, so the list can only shrink."""
    for tree, edges in layers.section_graphs(BDIR):
        known = layers.KNOWN[tree.name]
        assert layers.stale(edges, known, tree) == [], tree.name
        found = layers.loops(edges, known["loops"], tree)
        assert sorted(sorted(set(w)) for w, _ in found) == \
            sorted(sorted(c) for c in known["loops"]), tree.name
        assert all(why for _, why in found), tree.name
        assert layers.upward(edges, known["upward"], tree) == [], tree.name
        assert all(issue in (26, 35) and why for issue, why in
                   list(known["loops"].values()) + list(known["upward"].values()))
    edges = layers.graph(BDIR)
    # the header reading sees what nm alone does not: tlab.h's fast paths count with stats.h
    assert any(s.startswith("tlab.h: ") for s in edges[("cache/tlab", "base/stats")])
    # lock.h (base) counts nothing, and thread.c reaches the statistics only through hooks
    assert ("base/lock", "base/stats") not in edges
    assert ("base/thread", "base/stats") not in edges
    # config.c and os.c no longer use each other
    assert ("base/os", "base/config") not in edges
    # the configuration knows the strategies by name; the registry at the top names the rows
    # and hands their defaults down
    assert not [d for u, d in edges if u == "base/config" and not d.startswith("base/")]
    assert "hl_config_load_with" in edges[("front/registry", "base/config")]
    assert "hl_strategy_hoard" in edges[("front/registry", "strategies/hoard")]
    nodes = {u for u, _ in edges} | {d for _, d in edges}
    assert {"base/base", "mem/sizeclass", "heaps/globalheap", "cache/cpucache"} <= nodes
    assert "cache/rseq" not in nodes and "front/front" not in nodes   # HEADER_NODE


@built
def test_a_loop_planted_in_a_copy_of_the_sources_fails(tmp_path):
    src = os.path.join(str(tmp_path), "src")
    shutil.copytree(os.path.join(REPO, "src"), src)
    assert not layers.report(BDIR, src)[0]
    # superblock.h (used by heap) gains an inline function that calls into heap.c
    with open(os.path.join(src, "core", "mem", "superblock.h")) as f:
        text = f.read()
    assert text.rstrip().endswith("#endif")
    text = text.rstrip()[:-len("#endif")] + (
        "static inline void hl_sb_planted(void) { hl_heap_init(); }\n#endif\n")
    with open(os.path.join(src, "core", "mem", "superblock.h"), "w") as f:
        f.write(text)
    failed, out = layers.report(BDIR, src)
    assert failed, out
    assert "LOOP: " in out and "superblock" in out.split("LOOP: ", 1)[1].splitlines()[0]
    assert "mem/superblock -> heap/heap (superblock.h: hl_heap_init)" in out
    assert "upward: mem/superblock (mem) -> heap/heap (heap): superblock.h: hl_heap_init" in out


@built
def test_strict_passes_now_that_no_loop_is_left():
    """Issue 26's and 35's target: no loop and no upward edge in src/, harness/ or tools/,
    with nothing allowed."""
    p = subprocess.run([sys.executable, TOOL, "layers", "--no-build", "--strict"],
                       capture_output=True, text=True,
                       env=dict(os.environ, HOARDLAB_BUILD_DIR=BDIR), timeout=120)
    out = p.stdout.splitlines()
    src, harness, tools = [n for n, line in enumerate(out)
                           if line.startswith(("src: ", "harness: ", "tools: "))]
    assert "0 pointing upward, 0 loops" in out[src], p.stdout
    assert "0 pointing upward, 0 loops" in out[harness], p.stdout
    assert src + 1 == harness and harness + 1 == tools, p.stdout    # nothing listed between
    assert p.returncode == 0, p.stdout + p.stderr
    assert out[tools].endswith(", 0 loops (0 known)"), p.stdout


# --- harness/: hlbench's files ---------------------------------------------------------------

def test_harness_layers_order_the_workloads_under_the_driver():
    h = layers.HARNESS
    assert layers.layer_of("workloads/xfree", h.layers)[1] == "workloads"
    assert layers.layer_of("util", h.layers)[1] == "utilities"
    edges = {("workloads/xfree", "run"): ["hb_parallel"],             # down
             ("hlbench", "workloads/xfree"): ["hb_xfree"],             # the table: down
             ("workloads/xfree", "hlbench"): ["hb_int"],               # up: the old getters
             ("json", "run"): ["hb_fail"]}                             # up
    assert [(u, d) for u, _, d, _, _ in layers.upward(edges, tree=h)] == [
        ("json", "run"), ("workloads/xfree", "hlbench")]
    assert [w for w, _ in layers.loops(edges, tree=h)] == [
        ["hlbench", "workloads/xfree", "hlbench"]]


@built
def test_the_harness_points_one_way():
    """The utilities at the bottom, the driver at the top, and the workloads use nothing of
    the driver."""
    edges = layers.graph(BDIR, tree=layers.HARNESS)
    nodes = {u for u, _ in edges} | {d for _, d in edges}
    assert {"util", "json", "run", "params", "record", "hlbench", "workloads/classic"} <= nodes
    assert layers.upward(edges, tree=layers.HARNESS) == []
    assert layers.loops(edges, tree=layers.HARNESS) == []
    assert not [e for e in edges if e[1] == "hlbench"], "nothing may use the driver"
    assert "hb_int" in edges[("workloads/classic", "params")]
    # the header reading counts the inline sampler: blocks.c allocates through hb_malloc
    assert "hb_malloc" in edges[("blocks", "latency")]


@built
def test_a_loop_planted_in_a_copy_of_the_harness_fails(tmp_path):
    harness = os.path.join(str(tmp_path), "harness")
    shutil.copytree(os.path.join(REPO, "harness"), harness)
    assert not layers.report(BDIR, harness=harness)[0]
    # topology.h (below the run machinery) gains an inline function that calls it
    path = os.path.join(harness, "topology.h")
    with open(path) as f:
        text = f.read()
    assert text.rstrip().endswith("#endif")
    with open(path, "w") as f:
        f.write(text.rstrip()[:-len("#endif")] +
                "static inline void hb_planted(void) { hb_spawn_first(0); }\n#endif\n")
    failed, out = layers.report(BDIR, harness=harness)
    assert failed, out
    section = out.split("\nharness: ", 1)[1].split("\ntools: ", 1)[0]
    assert "upward: topology (topology) -> run (run): topology.h: hb_spawn_first" in section
    assert "LOOP: run -> topology -> run" in section


# --- tools/: the import graph ----------------------------------------------------------------

def test_imports_are_read_wherever_they_stand(tmp_path):
    root = str(tmp_path)
    write(root, "lib/__init__.py", "from .a import f\n")                 # package relative
    write(root, "lib/a.py", "import os\nfrom . import b\n")
    write(root, "lib/b.py", "def g():\n    from .a import f\n    return f\n")   # in a function
    write(root, "lib/pkg/__init__.py", "from .c import h\nfrom .. import b\n")
    write(root, "lib/pkg/c.py", "from ..b import g\nfrom . import d\nimport lib.a\n")
    write(root, "lib/pkg/d.py", "from lib.pkg import h\n")              # the package's name
    write(root, "hoardlab", "#!/usr/bin/env python3\nfrom lib.pkg import c\n")
    edges = layers.import_graph(root)
    assert edges == {
        ("lib", "lib.a"): ["line 1: from .a import f"],
        ("lib.a", "lib.b"): ["line 2: from . import b"],
        ("lib.b", "lib.a"): ["line 2: from .a import f (in a function)"],
        ("lib.pkg", "lib.pkg.c"): ["line 1: from .c import h"],
        ("lib.pkg", "lib.b"): ["line 2: from .. import b"],
        ("lib.pkg.c", "lib.b"): ["line 1: from ..b import g"],
        ("lib.pkg.c", "lib.pkg.d"): ["line 2: from . import d"],
        ("lib.pkg.c", "lib.a"): ["line 3: import lib.a"],
        ("lib.pkg.d", "lib.pkg"): ["line 1: from lib.pkg import h"],
        ("hoardlab", "lib.pkg.c"): ["line 2: from lib.pkg import c"]}
    found = layers.loops(edges, tree=layers.TOOLS)
    assert [w for w, _ in found] == [["lib.a", "lib.b", "lib.a"],
                                     ["lib.pkg", "lib.pkg.c", "lib.pkg.d", "lib.pkg"]]
    failed, text = layers.check(edges, layers.EMPTY, layers.TOOLS)
    assert failed and "pointing upward" not in text
    assert "LOOP: lib.a -> lib.b -> lib.a" in text
    assert "lib.b -> lib.a (line 2: from .a import f (in a function))" in text


def test_tools_loops_are_exactly_the_known_ones():
    """tools/ of the repository: no import loop, and nothing allowed (issue 35 untied the
    report family's, cli <-> slurm's and nodes <-> tidy's)."""
    edges = layers.import_graph(os.path.join(REPO, "tools"))
    assert ("hoardlab", "hoardlab_lib.cli") in edges
    assert ("hoardlab_lib.layers", "hoardlab_lib.layers.rules") in edges
    assert layers.stale(edges, layers.KNOWN["tools"], layers.TOOLS) == []
    assert layers.KNOWN["tools"] == layers.EMPTY
    assert layers.loops(edges, layers.EMPTY["loops"], layers.TOOLS) == []


def test_a_loop_planted_in_a_copy_of_tools_fails(tmp_path):
    tools = os.path.join(str(tmp_path), "tools")
    shutil.copytree(os.path.join(REPO, "tools"), tools,
                    ignore=shutil.ignore_patterns("__pycache__"))
    known = layers.KNOWN["tools"]
    assert not layers.check(layers.import_graph(tools), known, layers.TOOLS)[0]
    # the layer check's bottom module imports its face, inside a function
    path = os.path.join(tools, "hoardlab_lib", "layers", "order.py")
    with open(path) as f:
        line = len(f.read().splitlines()) + 4
    with open(path, "a") as f:
        f.write("\n\ndef planted():\n    from . import report\n    return report\n")
    failed, out = layers.check(layers.import_graph(tools), known, layers.TOOLS)
    assert failed, out
    loop = out.split("LOOP: ", 1)[1]
    assert loop.startswith("hoardlab_lib.layers -> "), out
    assert "hoardlab_lib.layers.order -> hoardlab_lib.layers (line %d: " % line in loop
    assert loop.split("\n")[0].endswith(" -> hoardlab_lib.layers")
    assert "from . import report (in a function))" in loop


# --- faces: each folder of src/core read through F/F.h (issue 64; layers/faces.py) ------------

FACES_TWO = ("base", "heap")


def face_tree(root):
    """A src/ of two folders, each read through its face, and a strategy: no violation."""
    src = os.path.join(root, "src")
    write(src, "core/base/base.h", '#include "lock.h"\nvoid hl_base_go(void);\n'
          "extern int hl_base_count;\n")
    write(src, "core/base/lock.h", "static inline int hl_lock_try(void) { return 1; }\n"
          "extern void (*hl_lock_hook)(int);\n")
    write(src, "core/base/base.c", '#include "base.h"\nint hl_base_count = 0;\n'
          "void (*hl_lock_hook)(int);\n"
          "void hl_base_go(void)\n{\n    hl_base_count++;\n}\n")
    write(src, "core/heap/heap.h", '#include "base.h"\n#include "inner.h"\n'
          "struct hl_heap *hl_heap_new(unsigned index);\n"
          "HL_DECLARE_PAIR(hl_heap_m, hl_heap_f)\n"
          "int hl_heap_made(void);\n")
    write(src, "core/heap/inner.h", "struct hl_heap { int n; };\n"
          "static inline int hl_heap_n(const struct hl_heap *h) { return h->n; }\n"
          "int hl_heap_n_of(void);   /* a face may be its folder's inner headers */\n")
    write(src, "core/heap/heap.c", '#include "heap.h"\n#include "inner.h"   /* its folder: any */\n'
          "struct hl_heap *hl_heap_new(unsigned index)\n{\n    return 0;\n}\n"
          "int hl_heap_n_of(void) { return 0; }\n"
          "MAKE_COUNTER(hl_heap_made)\n")
    write(src, "strategies/s.c", '#include "heap.h"\n#include "base.h"\nint x;\n')
    return src


def test_declarations_are_read_from_the_text():
    assert layers.faces.declared("void *hl_a(size_t n)") == ["hl_a"]
    assert layers.faces.declared("extern struct hl_heap *hl_b[4]") == ["hl_b"]
    assert layers.faces.declared("extern void *(*hl_c)(size_t size)") == ["hl_c"]
    assert layers.faces.declared("extern int hl_d, hl_e") == ["hl_d", "hl_e"]
    assert layers.faces.declared("static const int hl_f = 3") == ["hl_f"]
    assert layers.faces.declared("typedef void (*hl_fn)(int)") == []
    assert layers.faces.declared("struct hl_g") == []
    assert layers.faces.declared("struct hl_g { int a; } HL_CACHE_ALIGNED") == []
    assert layers.faces.declared("struct hl_g { int a; } hl_g_one") == ["hl_g_one"]
    kinds = [(k, layers.faces.declared(h)) for _, k, h in layers.faces.statements(
        "#include \"x.h\"\n#define M(a) \\\n  (a)\n"
        "__attribute__((noreturn)) void hl_die(const char *why);\n"
        "struct hl_s { int a; };\n"
        "struct hl_s *hl_make(void)\n{\n    return 0;\n}\n"
        "HL_DECLARE_PAIR(hl_m, hl_f)\n"
        "extern HL_TLS int hl_t;\n")]
    assert kinds == [("decl", ["hl_die"]), ("decl", []), ("body", ["hl_make"]),
                     ("macro", []), ("decl", ["hl_t"])]


def test_a_tree_read_through_its_faces_passes(tmp_path):
    src = face_tree(str(tmp_path))
    assert layers.check_faces(src, folders=FACES_TWO) == []
    failed, text = layers.faces_report(src, folders=FACES_TWO)
    assert not failed and text.startswith("faces: 2 folders, 2 with a face, 0 violations"), text


def test_an_inner_header_included_from_another_folder_fails(tmp_path):
    src = face_tree(str(tmp_path))
    write(src, "strategies/t.c", '#include "heap.h"\n\n#include "inner.h"\n')     # line 3
    write(src, "core/heap/heap2.c", '#include "lock.h"\n')         # base's inner, from heap/
    found = layers.check_faces(src, folders=FACES_TWO)
    assert [(v.folder, v.kind, v.path, v.line) for v in found] == [
        ("base", "inner include", "src/core/heap/heap2.c", 1),
        ("heap", "inner include", "src/strategies/t.c", 3)], found
    failed, text = layers.faces_report(src, folders=FACES_TWO)
    assert failed
    assert '  src/strategies/t.c:3: strategies includes "inner.h", inside heap/: include ' \
        "heap/heap.h" in text.splitlines(), text
    assert "  heap/        1 inner include" in text.splitlines(), text


def test_a_folder_without_its_face_fails(tmp_path):
    src = face_tree(str(tmp_path))
    os.remove(os.path.join(src, "core", "base", "base.h"))
    write(src, "core/base/hl.h", "void hl_base_go(void);\n")
    found = layers.check_faces(src, folders=FACES_TWO)
    assert [(v.folder, v.kind, v.path) for v in found] == [
        ("base", "no face", "src/core/base/")], found


def test_a_face_declaring_another_folders_function_fails(tmp_path):
    src = face_tree(str(tmp_path))
    # heap's face declares base's function; its inner header, a variable defined nowhere
    with open(os.path.join(src, "core", "heap", "heap.h"), "a") as f:
        f.write("\nvoid hl_base_go(void);\n")                            # line 7
    with open(os.path.join(src, "core", "heap", "inner.h"), "a") as f:
        f.write("extern int hl_heap_lost;\n")                            # line 4
    found = layers.check_faces(src, folders=FACES_TWO)
    assert [(v.folder, v.kind, v.path, v.line) for v in found] == [
        ("heap", "foreign declaration", "src/core/heap/heap.h", 7),
        ("heap", "foreign declaration", "src/core/heap/inner.h", 4)], found
    assert found[0].text == "heap's face declares hl_base_go, defined in base/"
    assert found[1].text == "heap's face declares hl_heap_lost, defined in no .c of src/core"
    # an inner header no face includes is not the interface: it may declare what it likes
    write(src, "core/heap/private.h", "void hl_base_go(void);\n")
    assert len(layers.check_faces(src, folders=FACES_TWO)) == 2


def test_the_faces_of_the_tree_are_read_and_gated():
    """`--faces` reports each folder's count, and every folder reads through its face: no
    violation in the tree, and `--strict` runs the rule too."""
    failed, text = layers.faces_report(os.path.join(REPO, "src"))
    lines = text.splitlines()
    assert lines[0].startswith("faces: %d folders, " % len(layers.faces.FOLDERS)), text
    assert [ln.split()[0] for ln in lines[1:1 + len(layers.faces.FOLDERS)]] == [
        f + "/" for f in layers.faces.FOLDERS]
    for ln in lines[1 + len(layers.faces.FOLDERS):]:
        path = ln.split(":")[0].strip()
        assert os.path.exists(os.path.join(REPO, path)), ln
    assert failed == (len(lines) > 1 + len(layers.faces.FOLDERS))
    p = subprocess.run([sys.executable, TOOL, "layers", "--faces"], capture_output=True,
                       text=True, timeout=120)
    assert p.stdout == text + "\n" and p.returncode == (1 if failed else 0), p.stderr
    assert not failed, text
    strict = subprocess.run([sys.executable, TOOL, "layers", "--no-build", "--strict"],
                            capture_output=True, text=True,
                            env=dict(os.environ, HOARDLAB_BUILD_DIR=BDIR), timeout=120)
    assert "faces: %d folders, %d with a face, 0 violations" % (
        len(layers.faces.FOLDERS), len(layers.faces.FOLDERS)) in strict.stdout, strict.stdout

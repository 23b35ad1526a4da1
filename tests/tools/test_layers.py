"""`hoardlab layers`: libhoardlab's files use only files of their own layer or below, and no
files use each other in a loop, except the loops issue 26 lists (KNOWN), which can only shrink.

The rules on hand-made graphs and header texts (no build needed), then on the real build's
object files and the sources' headers (HOARDLAB_BUILD_DIR, else build/; skipped when the core
is not built), and on a copy of the sources with a planted loop."""
import glob
import os
import subprocess
import sys

import shutil

import pytest

from conftest import REPO
from hoardlab_lib import layers

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
TOOL = os.path.join(REPO, "tools", "hoardlab")
built = pytest.mark.skipif(
    not glob.glob(os.path.join(BDIR, "src", "libhoardlab_core.a.p", "*.o")),
    reason="libhoardlab_core not built in %s (run tools/hoardlab build)" % BDIR)


def test_upward_edges_are_found():
    edges = {("heap", "os"): ["hl_os_map"],                       # parts -> base: down
             ("os", "heap"): ["hl_heap_free"],                    # base -> parts: up
             ("strategies/hoard", "heap"): ["hl_heap_malloc"],    # strategies -> parts
             ("heap", "census"): ["hl_census_note"],              # parts -> instruments: up
             ("init", "strategies/hoard"): ["hl_strategy_hoard"]}  # front -> strategies
    assert [(u, nu, d, nd) for u, nu, d, nd, _ in layers.upward(edges)] == [
        ("heap", "parts", "census", "instruments"), ("os", "base", "heap", "parts")]


def test_registry_may_name_the_strategies_rows():
    edges = {("registry", "strategies/hoard"): ["hl_strategy_hoard"],
             ("registry", "strategies/serial"): ["hl_strategy_serial"]}
    assert layers.upward(edges) == []
    # the exception is the registry's alone, and only towards the strategies
    assert layers.upward({("config", "strategies/hoard"): ["x"]})
    assert layers.upward({("registry", "census"): ["x"]})


def test_a_file_in_no_layer_is_reported():
    bad = layers.upward({("newfile", "os"): ["hl_os_map"]})
    assert [(u, nu, d, nd) for u, nu, d, nd, _ in bad] == [("newfile", None, "os", "base")]


@built
def test_the_build_points_one_way():
    edges = layers.graph(BDIR)
    assert edges, "no use edges read from %s" % BDIR
    assert layers.upward(edges, layers.KNOWN["upward"]) == []


@built
def test_the_command():
    p = subprocess.run([sys.executable, TOOL, "layers", "--no-build"], capture_output=True,
                       text=True, env=dict(os.environ, HOARDLAB_BUILD_DIR=BDIR), timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 pointing upward" in p.stdout


# --- loops, and the code in headers ---------------------------------------------------------

def test_a_loop_inside_a_layer_fails_and_is_printed_in_order():
    edges = {("superblock", "heap"): ["hl_heap_x"], ("heap", "tlab"): ["hl_tlab_y"],
             ("tlab", "superblock"): ["hl_sb_z"], ("heap", "os"): ["hl_os_map"]}
    assert layers.upward(edges) == []                     # all in parts or below: no upward edge
    assert layers.loops(edges) == [(["heap", "tlab", "superblock", "heap"], None)]
    failed, text = layers.check(edges, layers.NOTHING_KNOWN)
    assert failed
    assert "LOOP: heap -> tlab -> superblock -> heap" in text


def test_a_loop_across_layers_and_two_file_loops():
    edges = {("config", "os"): ["hl_nprocs"], ("os", "config"): ["hl_cfg"],
             ("strategies/hoard", "census"): ["x"], ("census", "strategies/hoard"): ["y"]}
    assert [w for w, _ in layers.loops(edges)] == [["census", "strategies/hoard", "census"],
                                                    ["config", "os", "config"]]


def test_the_registry_rows_close_no_loop():
    # every strategy reads the config, the config reads the registry's names, and the registry
    # names the rows: data, not a loop
    edges = {("registry", "strategies/hoard"): ["hl_strategy_hoard"],
             ("strategies/hoard", "config"): ["hl_cfg"], ("config", "registry"): ["hl_strategies"]}
    assert layers.loops(edges) == []
    assert not layers.check(edges, layers.NOTHING_KNOWN)[0]


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


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def test_headers_inline_code_and_macros_are_read(tmp_path):
    src = str(tmp_path)
    # b.h's inline function calls a.c's function: b -> a; a.c uses b.h's macro: a -> b
    write(src, "core/a.c", '#include "b.h"\nint hl_a_fn(void) { return B_TWICE(1); }\n')
    write(src, "core/b.h", "/* b.h: the B_TWICE macro uses hl_a_fn() in a comment only */\n"
          "#define B_TWICE(x) ((x) * 2)\n"
          "struct hl_b { int n; };\n"
          "int hl_b_decl(struct hl_b *b);   /* a prototype: no use */\n"
          "static inline int hl_b_get(void) { return hl_a_fn() + hl_c_var; }\n")
    write(src, "core/c.c", '#include "b.h"\nint hl_c_var;\nconst char *s = "hl_b_get";\n')
    sym_defs = {"hl_a_fn": "a", "hl_c_var": "c"}
    edges = layers.source_graph(src, sym_defs, ["a", "b", "c"])
    assert edges == {("b", "a"): ["b.h: hl_a_fn"], ("b", "c"): ["b.h: hl_c_var"],
                     ("a", "b"): ["B_TWICE"]}             # not c -> b: a string is no use
    assert [w for w, _ in layers.loops(edges)] == [["a", "b", "a"]]


def test_a_header_section_belongs_to_the_file_it_names(tmp_path):
    src = str(tmp_path)
    write(src, "core/hl.h", "#define HL_ONE 1\n"
          "/* ---- os.c: the OS -------- */\n"
          "static inline int hl_os_x(void) { return hl_cfg_y(); }\n"
          "/* ---- config.c, registry.c: keys -------- */\n"
          "#define HL_KEY(k) hl_nprocs_z(k)\n")
    write(src, "core/config.c", "int f(void) { return hl_os_x() + HL_ONE; }\n")
    sym_defs = {"hl_cfg_y": "config", "hl_nprocs_z": "os"}
    edges = layers.source_graph(src, sym_defs, ["config", "os"])
    assert edges == {("os", "config"): ["hl.h: hl_cfg_y"], ("config", "os"): ["hl.h: hl_nprocs_z",
                                                                               "hl_os_x"],
                     ("config", "hl"): ["HL_ONE"]}


@built
def test_known_is_exactly_what_remains():
    """Issue 26's allow-list: every loop and upward edge of the build is listed, and every
    listed one still exists, so the list can only shrink."""
    edges = layers.graph(BDIR)
    assert layers.stale(edges) == []
    assert [sorted(set(w)) for w, why in layers.loops(edges, layers.KNOWN["loops"])] == \
        sorted(sorted(c) for c in layers.KNOWN["loops"])
    assert all(why for _, why in layers.loops(edges, layers.KNOWN["loops"]))
    assert layers.upward(edges, layers.KNOWN["upward"]) == []
    assert all(issue == 26 and why for issue, why in
               list(layers.KNOWN["loops"].values()) + list(layers.KNOWN["upward"].values()))
    # the header reading sees what nm alone does not: tlab.h's fast paths count with stats.h
    assert any(s.startswith("tlab.h: ") for s in edges[("tlab", "stats")])
    # lock.h (base) counts nothing, and thread.c reaches the statistics only through hooks
    assert ("lock", "stats") not in edges and ("thread", "stats") not in edges
    # config.c and os.c no longer use each other
    assert ("os", "config") not in edges


@built
def test_a_loop_planted_in_a_copy_of_the_sources_fails(tmp_path):
    src = os.path.join(str(tmp_path), "src")
    shutil.copytree(os.path.join(REPO, "src"), src)
    assert not layers.report(BDIR, src)[0]
    # superblock.h (used by heap) gains an inline function that calls into heap.c
    with open(os.path.join(src, "core", "superblock.h")) as f:
        text = f.read()
    assert text.rstrip().endswith("#endif")
    text = text.rstrip()[:-len("#endif")] + (
        "static inline void hl_sb_planted(void) { hl_heap_init(); }\n#endif\n")
    with open(os.path.join(src, "core", "superblock.h"), "w") as f:
        f.write(text)
    failed, out = layers.report(BDIR, src)
    assert failed, out
    assert "LOOP: " in out and "superblock" in out.split("LOOP: ", 1)[1].splitlines()[0]
    assert "superblock -> heap (superblock.h: hl_heap_init)" in out


@built
def test_strict_passes_now_that_no_loop_is_left():
    """Issue 26's target: no loop and no upward edge, with nothing allowed."""
    p = subprocess.run([sys.executable, TOOL, "layers", "--no-build", "--strict"],
                       capture_output=True, text=True,
                       env=dict(os.environ, HOARDLAB_BUILD_DIR=BDIR), timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 pointing upward, 0 loops" in p.stdout

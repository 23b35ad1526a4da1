"""`hoardlab layers`: libhoardlab's files use only files of their own layer or below.

The rule on a hand-made graph (no build needed), then on the real build's object files
(HOARDLAB_BUILD_DIR, else build/; skipped when the core is not built)."""
import glob
import os
import subprocess
import sys

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
    assert layers.upward(edges) == []


@built
def test_the_command():
    p = subprocess.run([sys.executable, TOOL, "layers", "--no-build"], capture_output=True,
                       text=True, env=dict(os.environ, HOARDLAB_BUILD_DIR=BDIR), timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 pointing upward" in p.stdout

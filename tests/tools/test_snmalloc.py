"""snmalloc: built by tools/install-deps from the tree the crate snmalloc-sys vendors, found in
its folder (allocators.SNMALLOC_DIRS), one line saying how to get it when missing, preloaded by
the runs of every sweep that names it and measured by `hoardlab cost` through its build for
callgrind (allocators.CALLGRIND_LIBRARY). An LD_PRELOAD that ld.so cannot load is ignored, so the
runs check that snmalloc's library was really initialised."""
import glob
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import BDIR, REPO, needs_built
from hoardlab_lib import allocators, common, cost, sweeps as sweep

HLBENCH = os.path.join(BDIR, "harness", "hlbench")
needs_build = needs_built("harness/hlbench", "harness/hlcost", "src/hlconfig",
                          "src/libhoardlab.so")


def snmalloc():
    try:
        return allocators.production_library("snmalloc")
    except common.ToolError as e:
        pytest.fail("%s (tools/install-deps builds it)" % e)


def test_found_where_install_deps_puts_the_pinned_version():
    lib = snmalloc()
    assert os.path.dirname(lib) in allocators.SNMALLOC_DIRS
    assert os.path.basename(lib) == "libsnmallocshim.so"
    with open(os.path.join(REPO, "tools", "install-deps")) as f:
        pinned = re.search(r"^SNMALLOC_VERSION=(\S+)$", f.read(), re.M).group(1)
    assert pinned == allocators.SNMALLOC_VERSION
    assert allocators.allocator_kind("snmalloc") == "production"


def test_missing_is_one_line_naming_install_deps(monkeypatch, tmp_path):
    monkeypatch.setitem(allocators.SOURCE_BUILT, "snmalloc",
                        ("snmalloc-sys (crates.io)", "0.7.6", [str(tmp_path)]))
    with pytest.raises(common.ToolError) as e:
        allocators.production_library("snmalloc")
    msg = str(e.value)
    assert "\n" not in msg and msg.endswith("tools/install-deps") and "snmalloc-sys" in msg


@needs_build
def test_hlbench_and_python_under_snmalloc_run_snmalloc(tmp_path):
    """The environment sweeps use; ld.so's log names the library it initialised."""
    lib = snmalloc()
    env = allocators.allocator_env("snmalloc", {}, BDIR)
    assert env["LD_PRELOAD"] == lib
    dbg = dict(env, LD_DEBUG="libs", LD_DEBUG_OUTPUT=str(tmp_path / "ld"))
    p = subprocess.run([HLBENCH, "xfree", "--threads", "2", "--scale", "0.01"], env=dbg,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout.splitlines()[0])
    assert rec["workload"] == "xfree" and rec["ops"] > 0 and rec["hoardlab"] is None
    logs = glob.glob(str(tmp_path / "ld.*"))
    assert len(logs) == 1 and "calling init: %s" % lib in open(logs[0]).read()
    # malloc_good_size: snmalloc's, not glibc's; found through the global scope (dlsym)
    probe = "import ctypes; print(ctypes.CDLL(None).malloc_good_size(33))"
    v = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                       text=True, timeout=60)
    assert v.returncode == 0 and int(v.stdout) >= 33, v.stderr


@needs_build
def test_cost_counts_snmalloc_through_its_callgrind_build(tmp_path):
    """Under valgrind the production build cannot start (its pagemap is past valgrind's
    mapping limit): cost preloads the 38-bit build and the counted functions are snmalloc's."""
    assert "snmalloc" in cost.allocators(BDIR)[0]
    assert os.path.basename(allocators.callgrind_library("snmalloc")) == \
        "libsnmallocshim-callgrind.so"
    r, = cost.run(BDIR, ["snmalloc"], cases=[("8", "local")])
    assert 0 < r["pair"] < 200
    lib = allocators.callgrind_library("snmalloc")
    funcs, _ = cost.callgrind_functions([os.path.join(BDIR, "harness", "hlcost"), "8", "100",
                                         "local"], dict(os.environ, LD_PRELOAD=lib),
                                        str(tmp_path), direct=True)
    assert funcs[("???", "malloc", os.path.basename(lib))] > 0, sorted(funcs)[:20]


def test_the_hand_off_and_production_sweeps_list_it():
    for name in ("production", "handoff", "remote-free"):
        sw = sweep.read_sweep(os.path.join(REPO, "configs", "sweeps", name + ".ini"), 2,
                        ["serial", "concurrent", "private", "ownership", "hoard", "hoard2026",
                         "hoard202607", "lockfree"])
        assert ("snmalloc", "snmalloc", {}) in sw.allocators, name

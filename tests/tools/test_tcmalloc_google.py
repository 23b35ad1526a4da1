"""tcmalloc-google: Google's TCMalloc, built by tools/install-deps from the sources the crate
libtcmalloc-sys vendors, with upstream's libc override (the crate's build has no malloc), found
in its folder (allocators.TCMALLOC_GOOGLE_DIRS) and preloaded by the sweeps that name it. It must
load (a program's output unchanged), answer malloc and free (its own statistics count them, its
pagemap owns the blocks), and be the per-CPU build: its extension API
(MallocExtension_Internal_GetNumericProperty, a C symbol of tcmalloc.cc) reports
tcmalloc.per_cpu_caches_active = 1 in the environment the runs get (allocators.allocator_env:
GLIBC_TUNABLES=glibc.pthread.rseq=0, since glibc 2.35+ registers rseq itself and TCMalloc's own
registration then fails). Skipped only when the library is not installed."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BDIR, REPO, needs_built
from hoardlab_lib import allocators, common, cost, sweeps as sweep

NAME = "tcmalloc-google"
HLBENCH = os.path.join(BDIR, "harness", "hlbench")
needs_build = needs_built("harness/hlbench", "src/hlconfig", "src/libhoardlab.so")

# Run under the preload: allocates through the C library's malloc (whichever the global scope
# resolves), then asks TCMalloc's extension API what it saw. One JSON line.
PROBE = r"""
import ctypes, json, sys
c = ctypes.CDLL(None)
c.malloc.restype, c.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
c.free.argtypes = [ctypes.c_void_p]
prop = c.MallocExtension_Internal_GetNumericProperty
prop.restype = ctypes.c_bool
prop.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
own = c.MallocExtension_Internal_GetOwnership
own.restype, own.argtypes = ctypes.c_int, [ctypes.c_void_p]
def get(name):
    v = ctypes.c_size_t()
    if not prop(name.encode(), len(name), ctypes.byref(v)):
        sys.exit("no property " + name)
    return v.value
before = get("generic.current_allocated_bytes")
blocks = [c.malloc(1000) for _ in range(1000)]
held = get("generic.current_allocated_bytes")
owned = sum(own(p) == 1 for p in blocks)
for p in blocks:
    c.free(p)
after = get("generic.current_allocated_bytes")
lib = ctypes.CDLL(sys.argv[1])
print(json.dumps({"before": before, "held": held, "after": after, "owned": owned,
                  "null": sum(p is None for p in blocks),
                  "same_malloc": ctypes.cast(c.malloc, ctypes.c_void_p).value ==
                                 ctypes.cast(lib.malloc, ctypes.c_void_p).value,
                  "per_cpu": get("tcmalloc.per_cpu_caches_active")}))
"""


def library():
    try:
        return allocators.production_library(NAME)
    except common.ToolError as e:
        pytest.skip("%s (tools/install-deps builds it)" % e)


def probe(env, lib):
    p = subprocess.run([sys.executable, "-c", PROBE, lib], env=env, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_registered_with_the_version_install_deps_pins():
    assert allocators.allocator_kind(NAME) == "production"
    assert allocators.PRODUCTION[NAME] == "libtcmalloc-google.so"
    assert allocators.PRODUCTION["tcmalloc"] == "libtcmalloc_minimal.so.4"     # gperftools' stays
    with open(os.path.join(REPO, "tools", "install-deps")) as f:
        pinned = re.search(r"^TCMALLOC_GOOGLE_VERSION=(\S+)$", f.read(), re.M).group(1)
    assert pinned == allocators.TCMALLOC_GOOGLE_VERSION
    assert allocators.SOURCE_BUILT[NAME][2] == allocators.TCMALLOC_GOOGLE_DIRS


def test_missing_is_one_line_naming_install_deps(monkeypatch, tmp_path):
    monkeypatch.setitem(allocators.SOURCE_BUILT, NAME,
                        ("libtcmalloc-sys (crates.io)", "0.1.14", [str(tmp_path)]))
    with pytest.raises(common.ToolError) as e:
        allocators.production_library(NAME)
    msg = str(e.value)
    assert "\n" not in msg and msg.endswith("tools/install-deps") and "libtcmalloc-sys" in msg


def test_runs_turn_glibc_rseq_off_and_keep_other_tunables():
    env = allocators.allocator_env("glibc", {}, BDIR, environ={"GLIBC_TUNABLES": "glibc.x=1"})
    assert env["GLIBC_TUNABLES"] == "glibc.x=1"
    try:
        env = allocators.allocator_env(NAME, {}, BDIR, environ={"GLIBC_TUNABLES": "glibc.x=1"})
    except common.ToolError:
        pytest.skip("%s not installed" % NAME)
    assert env["GLIBC_TUNABLES"] == "glibc.x=1:glibc.pthread.rseq=0"


def test_loads_and_leaves_a_programs_output_unchanged():
    lib = library()
    env = allocators.allocator_env(NAME, {}, BDIR)
    assert env["LD_PRELOAD"] == lib
    prog = "import json; print(json.dumps(sorted({str(i): [i] * (i % 7) for i in range(3000)})))"
    plain = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                           timeout=60, env=allocators.allocator_env("glibc", {}, BDIR))
    under = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                           timeout=60, env=env)
    assert under.returncode == 0 and under.stderr == "", under.stderr
    assert under.stdout == plain.stdout and plain.stdout.strip()


def test_answers_malloc_and_free_and_is_the_per_cpu_build():
    """The global scope's malloc is the library's; its statistics count the 1000 blocks and
    drop them after the frees; its pagemap owns them; per-CPU caches are on."""
    lib = library()
    r = probe(allocators.allocator_env(NAME, {}, BDIR), lib)
    assert r["same_malloc"] and r["null"] == 0 and r["owned"] == 1000, r
    assert r["held"] - r["before"] >= 1000 * 1000 and r["after"] < r["held"], r
    # 0 here: rseq unavailable to TCMalloc (a kernel before 4.18, or someone registered it
    # first): the peer would not be the per-CPU allocator it stands for, so this fails.
    assert r["per_cpu"] == 1, r


def test_without_the_tunable_glibcs_rseq_keeps_per_cpu_off():
    """Why allocator_env sets GLIBC_TUNABLES: under glibc 2.35 and later, which registers rseq
    for every thread, TCMalloc's registration fails and it runs without per-CPU caches."""
    lib = library()
    major, minor = map(int, os.confstr("CS_GNU_LIBC_VERSION").split()[1].split(".")[:2])
    if (major, minor) < (2, 35):
        pytest.skip("glibc %d.%d does not register rseq" % (major, minor))
    env = allocators.allocator_env(NAME, {}, BDIR)
    del env["GLIBC_TUNABLES"]
    assert probe(env, lib)["per_cpu"] == 0


@needs_build
def test_hlbench_under_it_runs_it(tmp_path):
    """The environment sweeps use; ld.so's log names the library it initialised."""
    lib = library()
    env = allocators.allocator_env(NAME, {}, BDIR)
    dbg = dict(env, LD_DEBUG="libs", LD_DEBUG_OUTPUT=str(tmp_path / "ld"))
    p = subprocess.run([HLBENCH, "xfree", "--threads", "2", "--scale", "0.01"], env=dbg,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout.splitlines()[0])
    assert rec["workload"] == "xfree" and rec["ops"] > 0 and rec["hoardlab"] is None
    logs = glob.glob(str(tmp_path / "ld.*"))
    assert len(logs) == 1 and "calling init: %s" % lib in open(logs[0]).read()


def test_the_production_fronts_handoff_and_purge_sweeps_list_it():
    for name in ("production", "fronts", "handoff", "purge"):
        sw = sweep.read_sweep(os.path.join(REPO, "configs", "sweeps", name + ".ini"), 2,
                        ["serial", "concurrent", "private", "ownership", "hoard", "hoard2026",
                         "hoard202607", "lockfree"])
        assert (NAME, NAME, {}) in sw.allocators, name
        assert ("tcmalloc", "tcmalloc", {}) in sw.allocators, name


@needs_built("harness/hlcost", "src/hlconfig")
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_cost_counts_it_through_its_fallback_without_rseq():
    """valgrind has no rseq: `cost` counts TCMalloc's per-thread fallback, whose every malloc
    takes slow_alloc_small (docs/tool.md says so beside the numbers)."""
    library()
    assert NAME in cost.allocators(BDIR)[0]
    r, = cost.run(BDIR, [NAME], cases=[("64", "local")])
    assert r["pair"] > 0
    assert any("slow_alloc_small" in k for k in r["functions"]), sorted(r["functions"])[:20]

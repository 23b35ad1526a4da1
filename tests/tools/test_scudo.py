"""scudo: LLVM's hardened allocator (issue 66), a production peer like the others: Debian's
libclang-rt-14-dev ships its standalone build in compiler-rt's folder, where
allocators.production_library finds it; one line saying how to get it when missing; preloaded by
the runs of every sweep that names it. An LD_PRELOAD that ld.so cannot load is ignored, so
the runs check that Scudo's library was really initialised. `hoardlab cost` cannot count it
(under valgrind Scudo's primary cannot reserve its regions: docs/hardening.md) and says so."""
import csv
import fnmatch
import glob
import json
import os
import subprocess
import sys

import pytest

from conftest import BDIR, REPO, needs_built
from hoardlab_lib import allocators, cli, common, cost

HLBENCH = os.path.join(BDIR, "harness", "hlbench")
needs_build = needs_built("harness/hlbench", "src/hlconfig", "src/libhoardlab.so")


def scudo():
    try:
        return allocators.production_library("scudo")
    except common.ToolError as e:
        pytest.fail("%s (tools/install-deps installs it)" % e)


def test_found_in_the_debian_package_folder():
    lib = scudo()
    assert os.path.basename(lib) == "libclang_rt.scudo_standalone-x86_64.so"
    assert fnmatch.fnmatch(os.path.dirname(lib) + "/", allocators.DEBIAN_DIRS["scudo"])
    assert allocators.allocator_kind("scudo") == "production"
    with open(os.path.join(REPO, "tools", "packages", "hardening.txt")) as f:
        listed = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    assert allocators.DEBIAN_PACKAGES["scudo"] in listed


def test_missing_is_one_line_naming_the_package(monkeypatch, tmp_path):
    monkeypatch.setitem(allocators.DEBIAN_DIRS, "scudo", str(tmp_path) + "/")
    with pytest.raises(common.ToolError) as e:
        allocators.production_library("scudo")
    msg = str(e.value)
    assert "\n" not in msg and "libclang-rt-14-dev" in msg and "tools/install-deps" in msg


@needs_build
def test_hlbench_and_python_under_scudo_run_scudo(tmp_path):
    """The environment sweeps use; ld.so's log names the library it initialised, and a symbol
    only Scudo defines is found through the global scope."""
    lib = scudo()
    env = allocators.allocator_env("scudo", {}, BDIR)
    assert env["LD_PRELOAD"] == lib
    dbg = dict(env, LD_DEBUG="libs", LD_DEBUG_OUTPUT=str(tmp_path / "ld"))
    p = subprocess.run([HLBENCH, "xfree", "--threads", "2", "--scale", "0.01"], env=dbg,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout.splitlines()[0])
    assert rec["workload"] == "xfree" and rec["ops"] > 0 and rec["hoardlab"] is None
    logs = glob.glob(str(tmp_path / "ld.*"))
    assert len(logs) == 1 and "calling init: %s" % lib in open(logs[0]).read()
    probe = "import ctypes; print(hasattr(ctypes.CDLL(None), '__scudo_print_stats'))"
    v = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                       text=True, timeout=60)
    assert v.returncode == 0 and v.stdout.strip() == "True", v.stderr


@needs_build
def test_a_tiny_sweep_runs_it(tmp_path):
    scudo()
    ini = tmp_path / "scudo.ini"
    ini.write_text("[sweep]\nname = scudo-tiny\nscale = 0.01\nrepetitions = 1\nthreads = 1, 2\n"
                   "quiet_wait = 0\nredo = 0\n[allocators]\nglibc = glibc\nscudo = scudo\n"
                   "[workload threadtest]\n")
    rc = cli.main(["sweep", str(ini), "--no-build", "--build-dir", BDIR,
                   "--out", str(tmp_path / "o")])
    assert rc == 0
    with open(tmp_path / "o" / "runs.csv") as f:
        rows = list(csv.DictReader(f))
    mine = [r for r in rows if r["allocator"] == "scudo"]
    assert len(mine) == 2 and all(r["status"] == "ok" for r in mine), mine
    assert all(float(r["throughput"]) > 0 for r in mine)


@needs_build
def test_cost_leaves_it_out_saying_why(capsys):
    """By default and in a sweep's `cost = yes` Scudo is left out with one line; named alone,
    there is nothing to count, a one-line error. Scudo really stops under valgrind: when
    that changes, NOT_COUNTED should lose it and this fails."""
    assert "scudo" not in cost.allocators(BDIR)[0]
    names, _ = cost.allocators(BDIR, ["glibc", "scudo"])
    assert names == ["glibc"]
    err = capsys.readouterr().err
    assert "cost: scudo not counted: " in err and "valgrind" in err
    with pytest.raises(common.ToolError):
        cost.allocators(BDIR, ["scudo"])
    p = subprocess.run(["valgrind", "--tool=none", "-q", HLBENCH, "threadtest", "--scale",
                        "0.001"], env=dict(os.environ, LD_PRELOAD=scudo()),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "Scudo ERROR: internal map or unmap failure" in p.stderr

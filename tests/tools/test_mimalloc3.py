"""mimalloc3: mimalloc 3.x from the PyPI wheel cmeel-mimalloc (tools/install-deps installs it),
found from the installed package's files. The runs under it must really run mimalloc 3: an
LD_PRELOAD that ld.so cannot load is ignored with a message and the program runs under
glibc, and Debian's mimalloc is 2.0, so both kinds of silent fallback are checked for."""
import glob
import importlib.metadata as md
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import BDIR, REPO, needs_built
from hoardlab_lib import allocators, cli, common, cost
from hoardlab_lib.runkit import runner

HLBENCH = os.path.join(BDIR, "harness", "hlbench")
needs_build = needs_built("harness/hlbench", "src/hlconfig", "src/libhoardlab.so")


def mimalloc3():
    try:
        return allocators.production_library("mimalloc3")
    except common.ToolError as e:
        pytest.fail("%s (tools/install-deps installs it)" % e)


def expected_version():
    """mi_version() of the installed wheel: 3.4.3 -> 30403."""
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", md.version("cmeel-mimalloc"))
    return int(m.group(1)) * 10000 + int(m.group(2)) * 100 + int(m.group(3))


def test_found_in_the_installed_package():
    lib = mimalloc3()
    assert os.path.basename(lib) == "libmimalloc.so.3" and os.path.isabs(lib)
    files = [str(f.locate()) for f in md.distribution("cmeel-mimalloc").files]
    assert lib in [os.path.abspath(f) for f in files]
    assert "mimalloc3" in allocators.PRODUCTION and allocators.allocator_kind("mimalloc3") == "production"


def test_missing_is_one_line_saying_how_to_install(monkeypatch):
    monkeypatch.setattr(allocators, "pypi_library", lambda dist, fname: None)
    with pytest.raises(common.ToolError) as e:
        allocators.production_library("mimalloc3")
    msg = str(e.value)
    assert "\n" not in msg and "cmeel-mimalloc" in msg and "tools/install-deps" in msg
    assert "pip install cmeel-mimalloc" in msg


@needs_build
def test_a_sweep_naming_it_stops_at_start_up_when_missing(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(allocators, "pypi_library", lambda dist, fname: None)
    ini = tmp_path / "m3.ini"
    ini.write_text("[sweep]\nscale = 0.01\n[allocators]\nglibc = glibc\nm3 = mimalloc3\n"
                   "[workload threadtest]\n")
    rc = cli.main(["sweep", str(ini), "--no-build", "--build-dir", BDIR,
                   "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len([ln for ln in err if ln.startswith("hoardlab:")]) == 1
    assert "mimalloc3" in err[-1] and "pip install cmeel-mimalloc" in err[-1]
    assert not os.path.exists(tmp_path / "o")


@needs_build
def test_hlbench_under_mimalloc3_runs_mimalloc_3(tmp_path):
    """The very environment sweeps use; ld.so's own log (LD_DEBUG) of the hlbench process
    names the library it initialised, and mi_version() of that library is the wheel's."""
    lib = mimalloc3()
    env = allocators.allocator_env("mimalloc3", {}, BDIR)
    assert env["LD_PRELOAD"] == lib
    env_dbg = dict(env, LD_DEBUG="libs", LD_DEBUG_OUTPUT=str(tmp_path / "ld"))
    p = subprocess.run([HLBENCH, "threadtest", "--threads", "2", "--scale", "0.01"],
                       env=env_dbg, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout.splitlines()[0])
    assert rec["workload"] == "threadtest" and rec["ops"] > 0 and rec["hoardlab"] is None
    logs = glob.glob(str(tmp_path / "ld.*"))
    assert len(logs) == 1
    log = open(logs[0]).read()
    assert "calling init: %s" % lib in log
    assert "libmimalloc.so.2" not in log and runner.PRELOAD_IGNORED not in p.stderr

    probe = "import ctypes; print(ctypes.CDLL(None).mi_version())"   # dlsym(RTLD_DEFAULT)
    v = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                       timeout=60)
    assert v.returncode == 0, v.stderr
    assert int(v.stdout) == expected_version() and 30000 <= int(v.stdout) < 40000


@needs_build
def test_run_command_and_cost_list_it():
    p = subprocess.run([sys.executable, os.path.join(REPO, "tools", "hoardlab"), "run",
                        "--no-build", "threadtest", "-a", "mimalloc3", "--scale", "0.01",
                        "--json"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, HOARDLAB_BUILD_DIR=BDIR))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[0])["hoardlab"] is None
    assert "mimalloc3" in cost.allocators(BDIR)[0]


def test_a_preload_ld_so_ignored_is_not_a_measurement(tmp_path):
    """ld.so runs the program without an LD_PRELOAD it cannot load: not-loaded, not ok."""
    run = {"base": "preload:" + str(tmp_path / "missing.so"), "knobs": {},
           "workload": "threadtest", "threads": 1, "scale": 0.01, "seed": 1}
    res = runner.run_one(run, str(tmp_path), hlbench="/bin/true")
    assert res["status"] == "not-loaded" and res["exit_code"] == 0
    assert "missing.so" in res["error"] and "not loaded" in res["error"]

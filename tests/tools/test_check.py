"""Mistakes caught before the first run (runkit/check.py): a sweep file with each mistake fails in
--dry-run with file:line, section and 'did you mean'; a knob that acts nowhere under its
strategy is refused; a sweep whose runs fail exits non-zero with its report written; one
allocator-with-knobs syntax for run and cost. Needs the build (hlconfig, hlbench)."""
import glob
import os

import pytest

from conftest import REPO
from hoardlab_lib import allocators, cost
from test_e2e import pytestmark, tool  # noqa: F401  (skips without a build)


def dry_run(tmp_path, text, name="s.ini"):
    ini = tmp_path / name
    ini.write_text(text)
    return str(ini), tool("sweep", str(ini), "--dry-run")


@pytest.mark.parametrize("text, line, wants", [
    ("[sweep]\nstrategies = hoard\n[workload threadtst]\n",
     3, ["[workload threadtst]", "unknown workload 'threadtst'", "did you mean 'threadtest'"]),
    ("[sweep]\nstrategies = hoard\n[knobs]\nheap_selct = cpu, hash\n[workload threadtest]\n",
     4, ["[knobs] heap_selct", "unknown knob", "did you mean 'heap_select'"]),
    ("[sweep]\nstrategies = hoard\n[allocators]\nh = hoard:empty_fraction=2\n"
     "[workload threadtest]\n", 4, ["[allocators] h", "empty_fraction", "'2'", "0.99"]),
    ("[sweep]\nstrategies = hoard\n[workload threadtest]\nrouns = 2\n",
     4, ["[workload threadtest] rouns", "did you mean 'rounds'"]),
    ("[sweep]\nstrategies = hoard\n[allocators]\nh = hord\n[workload threadtest]\n",
     4, ["[allocators] h", "'hord'", "did you mean 'hoard'"]),
    ("[sweep]\nstrategies = hoard\n[workload threadtest]\nknobs = census=on, padding=on\n",
     4, ["[workload threadtest] knobs", "'padding'", "no effect", "concurrent"]),
])
def test_each_mistake_fails_the_dry_run_at_its_line(tmp_path, text, line, wants):
    path, p = dry_run(tmp_path, text)
    assert p.returncode == 2, p.stdout
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("hoardlab: %s:%d: " % (path, line)), err
    for w in wants:
        assert w in err, err


def test_no_op_knob_refused_where_it_acts_nowhere(tmp_path):
    """tlab_budget under hoard (tlab off): the issue's 27 % 'effect' of a knob that did
    nothing. With tlab on, or under hoard2026 (tlab on by its defaults), it acts."""
    _, p = dry_run(tmp_path, "[sweep]\nstrategies = hoard\n[knobs]\ntlab_budget = 16K, 256K\n"
                   "[workload threadtest]\n")
    assert p.returncode == 2 and "[knobs] tlab_budget" in p.stderr
    assert "(tlab=off)" in p.stderr and "hoard, hoard2026, hoard202607 if tlab=on" in p.stderr
    _, p = dry_run(tmp_path, "[sweep]\n[allocators]\nh = hoard:tlab=on\nh26 = hoard2026\n"
                   "[knobs]\ntlab_budget = 16K, 256K\n[workload threadtest]\n")
    assert p.returncode == 0, p.stderr
    assert "h[tlab_budget=16K]" in p.stdout and "h26[tlab_budget=256K]" in p.stdout


def test_shipped_sweeps_pass_the_checks():
    for path in sorted(glob.glob(os.path.join(REPO, "configs", "sweeps", "*.ini"))):
        p = tool("sweep", path, "--dry-run")
        assert p.returncode == 0, p.stderr


def test_failed_runs_make_the_sweep_exit_non_zero(tmp_path):
    ini = tmp_path / "fail.ini"
    ini.write_text("[sweep]\nstrategies = hoard\n[workload ok]\nworkload = threadtest\n"
                   "scale = 0.01\n[workload bad]\nworkload = threadtest\nrounds = abc\n")
    out = tmp_path / "o"
    p = tool("sweep", str(ini), "--out", str(out), "-q")
    assert p.returncode == 1, p.stderr
    assert "1 of 2 runs did not succeed" in p.stderr
    assert (out / "report.md").exists() and (out / "runs.csv").exists()


def test_one_allocator_syntax():
    assert allocators.parse_allocator_spec("hoard:heap_select=cpu:tlab=on") == \
        allocators.parse_allocator_spec("hoard, heap_select=cpu, tlab=on") == \
        ("hoard", {"heap_select": "cpu", "tlab": "on"})
    assert cost.parse_variant("hoard:remote_free=list") == ("hoard", {"remote_free": "list"})
    assert allocators.parse_allocator_spec("preload:/x/lib.so") == ("preload:/x/lib.so", {})
    p = tool("run", "threadtest", "-a", "hoard:heap_select=cpu", "--scale", "0.01")
    assert p.returncode == 0 and "heap_select=cpu" in p.stdout, p.stderr
    p = tool("run", "threadtest", "-a", "serial:tlab=on", "--scale", "0.01")
    assert p.returncode == 2 and "no effect under strategy 'serial'" in p.stderr

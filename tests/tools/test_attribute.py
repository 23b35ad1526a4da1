"""`hoardlab attribute` (tools/hoardlab_lib/attribute.py): the plan of both paths, the
contributions and the interaction verdict on synthetic results with a known answer, the
automatic merging of an element refused alone, and a tiny real run (skipped when the build is
missing)."""
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO
from hoardlab_lib import attribute as A, verdicts as V
from hoardlab_lib.common import ToolError

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
TOOL = os.path.join(REPO, "tools", "hoardlab")


def plan3():
    els = [("a", {"a": "on"}), ("b", {"b": "2"}), ("c", {"c": "x"})]
    return A.Plan("s", "s:a=on:b=2:c=x", els)


def test_paths_visit_every_prefix_and_suffix_once():
    p = plan3()
    assert [sorted(s) for s in p.fwd] == [[], [0], [0, 1], [0, 1, 2]]
    assert [sorted(s) for s in p.rev] == [[], [2], [1, 2], [0, 1, 2]]
    labels = [c[0] for c in p.configs]
    assert labels == ["base", "f1", "f2", "target", "r1", "r2"]
    knobs = {c[0]: c[2] for c in p.configs}
    assert knobs["f2"] == {"a": "on", "b": "2"} and knobs["r1"] == {"c": "x"}
    assert knobs["target"] == {"a": "on", "b": "2", "c": "x"} and knobs["base"] == {}
    assert A.Plan.from_json(p.to_json()).configs == p.configs


# The known answer: the metric is 100 x 2 (a) x 1.5 (b) x 1 (c), except that a and b together
# lose half (an interaction): a alone doubles it, a after b leaves it as it was. Three
# repetitions at 0.99, 1 and 1.01 of the value.
def value(knobs):
    v = 100.0 * (2 if "a" in knobs else 1) * (1.5 if "b" in knobs else 1)
    return v * (0.5 if "a" in knobs and "b" in knobs else 1)


def rows_for(p, reps=(0.99, 1.0, 1.01)):
    return [{"variant": label, "workload_label": "w", "threads": 2, "status": "ok",
             "throughput": value(knobs) * f} for label, _, knobs, _ in p.configs for f in reps]


def test_known_answer_with_an_interaction():
    p = plan3()
    res, total, base, target = A.attribution(p, A.measure_rows(rows_for(p), "throughput", "w", 2))
    by = {e["name"]: e for e in res}
    assert by["a"]["forward"].med == pytest.approx(2.0)
    assert by["a"]["reverse"].med == pytest.approx(1.0)
    assert by["b"]["forward"].med == pytest.approx(0.75)
    assert by["b"]["reverse"].med == pytest.approx(1.5)
    assert by["c"]["forward"].med == pytest.approx(1.0) == by["c"]["reverse"].med
    assert [by[k]["verdict"] for k in "abc"] == ["interaction", "interaction",
                                                 "same within noise"]
    assert total.med == pytest.approx(1.5) and base.med == 100 and target.med == 150
    for key in ("forward", "reverse"):      # each path's contributions multiply to the total
        prod = 1.0
        for e in res:
            prod *= e[key].med
        assert prod == pytest.approx(total.med)


def test_noise_hides_a_small_interaction_and_one_repetition_decides_nothing():
    p = plan3()
    noisy = rows_for(p, reps=(0.6, 1.0, 1.6))
    res, *_ = A.attribution(p, A.measure_rows(noisy, "throughput", "w", 2))
    assert all(e["verdict"] == "same within noise" for e in res)
    res, *_ = A.attribution(p, A.measure_rows(rows_for(p, reps=(1.0,)), "throughput", "w", 2))
    assert all(e["verdict"] == "one repetition: no spread" for e in res)
    res, total, *_ = A.attribution(p, A.measure_rows([], "throughput", "w", 2))
    assert all(e["verdict"] == "not measured" for e in res) and total is None


def test_table_lines_name_every_element_and_the_verdicts():
    p = plan3()
    text = "\n".join(A.table_lines(p, rows_for(p)))
    assert "**w, 2 threads**" in text and "target / base 1.50" in text
    assert text.count("| interaction |") == 2 and "| same within noise |" in text


def test_differing_keys_and_order():
    base = {"strategy": "hoard", "tlab": "off", "heaps": "4", "lock": "spin"}
    target = {"strategy": "hoard2026", "tlab": "on", "heaps": "4", "lock": "mutex"}
    diff = A.differing(base, target)
    assert diff == [("tlab", "on"), ("lock", "mutex")]
    assert A.elements(diff) == [("tlab", {"tlab": "on"}), ("lock", {"lock": "mutex"})]
    assert A.elements(diff, ["lock+tlab"]) == [("lock+tlab", {"lock": "mutex", "tlab": "on"})]
    for bad in (["tlab"], ["tlab", "lock", "heaps"], ["tlab", "tlab+lock"]):
        with pytest.raises(ToolError):
            A.elements(diff, bad)


def fake_build(monkeypatch, eff, refuse):
    monkeypatch.setattr(A, "effective", lambda bdir, base, knobs: eff[base])
    monkeypatch.setattr(A.runkit, "check_allocator", lambda *a: None)
    monkeypatch.setattr(A.runkit, "knob_problem", lambda bdir, base, knobs: (
        ("key", "refused") if refuse(knobs) else None))


def test_a_key_that_needs_another_comes_after_it_in_both_orders(monkeypatch):
    """`cap` starts only with `mode=queue` (as remote_queue_cap needs remote_free=queue): the
    reverse order, which would add cap first, takes it right after mode."""
    eff = {"s": {"strategy": "s", "x": "0", "mode": "lock", "cap": "0", "y": "0"},
           "t": {"strategy": "t", "x": "1", "mode": "queue", "cap": "256", "y": "1"}}
    fake_build(monkeypatch, eff, lambda k: "cap" in k and k.get("mode") != "queue")
    p = A.plan("bdir", "s", "t")
    assert [n for n, _ in p.elements] == ["x", "mode", "cap", "y"]
    assert p.fwd_order == [0, 1, 2, 3] and p.rev_order == [3, 1, 2, 0]
    p = A.plan("bdir", "s", "t", order=["cap", "mode", "x", "y"])
    assert [n for n, _ in p.elements] == ["cap", "mode", "x", "y"]
    assert p.fwd_order == [1, 0, 2, 3] and p.rev_order == [3, 2, 1, 0]
    labels = {c[0]: c[2] for c in p.configs}
    assert labels["f1"] == {"mode": "queue"} and labels["r1"] == {"y": "1"}


def test_keys_that_need_each_other_become_one_element(monkeypatch):
    eff = {"s": {"strategy": "s", "a": "0", "b": "0", "c": "0"},
           "t": {"strategy": "t", "a": "1", "b": "1", "c": "1"}}
    fake_build(monkeypatch, eff, lambda k: ("a" in k) != ("b" in k))
    p = A.plan("bdir", "s", "t")
    assert [n for n, _ in p.elements] == ["a+b", "c"]
    assert p.configs[1][2] == {"a": "1", "b": "1"}


BUILT = all(os.path.exists(os.path.join(BDIR, f)) for f in
            ("harness/hlbench", "src/hlconfig", "src/libhoardlab.so"))


def tool(*args):
    env = dict(os.environ, HOARDLAB_BUILD_DIR=BDIR)
    return subprocess.run([sys.executable, TOOL, "attribute", "--no-build"] + list(args),
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.skipif(not BUILT, reason="not built in %s" % BDIR)
def test_dry_run_lists_the_steps_of_a_strategy_row():
    p = tool("hoard", "hoard2026", "--dry-run", "-w", "threadtest:scale=0.01")
    assert p.returncode == 0, p.stderr
    # hoard2026's `.defaults` against hoard's, read from the build
    for key in ("tlab=on", "global_shards=8", "heap_select=cpu", "superblock_size="):
        assert key in p.stdout
    assert "forward order:" in p.stdout and "reverse order:" in p.stdout and "runs:" in p.stdout
    bad = tool("hoard", "hoard:tlab=maybe", "--dry-run")
    assert bad.returncode == 2 and "tlab" in bad.stderr
    same = tool("hoard", "hoard:tlab=off", "--dry-run")
    assert same.returncode == 2 and "same effective configuration" in same.stderr
    wl = tool("hoard", "hoard:tlab=on", "--dry-run", "-w", "threadtest:nosuch=1")
    assert wl.returncode == 2 and "nosuch" in wl.stderr


@pytest.mark.skipif(not BUILT, reason="not built in %s" % BDIR)
def test_tiny_real_run(tmp_path):
    out = str(tmp_path / "attr")
    p = tool("hoard", "hoard:heap_select=cpu:tlab=on", "-w", "threadtest:scale=0.01",
             "-t", "2", "-r", "2", "--out", out, "--seed", "3", "-q")
    assert p.returncode == 0, p.stderr[-2000:]
    for f in ("runs.csv", "report.md", "attribute.ini", "attribution.json", "attribution.md"):
        assert os.path.exists(os.path.join(out, f)), f
    assert "**threadtest, 2 threads**" in p.stdout
    assert "| heap_select |" in p.stdout and "| tlab |" in p.stdout
    again = tool("--from", out, "--metric", "peak_rss_kb")
    assert again.returncode == 0 and "peak_rss_kb: base" in again.stdout


def test_one_element_is_one_path():
    p = A.Plan("s", "s:a=on", [("a", {"a": "on"})])
    rows = [{"variant": label, "workload_label": "w", "threads": 1, "status": "ok",
             "throughput": value(k) * f} for label, _, k, _ in p.configs for f in (0.99, 1.01)]
    res, total, *_ = A.attribution(p, A.measure_rows(rows, "throughput", "w", 1))
    assert res[0]["verdict"] == "one element: the orders are one path"
    assert res[0]["forward"].med == pytest.approx(2.0) == total.med


@pytest.mark.skipif(not BUILT, reason="not built in %s" % BDIR)
def test_a_combination_a_module_refuses_at_start_is_no_step():
    """free_lists = sharded needs remote_free = list, a rule superblock.c checks at its init:
    hlconfig --check runs the whole start, so the plan to a composed row that sets both makes
    them one element or puts remote_free first (a step with free_lists alone failed in the
    run itself)."""
    from hoardlab_lib.runkit import check
    assert check.knob_problem(BDIR, "hoard2026", {"free_lists": "sharded",
                                                  "remote_free": "lock"}) is not None
    assert check.knob_problem(BDIR, "hoard2026", {"free_lists": "sharded",
                                                  "remote_free": "list"}) is None
    p = tool("hoard2026", "mimalloc-like", "--dry-run", "-w", "threadtest:scale=0.01")
    assert p.returncode == 0, p.stderr
    steps = [ln for ln in p.stdout.splitlines()
             if re.match(r"\s+\d+ [fr]\d+ ", ln) and "free_lists=sharded" in ln]
    assert steps and all("remote_free=list" in ln for ln in steps), p.stdout

"""Command lines, environments and output parsing (no build needed)."""
import pytest

from hoardlab_lib import common, runner, selftest
from hoardlab_lib.common import ToolError


def test_allocator_spec():
    assert common.parse_allocator_spec("concurrent, padding=on") == \
        ("concurrent", {"padding": "on"})
    assert common.parse_allocator_spec("hoard,empty-fraction=1/8") == \
        ("hoard", {"empty_fraction": "1/8"})
    for bad in ("", "padding=on", "hoard, padding"):
        with pytest.raises(ToolError):
            common.parse_allocator_spec(bad)


def test_env_for_a_strategy(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "libhoardlab.so").write_text("")
    env = common.allocator_env("hoard", {"empty_fraction": "1/8", "census": "on"}, str(tmp_path),
                               environ={"PATH": "/bin", "HOARD_PADDING": "on",
                                        "LD_PRELOAD": "/x.so"})
    assert env["LD_PRELOAD"] == str(tmp_path / "src" / "libhoardlab.so")
    assert env["HOARD_STRATEGY"] == "hoard" and env["HOARD_EMPTY_FRACTION"] == "1/8"
    assert env["HOARD_CENSUS"] == "on" and "HOARD_PADDING" not in env   # nothing leaks in
    assert env["PATH"] == "/bin"


def test_env_for_production_allocators(tmp_path):
    env = common.allocator_env("glibc", {}, str(tmp_path), environ={"HOARD_X": "1",
                                                                   "LD_PRELOAD": "/x.so"})
    assert "LD_PRELOAD" not in env and "HOARD_X" not in env
    with pytest.raises(ToolError, match="production"):
        common.allocator_env("jemalloc", {"padding": "on"}, str(tmp_path), environ={})
    with pytest.raises(ToolError, match="tools/hoardlab build"):
        common.allocator_env("hoard", {}, str(tmp_path / "none"), environ={})


def test_hlbench_argv():
    run = {"workload": "larson", "workload_label": "census-larson", "threads": 2,
           "scale": 0.5, "seed": 43, "pin": True, "params": {"min_size": "16"}}
    assert runner.hlbench_argv("/b/hlbench", run) == [
        "/b/hlbench", "larson", "--threads", "2", "--scale", "0.5", "--seed", "43",
        "--label", "census-larson", "--pin", "--min_size", "16"]


def test_parse_records():
    recs, bad = runner.parse_records('note\n{"a": 1}\n{broken\n[1]\n{"b": 2}\n')
    assert recs == [{"a": 1}, {"b": 2}] and bad == 1


def test_meson_and_junit_counts(tmp_path):
    out = "...\nOk:                 138 \nExpected Fail:      1   \nFail:               2   \n" \
          "Unexpected Pass:    0   \nSkipped:            3   \nTimeout:            1   \n"
    assert selftest.meson_counts(out) == (139, 3)
    assert selftest.meson_counts("no summary") is None
    x = tmp_path / "j.xml"
    x.write_text('<testsuites><testsuite tests="10" failures="1" errors="1" skipped="2"/>'
                 '</testsuites>')
    assert selftest.junit_counts(str(x)) == (6, 2, 2)


def test_progress_estimate(capsys):
    import io
    s = io.StringIO()
    p = runner.Progress(3, stream=s)
    runs = [{"workload_label": w, "variant": "v", "threads": 1, "repetition": 0}
            for w in ("a", "a", "b")]
    p.plan(runs)
    p.start(0, runs[0])
    p.finish(runs[0], 2.0, "ok")
    assert p.left() == 4.0                 # one more 'a' (2 s) + one 'b' (mean 2 s)
    p.start(1, runs[1])
    p.finish(runs[1], 4.0, "failed", "boom\nlast line")
    p.close()
    text = s.getvalue()
    assert "[1/3] v a t=1 rep 0" in text and "left ~0:04" in text
    assert "failed: v a t=1: last line" in text and "2 runs in" in text

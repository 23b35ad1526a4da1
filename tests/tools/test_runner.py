"""Command lines, environments and output parsing (no build needed)."""
import pytest

from hoardlab_lib import allocators, selftest
from hoardlab_lib.runkit import runner
from hoardlab_lib.common import ToolError


def test_allocator_spec():
    assert allocators.parse_allocator_spec("concurrent, padding=on") == \
        ("concurrent", {"padding": "on"})
    assert allocators.parse_allocator_spec("hoard,empty-fraction=1/8") == \
        ("hoard", {"empty_fraction": "1/8"})
    for bad in ("", "padding=on", "hoard, padding"):
        with pytest.raises(ToolError):
            allocators.parse_allocator_spec(bad)


def test_env_for_a_strategy(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "libhoardlab.so").write_text("")
    env = allocators.allocator_env("hoard", {"empty_fraction": "1/8", "census": "on"}, str(tmp_path),
                               environ={"PATH": "/bin", "HOARD_PADDING": "on",
                                        "LD_PRELOAD": "/x.so"})
    assert env["LD_PRELOAD"] == str(tmp_path / "src" / "libhoardlab.so")
    assert env["HOARD_STRATEGY"] == "hoard" and env["HOARD_EMPTY_FRACTION"] == "1/8"
    assert env["HOARD_CENSUS"] == "on" and "HOARD_PADDING" not in env   # nothing leaks in
    assert env["PATH"] == "/bin"


def test_env_for_production_allocators(tmp_path):
    env = allocators.allocator_env("glibc", {}, str(tmp_path), environ={"HOARD_X": "1",
                                                                   "LD_PRELOAD": "/x.so"})
    assert "LD_PRELOAD" not in env and "HOARD_X" not in env
    with pytest.raises(ToolError, match="production"):
        allocators.allocator_env("jemalloc", {"padding": "on"}, str(tmp_path), environ={})
    with pytest.raises(ToolError, match="tools/hoardlab build"):
        allocators.allocator_env("hoard", {}, str(tmp_path / "none"), environ={})


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


def test_no_estimate_from_the_first_sixteenth_of_the_runs():
    import io
    p = runner.Progress(160, stream=io.StringIO())
    runs = [{"workload_label": "a", "variant": "v", "threads": 1, "repetition": 0}] * 160
    p.plan(runs)
    for i in range(9):
        p.start(i, runs[i])
        p.finish(runs[i], 1.0, "ok")
    assert p.left() is None                # 9 of 160 runs: too few to stand for the rest
    p.start(9, runs[9])
    p.finish(runs[9], 1.0, "ok")
    assert p.left() == 150.0


# --- fail fast: the smoke run, timeouts, interruptions (real processes, no build needed) -----

import os          # noqa: E402
import signal      # noqa: E402
import subprocess  # noqa: E402
import sys         # noqa: E402
import time        # noqa: E402

from conftest import REPO  # noqa: E402
from hoardlab_lib import cli, smoke  # noqa: E402

# A stand-in for hlbench whose behaviour FAKE selects: a real hang (with a grandchild, which
# must be ended too), a real SIGSEGV, the checker's line and abort, or a good run.
FAKE = r"""#!/bin/sh
case "$FAKE" in
hang) sleep 300 & echo $! > "$PIDS"; echo $$ >> "$PIDS"; wait ;;
segv) kill -SEGV $$ ;;
overlap) echo "hoardlab: hoardlab handed out 0x7f0000001000 twice without a free in between (strategy mine); aborting" >&2; kill -ABRT $$ ;;
*) echo '{"workload": "x", "throughput": 1}' ;;
esac
"""


def fake_build(tmp_path, monkeypatch, behaviour):
    bdir = tmp_path / "b"
    (bdir / "harness").mkdir(parents=True)
    (bdir / "src").mkdir()
    (bdir / "src" / "libhoardlab.so").write_text("")
    exe = bdir / "harness" / "hlbench"
    exe.write_text(FAKE)
    exe.chmod(0o755)
    monkeypatch.setenv("FAKE", behaviour)
    monkeypatch.setenv("PIDS", str(tmp_path / "pids"))
    real = allocators.allocator_env

    def no_preload(base, knobs, bdir, environ=None):     # the empty library is not loaded
        env = real(base, knobs, bdir, environ)
        env.pop("LD_PRELOAD", None)
        return env
    monkeypatch.setattr(runner, "allocator_env", no_preload)
    return str(bdir)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open("/proc/%d/stat" % pid) as f:          # a zombie is not running
        return f.read().split(")")[-1].split()[0] != "Z"


def test_the_smoke_run_names_a_hang_and_ends_every_process_it_started(tmp_path, monkeypatch):
    bdir = fake_build(tmp_path, monkeypatch, "hang")
    seen = smoke.run(bdir, "mine", timeout=1.0)
    assert seen["kind"] == "hang"
    assert seen["line"].startswith("mine appears to deadlock; a lock not released?")
    assert seen["command"].startswith("HOARD_CHECKS=on ")
    pids = [int(x) for x in (tmp_path / "pids").read_text().split()]
    time.sleep(0.2)
    assert not any(alive(p) for p in pids), "the hung run's processes are still running"


@pytest.mark.parametrize("behaviour, kind, words", [
    ("segv", "crash", "mine crashed: SIGSEGV in hlbench threadtest -t 2"),
    ("overlap", "checker", "mine: hoardlab handed out 0x7f0000001000 twice"),
])
def test_the_smoke_run_names_a_crash_by_its_signal_and_the_checkers_line(
        tmp_path, monkeypatch, behaviour, kind, words):
    seen = smoke.run(fake_build(tmp_path, monkeypatch, behaviour), "mine")
    assert seen["kind"] == kind and seen["line"].startswith(words), seen


def test_the_smoke_run_passes_a_good_run(tmp_path, monkeypatch):
    assert smoke.run(fake_build(tmp_path, monkeypatch, "ok"), "mine") is None


def test_test_strategy_stops_at_a_failed_smoke_run(monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(selftest, "do_build", lambda *a, **k: None)
    monkeypatch.setattr(selftest, "introspect_tests", lambda b: [
        {"name": "api-mine", "env": {"HOARD_STRATEGY": "mine"}, "cmd": ["/t"]}])
    monkeypatch.setattr(selftest.smoke, "run", lambda b, n: {
        "kind": "hang", "line": "mine appears to deadlock; a lock not released? (...)",
        "command": "HOARD_CHECKS=on ..."})
    monkeypatch.setattr(selftest, "meson_stopping", lambda *a, **k: ran.append(a))
    assert selftest.strategy_tests("/b", "mine") == 1
    assert ran == []                                    # no test was waited for
    assert "mine appears to deadlock; a lock not released?" in capsys.readouterr().out


@pytest.mark.parametrize("behaviour, words", [
    ("hang", "mine appears to deadlock; a lock not released?"),
    ("overlap", "mine: hoardlab handed out 0x7f0000001000 twice"),
])
@pytest.mark.parametrize("command", ["test", "grade"])
def test_a_strategy_that_hangs_or_hands_out_twice_exits_1_with_one_line(
        tmp_path, monkeypatch, capsys, command, behaviour, words):
    """Through the CLI, as a student runs it: exit 1 (a failure), not 2 (the CLI's status for
    a wrong argument), and the diagnosis on one line."""
    from hoardlab_lib.lab import correct, gradecmd
    bdir = fake_build(tmp_path, monkeypatch, behaviour)
    real = smoke.run
    monkeypatch.setattr(smoke, "run", lambda b, s: real(b, s, timeout=1.0))
    monkeypatch.setattr(selftest, "do_build", lambda *a, **k: None)
    monkeypatch.setattr(selftest, "introspect_tests", lambda b: [
        {"name": "api-mine", "env": {"HOARD_STRATEGY": "mine"}, "cmd": ["/t"]}])
    monkeypatch.setattr(selftest, "meson_stopping", lambda *a, **k: 1 / 0)
    monkeypatch.setattr(gradecmd, "hlconfig_strategies", lambda b: [("mine", "x")])
    monkeypatch.setattr(correct, "run", lambda b, s, quick, short: {})
    argv = {"test": ["test", "--strategy", "mine"],
            "grade": ["grade", "mine", "--quick", "--no-build", "--no-cost",
                      "--results", str(tmp_path / "results")]}[command]
    assert cli.main(argv + ["--build-dir", bdir]) == 1
    out = capsys.readouterr()
    lines = [ln for ln in (out.out + out.err).splitlines() if words in ln]
    assert len(lines) == 1, out                         # said once


FAKE_MESON = r"""
import signal, sys, time
def term(*a):
    print("Ok:                 0\nFail:               0\nTimeout:            2", flush=True)
    sys.exit(1)
signal.signal(signal.SIGTERM, term)
for i in (1, 2):
    print(" %d/75 hoardlab:reliability / rel-stress-mine-%d   TIMEOUT   30.01s   killed by "
          "signal 15 SIGTERM" % (i, i), flush=True)
time.sleep(300)                     # 73 more tests, each waiting for its timeout
"""


def test_after_the_first_timeouts_the_rest_are_not_waited_for(tmp_path):
    script = tmp_path / "meson.py"
    script.write_text(FAKE_MESON)
    t0 = time.time()
    rc, out, timeouts = selftest.meson_stopping([sys.executable, str(script)], echo=False)
    assert timeouts == ["rel-stress-mine-1", "rel-stress-mine-2"]
    assert rc != 0 and "Timeout:            2" in out
    assert time.time() - t0 < 200          # not the 300 s the stand-in would wait


# The child is a tool in the foreground: a shell starts a background job (`cmd &`) with SIGINT
# ignored, which Python then keeps, so the child takes Python's default SIGINT handler back.
INTERRUPTED = r"""
import os, shutil, signal, sys, tempfile
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, %r)
from hoardlab_lib.runkit import runner
tmp = tempfile.mkdtemp(prefix="hoardlab-test-interrupt-")
with open(%r, "w") as f:
    f.write(tmp + "\n")
with runner.interruptible():
    try:
        runner.call(["sh", "-c", "sleep 300 & echo $! >> %s; echo $$ >> %s; wait"])
    finally:
        shutil.rmtree(tmp)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_sigint_ends_every_child_and_removes_the_temporary_folder(tmp_path, sig):
    pids, tmpfile = tmp_path / "pids", tmp_path / "tmp"
    code = INTERRUPTED % (os.path.join(REPO, "tools"), str(tmpfile), pids, pids)
    p = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)
    for _ in range(200):
        if pids.exists() and len(pids.read_text().split()) == 2:
            break
        time.sleep(0.05)
    folder = tmpfile.read_text().strip()
    assert os.path.isdir(folder)
    p.send_signal(sig)
    p.wait(timeout=30)
    time.sleep(0.2)
    assert not os.path.exists(folder)
    assert not any(alive(int(x)) for x in pids.read_text().split())


def test_run_has_a_default_timeout_and_says_so():
    a = cli.parser().parse_args(["run", "threadtest"])
    assert a.timeout == runner.RUN_TIMEOUT > 0
    run_parser = cli.parser()._subparsers._group_actions[0].choices["run"]
    assert "default %g" % runner.RUN_TIMEOUT in run_parser.format_help()

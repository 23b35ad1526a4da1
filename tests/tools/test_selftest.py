"""`hoardlab test`'s closing line counts and names skipped tests, and `--full` / the default set
the meson option full_suite so the summary names the suite that ran (issues 46, 48)."""
import json
import os

from hoardlab_lib import selftest

MESON_OUT = """\
 1/4 hoardlab:unit / api                        OK              0.10s
 2/4 hoardlab:reliability+rel-fuzz / rel-fuzz-malloc-corpus-hoard SKIP   3.21s   exit status 77
 3/4 hoardlab:reliability+rel-fuzz / rel-fuzz-config SKIP            30.00s   exit status 77
 4/4 hoardlab:unit / config                     FAIL            0.20s   exit status 1

Ok:                 1
Expected Fail:      0
Fail:               1
Unexpected Pass:    0
Skipped:            2
Timeout:            0
"""

JUNIT = ('<testsuites><testsuite tests="3" failures="0" errors="0" skipped="1">'
         '<testcase classname="tests.tools.test_a" name="test_one"/>'
         '<testcase classname="tests.tools.test_a" name="test_two"><skipped message="x"/>'
         '</testcase><testcase classname="tests.tools.test_b" name="test_three"/>'
         '</testsuite></testsuites>')


def test_meson_skipped_counts_and_names():
    assert selftest.meson_skipped(MESON_OUT) == (
        2, ["rel-fuzz-malloc-corpus-hoard", "rel-fuzz-config"])
    assert selftest.meson_counts(MESON_OUT) == (1, 1)
    assert selftest.meson_skipped("no summary") == (0, [])


def test_junit_skipped_names(tmp_path):
    x = tmp_path / "j.xml"
    x.write_text(JUNIT)
    assert selftest.junit_skipped(str(x)) == ["tests.tools.test_a::test_two"]


def _options(bdir, value):
    os.makedirs(os.path.join(bdir, "meson-info"), exist_ok=True)
    opts = [{"name": "strategies", "value": ["hoard"]}]
    if value is not None:
        opts.append({"name": "full_suite", "value": value})
    with open(os.path.join(bdir, "meson-info", "intro-buildoptions.json"), "w") as f:
        json.dump(opts, f)


def test_set_full_suite_configures_only_a_change(tmp_path, monkeypatch):
    calls = []

    class Done:
        returncode = 0
    monkeypatch.setattr(selftest.subprocess, "run", lambda argv, **kw: calls.append(argv) or Done)
    bdir = str(tmp_path)
    _options(bdir, False)
    assert selftest.full_suite_option(bdir) is False
    selftest.set_full_suite(bdir, False)
    assert calls == []
    selftest.set_full_suite(bdir, True)
    assert calls == [["meson", "configure", bdir, "-Dfull_suite=true"]]
    _options(bdir, True)
    selftest.set_full_suite(bdir, False)
    assert calls[-1] == ["meson", "configure", bdir, "-Dfull_suite=false"]
    _options(bdir, None)
    assert selftest.full_suite_option(bdir) is None


def _run_main(monkeypatch, capsys, full):
    seen = []
    monkeypatch.setattr(selftest, "do_build", lambda bdir, jobs: None)
    monkeypatch.setattr(selftest, "set_full_suite", lambda bdir, f: seen.append(f))

    def fake_run_tee(argv, env=None):
        if argv[0] == "meson":
            return 1, MESON_OUT
        with open(argv[argv.index("--junitxml") + 1], "w") as f:
            f.write(JUNIT)
        return 0, ""
    monkeypatch.setattr(selftest, "run_tee", fake_run_tee)
    rc = selftest.main("build", skip_deps=True, full=full)
    return rc, seen, capsys.readouterr().out.splitlines()


def test_closing_line_counts_skips_and_names_the_suite(monkeypatch, capsys):
    rc, seen, lines = _run_main(monkeypatch, capsys, False)
    assert rc == 1 and seen == [False]
    assert lines[-2] == ("skipped (3): rel-fuzz-malloc-corpus-hoard, rel-fuzz-config, "
                         "tests.tools.test_a::test_two")
    assert lines[-1].startswith("tests: 3 passed, 1 failed, 3 skipped (default suite")
    rc, seen, lines = _run_main(monkeypatch, capsys, True)
    assert seen == [True]
    assert lines[-1] == "tests: 3 passed, 1 failed, 3 skipped (full suite)"

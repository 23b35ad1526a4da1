"""A grade runs what `hoardlab test --strategy` runs, or names what it left out and never says
pass (issue 67: `grade --quick` left rel-faults out, and its page read pass for a strategy
whose faults test failed)."""
import os

from hoardlab_lib import selftest
from hoardlab_lib.lab import correct, page, grade as G
from test_lab import grade_args, stub_grade

MINE = ["api-mine", "lab-mine", "rel-conformance-mine", "rel-stress-mine", "mt-mine",
        "rel-stress-uncounted-mine", "rel-fork-mine", "rel-churn-mine", "rel-faults-mine",
        "rel-faults-regress-mine", "rel-checks-mine", "rel-stress-checks-mine",
        "rel-corners-mine", "rel-tsan-stress-mine", "rel-tsan-churn-mine",
        "rel-fuzz-malloc-corpus-mine", "rel-fuzz-malloc-mine", "rel-asan-stress-mine",
        "rel-prog-sed-mine", "hlbench-threadtest-mine", "census-outside-mine"]
INTROSPECTED = [{"name": n, "env": {"HOARD_STRATEGY": "mine"}, "cmd": ["/t"]} for n in MINE] + [
    {"name": "preload-ls-mine", "env": {}, "cmd": ["/p.sh", "/lib.so", "mine", "ls"]},
    {"name": "rel-faults-serial", "env": {"HOARD_STRATEGY": "serial"}, "cmd": ["/t"]}]


def test_every_test_of_the_strategy_is_run_or_named_as_left_out(monkeypatch):
    monkeypatch.setattr(correct, "introspect_tests", lambda b: INTROSPECTED)
    ours = set(selftest.tests_of(INTROSPECTED, "mine"))
    for quick in (False, True):
        kinds, _, skipped = correct.plan("b", "mine", quick)
        ran = [n for ns in kinds.values() if ns for n in ns]
        left = [n for ns in skipped.values() for n in ns]
        assert len(ran) + len(left) == len(set(ran) | set(left)) == len(ours)   # each once
        assert set(ran) | set(left) == ours
        for must in ("rel-faults-mine", "rel-faults-regress-mine", "rel-tsan-stress-mine",
                     "rel-tsan-churn-mine", "rel-fuzz-malloc-corpus-mine"):
            assert must in ran, (quick, must)
        assert (left == []) == (not quick)
    assert set(skipped) == set(correct.QUICK_SKIPS)
    assert skipped["asan"] == ["rel-asan-stress-mine"]
    assert skipped["programs"] == ["preload-ls-mine", "rel-prog-sed-mine"]


QUICK = {"conformance": {"status": "pass", "tests": 1, "message": "", "names": ["api-mine"]},
         "faults": {"status": "pass", "tests": 1, "message": "", "names": ["rel-faults-mine"]},
         "asan": {"status": "not run", "tests": 1, "message": "--quick",
                  "names": ["rel-asan-stress-mine"]},
         "tsan": {"status": "not run", "tests": 2, "message": "rel-tsan-churn-mine skipped",
                  "names": ["rel-tsan-stress-mine", "rel-tsan-churn-mine"],
                  "not_run": ["rel-tsan-churn-mine"]}}


def test_a_grade_that_left_tests_out_names_them_and_never_says_pass(tmp_path):
    assert page.overall(QUICK) == ("incomplete: not run: asan (rel-asan-stress-mine); "
                                   "tsan (rel-tsan-churn-mine)")
    assert page.overall({k: QUICK[k] for k in ("conformance", "faults")}) == "pass"
    assert page.overall({}).startswith("incomplete")            # --no-tests
    rows = [{"status": "ok", "workload": "replay", "workload_label": "trace-a", "threads": 1,
             "knobs": "", "variant": "mine", "throughput": 1,
             "extra.trace_peak_requested": 1, "extra.replay_a": 2, "extra.events": 10}]
    ts = G.trace_scores(rows, "mine")
    mt = {"taxonomy": None, "threads": 2, "vs_serial": {}, "m": None, "q": None}
    text = open(page.write(str(tmp_path), "mine", QUICK, ts, mt, None, 2)).read()
    head = text.split("## 1. Correctness")[0]
    assert "**Correctness incomplete: not run: asan (rel-asan-stress-mine); tsan " \
           "(rel-tsan-churn-mine).**" in head
    assert "Correctness: pass" not in text
    board = open(page.leaderboard(str(tmp_path), [("mine", QUICK, ts, mt, None)])).read()
    assert "| mine | incomplete: not run: asan; tsan |" in board
    assert "| mine | pass |" not in board


def test_the_console_names_what_a_grade_left_out(tmp_path, monkeypatch, capsys):
    gradecmd, _ = stub_grade(monkeypatch, None, QUICK)
    monkeypatch.setattr(gradecmd.correct, "run", lambda b, s, quick, short: dict(QUICK))
    monkeypatch.setattr(gradecmd.G, "measure", lambda b, s, root, quick: G.out_dir(s, root))
    monkeypatch.setattr(gradecmd, "costs", lambda b, s: ({}, {}))
    monkeypatch.setattr(gradecmd, "heap_maps", lambda b, o, s: [])
    monkeypatch.setattr(gradecmd, "pages", lambda o, e: [])
    assert gradecmd.cmd_grade(grade_args(tmp_path)) == 0
    err = capsys.readouterr().err
    assert "grade: mine: correctness incomplete: not run: asan (rel-asan-stress-mine)" in err
    assert "correctness pass" not in err
    assert os.path.isdir(tmp_path / "results")


def test_the_tests_programs_are_built_and_their_scripts_are_not_targets():
    entries = [{"cmd": ["/b/tests/t", "../tests/harness/check_hlbench.py", "run",
                        "/b/../tests/harness/check.py",
                        "harness/hlbench", "/src/x.sh", "--out=a/b"]}]
    assert correct.targets_of("/b", entries) == ["harness/hlbench", "tests/t"]

"""What `test --strategy` and `grade` say of a failure (issue 67): every failed test named on
the console, the page's banner chosen by the kind of failure (a leak as a leak, not under the
banner meant for overlap), and for a crash the commands whose builds name its cause."""
import json
import os

from hoardlab_lib import selftest
from hoardlab_lib.lab import page, grade as G
from test_lab import grade_args, stub_grade

CHURN = "rel-churn-mine (FAIL): churn.c: memory from the OS grew with the number of threads: " \
        "1.0 -> 9.0 MiB"
FAULTS = "rel-faults-mine (FAIL): a block of usable size 96 added 208 to in_use"
LOG = [("hoardlab:reliability / rel-churn-mine", "FAIL",
        "memory from the OS grew with the number of threads: 1.0 -> 9.0 MiB", 1),
       ("hoardlab:unit / lab-mine", "FAIL", "[  ERROR   ] --- in_use 128 != 0\n"
        " 2 FAILED TEST(S)", 1),
       ("hoardlab:unit / api-mine", "OK", "", 0),
       ("hoardlab:reliability / rel-stress-mine", "FAIL", "", -11)]


def fake_strategy_run(monkeypatch, bdir, smoke_seen=None):
    names = ["api-mine", "lab-mine", "rel-churn-mine", "rel-asan-stress-mine",
             "rel-tsan-stress-mine"]
    monkeypatch.setattr(selftest, "do_build", lambda b, j=None: None)
    monkeypatch.setattr(selftest, "introspect_tests", lambda b: [
        {"name": n, "env": {"HOARD_STRATEGY": "mine"}, "cmd": ["/t"]} for n in names])
    monkeypatch.setattr(selftest.smoke, "run", lambda b, s: smoke_seen)
    os.makedirs(os.path.join(bdir, "meson-logs"))

    def meson(argv, echo=True):
        logbase = argv[argv.index("--logbase") + 1]
        with open(os.path.join(bdir, "meson-logs", logbase + ".json"), "w") as f:
            for n, r, text, code in LOG:
                f.write(json.dumps({"name": n, "result": r, "stdout": text,
                                    "returncode": code}) + "\n")
        return 1, " 2 FAILED TEST(S)\nOk:                 1\nFail:               2\n", []
    monkeypatch.setattr(selftest, "meson_stopping", meson)


def test_test_strategy_names_every_failed_test_on_the_console(tmp_path, monkeypatch, capsys):
    fake_strategy_run(monkeypatch, str(tmp_path))
    assert selftest.strategy_tests(str(tmp_path), "mine") == 1
    out = capsys.readouterr().out
    assert "tests of mine: 1 passed, 2 failed" in out
    assert "  failed: rel-churn-mine (FAIL): memory from the OS grew" in out
    assert "  failed: lab-mine (FAIL): [  ERROR   ] --- in_use 128 != 0" in out
    assert "api-mine (" not in out
    assert "  failed: rel-stress-mine (FAIL): killed by SIGSEGV" in out
    assert "to see the cause: meson test -C %s --print-errorlogs rel-asan-stress-mine" \
        % tmp_path in out


def test_without_a_log_the_failed_tests_are_named_from_meson_lines():
    out = " 3/9 hoardlab:reliability / rel-churn-mine   FAIL   2.1s   exit status 1\n" \
          " 4/9 lab-mine  TIMEOUT  30.0s\n 5/9 api-mine  OK  0.1s\n"
    assert selftest.failed_tests({}, out) == ["rel-churn-mine (FAIL)", "lab-mine (TIMEOUT)"]


def test_a_smoke_crash_names_the_builds_that_show_its_cause(tmp_path, monkeypatch, capsys):
    crash = {"kind": "crash", "line": "mine crashed: SIGSEGV in hlbench threadtest -t 2",
             "command": "HOARD_CHECKS=on HOARD_STRATEGY=mine hlbench threadtest"}
    fake_strategy_run(monkeypatch, str(tmp_path), crash)
    assert selftest.strategy_tests(str(tmp_path), "mine") == 1
    out = capsys.readouterr().out
    assert "to see it again: HOARD_CHECKS=on" in out
    for t in ("rel-asan-stress-mine", "rel-tsan-stress-mine"):
        assert "to see the cause: meson test -C %s --print-errorlogs %s" % (tmp_path, t) in out
    checker = dict(crash, kind="checker", line="mine: hoardlab handed out 0x10 twice")
    assert selftest.cause_commands(checker, "mine", ["rel-asan-stress-mine"], "b") == []


def corr_of(kind, message, failed=None):
    return {kind: {"status": "fail", "tests": 1, "message": message,
                   "names": [message.split()[0]], "failed": failed or [message]}}


def page_head(tmp_path, corr, diagnose=None):
    ts = G.trace_scores([], "mine")
    mt = {"taxonomy": None, "threads": 2, "vs_serial": {}, "m": None, "q": None}
    text = open(page.write(str(tmp_path), "mine", corr, ts, mt, None, 2, None, None,
                           diagnose)).read()
    return text.split("## 1. Correctness")[0]


def test_the_banner_is_chosen_by_the_kind_of_failure(tmp_path):
    for message in (CHURN, FAULTS):
        head = page_head(tmp_path, corr_of("churn", message))
        assert "Correctness failed — measurements below are void" in head
        assert "a leak: memory freed is not given back" in head, head
        assert "hands out wrong memory" not in head
        assert "`meson test -C build --print-errorlogs %s`" % message.split()[0] in head
    head = page_head(tmp_path, corr_of("stress", "rel-stress-mine (FAIL): stress.c: block 0x10 "
                                       "(64 bytes, seed 0x1) damaged at byte 3: 0"),
                     "HOARD_CHECKS=on hlbench x")
    assert "hands out wrong memory" in head and "a leak" not in head
    assert "`HOARD_CHECKS=on hlbench x`" in head
    head = page_head(tmp_path, corr_of("stress", "rel-stress-mine (FAIL): killed by SIGSEGV"))
    assert "it crashes" in head and "rel-asan-stress-mine" in head
    assert "rel-tsan-stress-mine" in head
    head = page_head(tmp_path, corr_of("tsan", "rel-tsan-stress-mine (FAIL): WARNING: "
                                       "ThreadSanitizer: data race (pid=1)"))
    assert "a data race" in head
    assert page.failure_kinds(dict(corr_of("churn", CHURN), **corr_of(
        "stress", "rel-stress-mine (FAIL): killed by SIGSEGV"))) == "leak, crash"


def test_the_grade_console_names_every_failed_test(tmp_path, monkeypatch, capsys):
    two = ["rel-churn-mine (FAIL): memory from the OS grew with the number of threads",
           "churn-mine-x (FAIL): in_use 128, was 0"]
    corr = {"churn": {"status": "fail", "tests": 2, "message": two[0],
                      "names": ["rel-churn-mine", "churn-mine-x"], "failed": two}}
    gradecmd, _ = stub_grade(monkeypatch, None, corr)
    monkeypatch.setattr(gradecmd.correct, "run", lambda b, s, quick, short: dict(corr))
    assert gradecmd.cmd_grade(grade_args(tmp_path)) == 1
    err = capsys.readouterr().err
    assert "grade: mine: correctness failed (leak)" in err
    for line in two:
        assert "  failed: churn: %s" % line in err


def test_a_grade_row_keeps_every_failed_test_of_its_kind():
    from hoardlab_lib.lab import correct
    results = {"a": ("OK", "", 0), "b": ("FAIL", "in_use 1 != 0", 1), "c": ("TIMEOUT", "", -15)}
    got = correct.failures(results, ["a", "b", "c", "d"])
    assert [g.split(" ")[0] for g in got] == ["b", "c", "d"]
    assert got[0] == "b (FAIL): in_use 1 != 0" and "timed out" in got[1]
    assert got[2] == "d (not run): meson stopped before it"


def test_the_line_that_says_what_failed_is_the_tests_own():
    out = ("faults: mine: 0 OS calls failed in all; FAILED\n"
           "FAILED: HOARD_STRATEGY=mine build/tests/reliability/rel_faults\n  (exit status 1)\n"
           "init=2\nFAIL: a block of usable size 224 added 352 to in_use\n")
    line = selftest.first_message(out)
    assert line == "FAIL: a block of usable size 224 added 352 to in_use"
    assert page.failure_kind(line) == "leak"

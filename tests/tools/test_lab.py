"""The lab (tools/hoardlab_lib/lab/, docs/lab.md): `new` into a copy of the tree, the build
following meson_options.txt, one strategy's tests, the grade's scores and page from rows, the
shipped traces and their replay."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import BDIR, REPO, needs_built
from test_build import source_files        # the tree as it is, to copy
from hoardlab_lib import build, selftest, sweeps as sweepmod
from hoardlab_lib.common import ToolError
from hoardlab_lib.lab import correct, grade as G, page, scaffold, traces


def tree_copy(tmp_path):
    """The parts of the tree `new` writes to, copied."""
    for d in ("src/strategies", "tests/strategies"):
        os.makedirs(tmp_path / d)
    shutil.copy(os.path.join(REPO, "meson_options.txt"), tmp_path / "meson_options.txt")
    shutil.copy(os.path.join(REPO, "src", "strategies", "serial.c"),
                tmp_path / "src" / "strategies" / "serial.c")
    return str(tmp_path)


@pytest.mark.parametrize("origin", ["serial", "hoard"])
def test_new_writes_the_strategy_its_test_and_its_name(tmp_path, origin):
    repo = tree_copy(tmp_path)
    files = scaffold.new("mine", origin, BDIR, build=False, repo=repo)
    assert [os.path.relpath(f, repo) for f in files] == [
        "src/strategies/mine.c", "tests/strategies/lab_mine.c", "meson_options.txt"]
    src = open(files[0]).read()
    assert "hl_strategy_mine" in src and ".name = \"mine\"" in src and "@" not in src
    assert ("HL_MALLOC_PAIR(static, mine_malloc" in src if origin == "serial"
            else "mine_policy = {" in src)       # a heap row is its policy (heap.h)
    assert "\"mine\"" in open(files[1]).read()
    listed = build.listed_strategies(files[2])
    assert listed[-1] == "mine" and listed[:-1] == build.listed_strategies()


@pytest.mark.parametrize("name,why", [("serial", "exists already"), ("Tcache", "not a strategy"),
                                      ("1cache", "not a strategy"), ("register", "taken"),
                                      ("glibc", "taken")])
def test_new_refuses_a_bad_or_taken_name(tmp_path, name, why):
    repo = tree_copy(tmp_path)
    with pytest.raises(ToolError, match=why):
        scaffold.new(name, "serial", BDIR, build=False, repo=repo)
    assert build.listed_strategies(os.path.join(repo, "meson_options.txt")) == \
        build.listed_strategies()


def fake_build(tmp_path, strategies):
    info = tmp_path / "b" / "meson-info"
    info.mkdir(parents=True)
    (info / "intro-buildoptions.json").write_text(json.dumps(
        [{"name": "strategies", "value": strategies}]))
    return str(tmp_path / "b")


def test_a_full_build_follows_meson_options_and_a_subset_build_is_told(tmp_path, monkeypatch,
                                                                        capsys):
    ran = []
    monkeypatch.setattr(build.subprocess, "run", lambda argv, **kw: ran.append(argv) or
                        subprocess.CompletedProcess(argv, 0))
    listed = build.listed_strategies()
    monkeypatch.setattr(build, "listed_strategies", lambda: listed + ["serial2"])
    # a strategy file made after the build was configured: the build follows the file
    full = fake_build(tmp_path, listed)
    os.makedirs(os.path.join(full, "meson-private"))
    with open(os.path.join(full, "meson-private", "cmd_line.txt"), "w") as f:
        f.write("[options]\nstrategies = %s\n" % ",".join(listed))
    src = os.path.join(REPO, "src", "strategies", "serial.c")
    os.utime(os.path.join(full, "meson-info", "intro-buildoptions.json"),
             (os.path.getmtime(src) - 10,) * 2)
    assert build.sync_strategies(full)
    assert ran == [["meson", "configure", full, "-Dstrategies=" + ",".join(listed + ["serial2"])]]
    # on the default (meson keeps the old list when the file changes): follows the file
    ran.clear()
    assert build.sync_strategies(fake_build(tmp_path / "d", listed))
    assert len(ran) == 1
    # -Dstrategies=serial,hoard on purpose: left alone, with the line that would add the rest
    ran.clear()
    subset = fake_build(tmp_path / "s", ["serial", "hoard"])
    (tmp_path / "s" / "b" / "meson-private").mkdir()
    (tmp_path / "s" / "b" / "meson-private" / "cmd_line.txt").write_text(
        "[options]\nstrategies = serial,hoard\n")
    assert not build.sync_strategies(subset)
    assert ran == []
    assert "-Dstrategies=" + ",".join(listed + ["serial2"]) in capsys.readouterr().err
    assert not build.sync_strategies(fake_build(tmp_path / "same", listed + ["serial2"]))


def test_a_strategys_tests_are_those_run_under_it():
    tests = [{"name": "api-serial", "env": {"HOARD_STRATEGY": "serial"}, "cmd": ["/t"]},
             {"name": "preload-ls-serial", "env": {}, "cmd": ["/p.sh", "/lib.so", "serial", "ls"]},
             {"name": "api-serial2", "env": {"HOARD_STRATEGY": "serial2"}, "cmd": ["/t"]},
             {"name": "config", "env": {}, "cmd": ["/c"]}]
    assert selftest.tests_of(tests, "serial") == ["api-serial", "preload-ls-serial"]


@needs_built("build.ninja")
def test_every_strategy_has_its_correctness_tests_registered():
    names = selftest.tests_of(selftest.introspect_tests(BDIR), "serial")
    for n in ("api-serial", "rel-stress-serial", "rel-fork-serial", "rel-churn-serial"):
        assert n in names
    assert not any(n.endswith("-hoard") for n in names)


def rows_of(strategy, trace, live, held, t, glibc_t):
    base = {"status": "ok", "workload": "replay", "workload_label": "trace-" + trace,
            "threads": 1, "knobs": ""}
    return [dict(base, variant=strategy, throughput=t, **{"extra.trace_peak_requested": live,
                                                        "extra.replay_a": held,
                                                        "extra.events": 1000}),
            dict(base, variant="glibc", throughput=glibc_t)]


def test_the_trace_score_is_the_labs_formula():
    rows = rows_of("mine", "a", 500, 1000, 50, 100) + rows_of("mine", "b", 900, 1000, 400, 100)
    ts = G.trace_scores(rows, "mine")
    assert [p["u"] for p in ts["traces"]] == [0.5, 0.9]
    assert ts["u"] == pytest.approx(0.7)
    assert ts["ratio"] == pytest.approx(2.0 ** 0.5 * 2 ** 0.5 / 2 ** 0.5)  # gmean(0.5, 4)
    assert ts["p"] == pytest.approx(0.6 * 0.7 + 0.4 * 1.0)        # T/T_glibc capped at 1


def test_the_grade_page_has_its_four_parts_and_a_figure(tmp_path):
    ts = G.trace_scores(rows_of("mine", "a", 500, 1000, 50, 100), "mine")
    corr = {"conformance": {"status": "pass", "tests": 1, "message": "", "names": ["api-mine"]},
            "fuzzer": {"status": "not run", "tests": 1, "names": ["rel-fuzz-malloc-corpus-mine"],
                       "message": "rel-fuzz-malloc-corpus-mine skipped (meson's SKIP, exit 77)"}}
    mt = {"taxonomy": None, "threads": 2, "vs_serial": {"threadtest": 1.5}, "m": 1.5}
    path = page.write(str(tmp_path), "mine", corr, ts, mt, {"8 B": 88.0}, 2)
    text = open(path).read()
    for part in ("## 1. Correctness", "## 2. Single-threaded", "## 3. Multi-threaded",
                 "## 4. Instructions", "## Heap map", "| fuzzer | rel-fuzz-malloc-corpus-mine "
                 "| not run |", "P = 0.6 x 0.50 + 0.4 x min(1, 0.50) = 0.50"):
        assert part in text
    assert "void" not in text
    assert os.path.getsize(tmp_path / "grade-mine.png") > 1000


def test_the_grade_page_shows_its_heap_maps_or_why_not(tmp_path):
    ts = G.trace_scores(rows_of("mine", "a", 500, 1000, 50, 100), "mine")
    mt = {"taxonomy": None, "threads": 2, "vs_serial": {}, "m": None}
    maps = [{"workload": "threadtest", "png": "heapmap-mine.png", "trace": "heapmap-mine.json",
             "summary": "17 moves to the global heap",
             "roles": ["heap 3: thread 1's heap — counts 2.4 MiB in use while the whole "
                       "process had 0.1 MiB live: its 'full' is blocks another thread freed, "
                       "free but unusable to it"]},
            {"workload": "blowup-prodcons", "error": "heapmap -a mine: not a heap strategy"}]
    text = open(page.write(str(tmp_path), "mine", {}, ts, mt, None, 2, maps)).read()
    assert "![](heapmap-mine.png)" in text and "17 moves to the global heap" in text
    assert "blowup-prodcons: not drawn: heapmap -a mine: not a heap strategy" in text
    assert "  - heap 3: thread 1's heap — counts 2.4 MiB" in text      # each heap's role
    assert "named with the thread that uses it" in text and "Full does not always mean " \
        "used" in text                                              # the caption says so


def test_the_grade_sweep_is_a_valid_sweep():
    text = G.sweep_text(["hoard"], [("python3", "/tmp/p.trace")], "grade-hoard")
    sw = sweepmod.Sweep(text, "<grade>", strategies=build.listed_strategies())
    runs = sw.expand()
    replays = [r for r in runs if r["workload"] == "replay"]
    assert {r["variant"] for r in replays} == {"hoard", "glibc"}
    assert {r["variant"] for r in runs if r["workload"] == "larson"} == {"hoard", "serial"}


def test_the_shipped_traces_are_ten_or_more_and_small():
    found = traces.shipped()
    assert len(found) >= 10, found
    assert sum(os.path.getsize(p) for _, p in found) <= traces.CAP_BYTES
    assert any(traces.header(p)["threads"] > 1 for _, p in found)     # a multithreaded one
    for name, p in found:
        assert name in traces.RECIPES, name


@needs_built("harness/hlbench", "src/libhoardlab.so")
def test_a_shipped_trace_replays_all_its_events(tmp_path):
    name, path = traces.shipped()[0]
    plain = traces.unpack(path, str(tmp_path))
    env = dict(os.environ, LD_PRELOAD=os.path.join(BDIR, "src", "libhoardlab.so"),
               HOARD_STRATEGY="serial")
    out = subprocess.run([os.path.join(BDIR, "harness", "hlbench"), "replay", "--trace", plain],
                         env=env, capture_output=True, text=True, check=True).stdout
    rec = json.loads(out.strip().splitlines()[-1])
    assert rec["extra"]["events"] == traces.header(path)["records"]
    assert rec["extra"]["replay_a"] >= rec["extra"]["trace_peak_requested"] > 0


def test_cut_keeps_a_window_and_says_how_many(tmp_path):
    src = tmp_path / "t.trace"
    recs = ["a %d 0 %x 16 0 16\n" % (i, 0x1000 + i * 16) for i in range(50)] + \
        ["a %d 1 %x 32 0 32\n" % (100 + i, 0x9000 + i * 32) for i in range(50)]
    src.write_text("# hoardlab trace 1\n# pid 7 threads 2 records 100 dropped 0\n"
                   "# op t_ns tid id size align usable\n" + "".join(recs))
    n, tids = traces.cut(str(src), str(tmp_path / "t.trace.xz"), events=20)
    assert (n, tids) == (20, 2)        # starts 2 records before thread 1's first
    assert traces.header(str(tmp_path / "t.trace.xz")) == {"pid": 0, "threads": 2,
                                                           "records": 20, "dropped": 0}


@needs_built("src/libhoardlab.so")
def test_stats_reach_stderr_under_sort_and_a_file_gets_a_json_line_per_process(tmp_path):
    lib = os.path.join(BDIR, "src", "libhoardlab.so")
    p = subprocess.run(["sort", os.path.join(REPO, "meson_options.txt")], capture_output=True,
                       text=True, env=dict(os.environ, LD_PRELOAD=lib, HOARD_STATS="stderr"))
    assert json.loads(p.stderr.strip().splitlines()[-1])["strategy"] == "hoard"
    out = tmp_path / "stats.json"
    subprocess.run(["sh", "-c", "ls > /dev/null; ls > /dev/null; true"], check=True,
                   env=dict(os.environ, LD_PRELOAD=lib, HOARD_STATS=str(out)))
    lines = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert len(lines) >= 2 and len({x["pid"] for x in lines}) == len(lines)     # both ls


def test_the_correctness_log_is_read_by_test_name(tmp_path):
    log = tmp_path / "grade.json"
    log.write_text(json.dumps({"name": "hoardlab:unit+api / api-mine", "result": "OK",
                               "stdout": ""}) + "\n" +
                   json.dumps({"name": "hoardlab:reliability / rel-fork-mine", "result": "FAIL",
                               "stdout": "x\n[  ERROR   ] --- 0x1 != 0x2\n"}) + "\n")
    got = correct.read_log(str(log))
    assert got["api-mine"][0] == "OK"
    assert correct.first_message(got["rel-fork-mine"][1]) == "[  ERROR   ] --- 0x1 != 0x2"


@pytest.mark.skipif(not (shutil.which("meson") and shutil.which("ninja")),
                    reason="meson and ninja are needed to build (tools/install-deps)")
def test_new_then_run_works_in_a_copy_of_the_tree(tmp_path):
    """As a student would, in a copy of the tree (build/ untouched): `new`, then `run -a` the
    new strategy, its test in `test --strategy --list`, then `new --remove`. About two
    minutes on 2 cores."""
    root = tmp_path / "hoardlab"
    for f in source_files():
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.join(REPO, f), root / f)
    tool = [sys.executable, str(root / "tools" / "hoardlab")]
    env = dict(os.environ)
    env.pop("HOARDLAB_BUILD_DIR", None)
    p = subprocess.run(tool + ["new", "mine", "--from", "hoard"], cwd=root, env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    p = subprocess.run(tool + ["run", "threadtest", "-a", "mine", "-t", "2", "--scale", "0.01"],
                       cwd=root, env=env, capture_output=True, text=True)
    assert p.returncode == 0 and "threadtest under mine" in p.stdout, p.stderr[-2000:]
    row = [ln for ln in (root / "docs" / "config.md").read_text().splitlines()
           if ln.startswith("| `strategy` |")][0]
    assert row.split("|")[4].split(",")[-1].strip() == "mine"
    p = subprocess.run(tool + ["test", "--strategy", "mine", "--list", "--no-deps"], cwd=root,
                       env=env, capture_output=True, text=True)
    assert "lab-mine" in p.stdout.split() and "api-mine" in p.stdout.split(), p.stderr[-2000:]
    # and undone: the files and the entry gone, the build reconfigured without it
    p = subprocess.run(tool + ["new", "--remove", "mine"], cwd=root, env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    assert not (root / "src" / "strategies" / "mine.c").exists()
    p = subprocess.run([str(root / "build" / "src" / "hlconfig"), "--strategies"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and "mine" not in p.stdout.split(), p.stdout + p.stderr


def test_a_kind_takes_its_tests_by_name_and_by_prefix():
    registered = {"mt-hoard-thread", "mt-hoard-hash", "mt-hoard2026-cpu", "rel-stress-hoard"}
    assert correct.matching("mt-hoard-*", registered) == ["mt-hoard-hash", "mt-hoard-thread"]
    assert correct.matching("rel-stress-hoard", registered) == ["rel-stress-hoard"]
    assert correct.matching("mt-hoard", registered) == []


# --- a grade of an incorrect strategy (issue 48) -----------------------------------------------

CRASHED = {"conformance": {"status": "fail", "tests": 2, "names": ["api-mine", "lab-mine"],
                           "message": "api-mine (FAIL): killed by SIGSEGV"},
           "fuzzer": {"status": "not run", "tests": 0, "message": "--quick"}}


def test_a_grade_page_of_an_incorrect_strategy_says_so_at_the_top_and_gives_no_score(tmp_path):
    rows = rows_of("mine", "a", 500, 1000, 50, 100)
    ts = G.trace_scores(rows, "mine")
    mt = {"taxonomy": None, "threads": 2, "vs_serial": {"threadtest": 1.5}, "m": 1.5, "q": 0.5}
    cmd = "HOARD_CHECKS=on HOARD_STRATEGY=mine LD_PRELOAD=build/src/libhoardlab.so hlbench x"
    text = open(page.write(str(tmp_path), "mine", CRASHED, ts, mt, None, 2, None,
                           "callgrind's run of hlcost crashed: SIGSEGV (hlcost)", cmd)).read()
    head = text.split("## 1. Correctness")[0]
    assert "Correctness failed — measurements below are void" in head
    assert "killed by SIGSEGV" in head and "`%s`" % cmd in head
    for score in ("P = 0.6 x", "Q = the mean", "M = throughput"):
        assert score not in text
    assert "crashed: SIGSEGV" in text and "valgrind missing" not in text
    assert "| fuzzer | – | not run | --quick |" in text
    board = open(page.leaderboard(str(tmp_path), [("mine", CRASHED, ts, mt, None)])).read()
    assert "| mine | fail: conformance | 0.50 | 0.50 | void | void | void |" in board


def test_a_skipped_test_is_not_run_and_a_crash_or_a_timeout_says_so(tmp_path):
    log = tmp_path / "grade.json"
    log.write_text("\n".join(json.dumps(r) for r in [
        {"name": "hoardlab:rel-fuzz / rel-fuzz-malloc-corpus-mine", "result": "SKIP",
         "stdout": "", "returncode": 77},
        {"name": "hoardlab:unit / api-mine", "result": "OK", "stdout": "", "returncode": 0},
        {"name": "hoardlab:reliability / rel-stress-mine", "result": "FAIL", "stdout": "",
         "returncode": -11},
        {"name": "hoardlab:reliability / rel-fork-mine", "result": "TIMEOUT", "stdout": "",
         "returncode": -15},
        {"name": "hoardlab:reliability / rel-churn-mine", "result": "FAIL",
         "stdout": "run.sh: line 3: 17 Aborted", "returncode": 134}]) + "\n")
    got = correct.read_log(str(log))
    assert correct.status_of(got, ["rel-fuzz-malloc-corpus-mine"])[0] == "not run"
    assert correct.status_of(got, ["api-mine", "rel-fuzz-malloc-corpus-mine"])[0] == "not run"
    assert correct.status_of(got, ["api-mine"]) == ("pass", "")
    assert correct.status_of(got, ["rel-stress-mine"]) == (
        "fail", "rel-stress-mine (FAIL): killed by SIGSEGV")
    assert "timed out (a lock not released?" in correct.status_of(got, ["rel-fork-mine"])[1]
    assert "killed by SIGABRT" in correct.status_of(got, ["rel-churn-mine"])[1]
    assert correct.status_of(got, ["rel-x-mine"])[0] == "fail"          # asked, never ran


def test_the_fuzzer_replay_runs_before_timeouts_stop_meson(tmp_path, monkeypatch):
    """A strategy that hands out a block twice sends its conformance tests into timeouts, and
    meson is stopped after two: the corpus replay, which names the block in seconds, runs in a
    meson test of its own first, so its row shows its own FAIL, not 'meson stopped before it'."""
    names = ["api-mine", "api-mine-uncounted", "lab-mine", "rel-stress-mine",
             "rel-fuzz-malloc-corpus-mine", "rel-asan-stress-mine"]
    monkeypatch.setattr(correct, "introspect_tests", lambda b: [
        {"name": n, "env": {"HOARD_STRATEGY": "mine"}, "cmd": ["/t"]} for n in names])
    monkeypatch.setattr(correct.subprocess, "run", lambda *a, **k: ninja_ok())
    (tmp_path / "meson-logs").mkdir()

    def fake_meson(argv, echo=True):      # runs the named tests in order; stops at 2 timeouts
        logbase = argv[argv.index("--logbase") + 1]
        lines, timeouts = [], 0
        for n in sorted(a for a in argv if a in names):
            if n.startswith("rel-fuzz"):
                r = ("FAIL", "malloc(40) = 0x10 overlaps live block 0x10", 1)
            else:
                r = ("TIMEOUT", "", -15)
                timeouts += 1
            lines.append({"name": "hoardlab:x / " + n, "result": r[0], "stdout": r[1],
                          "returncode": r[2]})
            if timeouts >= 2:
                break
        (tmp_path / "meson-logs" / (logbase + ".json")).write_text(
            "\n".join(json.dumps(x) for x in lines) + "\n")
        return 1, "", []
    monkeypatch.setattr(correct, "meson_stopping", fake_meson)
    got = correct.run(str(tmp_path), "mine", quick=True, short=True)
    assert got["fuzzer"]["status"] == "fail"
    assert "overlaps live block" in got["fuzzer"]["message"], got["fuzzer"]
    assert got["conformance"]["status"] == "fail" and got["tsan"]["status"] == "not registered"
    assert got["asan"] == {"status": "not run", "tests": 1, "message": "--quick",
                           "names": ["rel-asan-stress-mine"]}


def ninja_ok():
    return subprocess.CompletedProcess([], 0)


def test_cost_says_why_it_is_missing():
    from hoardlab_lib.lab import gradecmd
    assert gradecmd.cost_reason("callgrind failed (exit -11): /b/harness/hlcost 8 local\n"
                                "==1== Process terminating with default action of signal 11"
                                ) == "callgrind's run of hlcost crashed: SIGSEGV (hlcost)"
    assert gradecmd.cost_reason("grade needs valgrind (Debian package valgrind; run "
                                "tools/install-deps)").startswith("grade needs valgrind")


def grade_args(tmp_path, **kw):
    import argparse
    return argparse.Namespace(**dict(dict(
        from_dir=None, build_dir=str(tmp_path / "b"), no_build=True, all=False, name="mine",
        quick=True, no_tests=False, no_cost=False, results=str(tmp_path / "results")), **kw))


def stub_grade(monkeypatch, smoke_seen, corr):
    from hoardlab_lib.lab import gradecmd
    called = []
    monkeypatch.setattr(gradecmd, "hlconfig_strategies", lambda b: [("mine", "x")])
    monkeypatch.setattr(gradecmd.smoke, "run", lambda b, s: smoke_seen)
    monkeypatch.setattr(gradecmd.correct, "run", lambda b, s, quick, short: dict(
        corr, shortened={"status": "pass" if short else "fail", "message": "", "tests": 1}))
    for name, mod in (("measure", G), ("costs", gradecmd), ("heap_maps", gradecmd)):
        monkeypatch.setattr(mod, name, lambda *a, _n=name, **k: called.append(_n) or 1 / 0)
    return gradecmd, called


def test_a_grade_of_an_incorrect_strategy_exits_nonzero_and_measures_nothing(
        tmp_path, monkeypatch):
    gradecmd, called = stub_grade(monkeypatch, None, CRASHED)
    assert gradecmd.cmd_grade(grade_args(tmp_path)) == 1
    assert called == []
    (out,) = os.listdir(tmp_path / "results")
    text = (tmp_path / "results" / out / "grade-mine.md").read_text()
    assert "Correctness failed — measurements below are void" in text
    assert "Not measured: correctness failed" in text
    # --from writes the same page again and says the same with its exit status
    assert gradecmd.cmd_grade(grade_args(tmp_path, from_dir=str(tmp_path / "results" / out))) == 1


def test_a_hang_in_the_smoke_run_stops_the_grade_at_once(tmp_path, monkeypatch):
    hang = {"kind": "hang", "line": "mine appears to deadlock; a lock not released? (...)",
            "command": "HOARD_CHECKS=on ..."}
    gradecmd, called = stub_grade(monkeypatch, hang, None)
    assert gradecmd.cmd_grade(grade_args(tmp_path)) == 1     # a failure; 2 is a wrong argument
    assert called == []
    (out,) = os.listdir(tmp_path / "results")      # its page, headed as any failed grade's
    text = (tmp_path / "results" / out / "grade-mine.md").read_text()
    assert "Correctness failed — measurements below are void" in text.split("## 1.")[0]
    assert "mine appears to deadlock" in text and "`HOARD_CHECKS=on ...`" in text
    assert "| fuzzer | – | not run | the smoke run hung: not waited for |" in text


def test_a_crash_in_the_smoke_run_is_a_failed_row_and_the_command_to_see_it(tmp_path,
                                                                              monkeypatch):
    seen = {"kind": "checker", "line": "mine: hoardlab handed out 0x1000 twice without a free "
            "in between (strategy mine); aborting (hlbench threadtest -t 2)",
            "command": "HOARD_CHECKS=on HOARD_STRATEGY=mine hlbench threadtest"}
    ok = {"conformance": {"status": "pass", "tests": 1, "message": "", "names": ["api-mine"]}}
    gradecmd, called = stub_grade(monkeypatch, seen, ok)
    assert gradecmd.cmd_grade(grade_args(tmp_path)) == 1 and called == []
    (out,) = os.listdir(tmp_path / "results")
    text = (tmp_path / "results" / out / "grade-mine.md").read_text()
    head = text.split("## 1. Correctness")[0]
    assert "handed out 0x1000 twice" in head and "`%s`" % seen["command"] in head
    assert "| shortened | – | pass |" in text      # its tests ran with timeouts cut short
    assert "nothing was measured" in head


def mt_rows(mine, serial, busy=()):
    out = []
    for wl in G.MT_WORKLOADS:
        for i, (x, y) in enumerate(zip(mine, serial)):
            base = {"status": "ok", "workload": wl, "workload_label": wl, "threads": 2,
                    "knobs": "", "alloc_kind": "hoardlab"}
            out += [dict(base, variant="mine", throughput=x, **{"load.busy": int(i in busy)}),
                    dict(base, variant="serial", throughput=y, **{"load.busy": 0})]
    return out


def test_m_comes_with_its_interval_and_the_busy_caveat(monkeypatch):
    monkeypatch.setattr(G.V, "taxonomy", lambda *a, **k: [])
    mt = G.mt_scores(mt_rows([190, 200, 210], [95, 100, 105]), [], "mine", 2)
    assert mt["m"] == pytest.approx(2.0)
    sp = mt["m_spread"]
    assert sp.lo < 2.0 < sp.hi and mt["busy"] == 0 and mt["runs"] == 18
    line = page.m_line(mt)[0]
    assert "**%s**" % G.V.interval_text(sp) in line and "busy" not in line
    busy = G.mt_scores(mt_rows([190, 200, 210], [95, 100, 105], busy=(0,)), [], "mine", 2)
    line = page.m_line(busy)[0]
    assert "the machine was busy" in line and "3 of the 18 runs" in line and "**2.00" not in line
    once = G.mt_scores(mt_rows([200], [100]), [], "mine", 2)
    line = page.m_line(once)[0]
    assert "**" not in line and "no interval" in line


# --- new --remove; lab.md and --help agree ------------------------------------------------------

def test_new_remove_undoes_new(tmp_path):
    repo = tree_copy(tmp_path)
    before = open(os.path.join(repo, "meson_options.txt")).read()
    scaffold.new("mine", "hoard", BDIR, build=False, repo=repo)
    gone = scaffold.remove("mine", BDIR, build=False, repo=repo)
    assert sorted(os.path.relpath(f, repo) for f in gone) == [
        "meson_options.txt", "src/strategies/mine.c", "tests/strategies/lab_mine.c"]
    assert open(os.path.join(repo, "meson_options.txt")).read() == before
    # files deleted by hand, the name still listed: the entry goes
    scaffold.new("mine", "serial", BDIR, build=False, repo=repo)
    os.remove(os.path.join(repo, "src", "strategies", "mine.c"))
    scaffold.remove("mine", BDIR, build=False, repo=repo)
    assert open(os.path.join(repo, "meson_options.txt")).read() == before


@pytest.mark.parametrize("name, why", [("serial", "shipped strategy"), ("nope", "no strategy")])
def test_new_remove_refuses_a_shipped_or_unknown_name(tmp_path, name, why):
    repo = tree_copy(tmp_path)
    scaffold.new("mine", "serial", BDIR, build=False, repo=repo)
    with pytest.raises(ToolError, match=why) as e:
        scaffold.remove(name, BDIR, build=False, repo=repo)
    assert "made by `new`: mine" in str(e.value)
    assert os.path.exists(os.path.join(repo, "src", "strategies", "serial.c"))


def lab_section(n):
    text = open(os.path.join(REPO, "docs", "lab.md")).read()
    return text.split("\n## %d. " % n)[1].split("\n## ")[0]


def test_lab_md_and_new_help_agree_on_the_templates():
    from hoardlab_lib import cli
    templates = {t for t, _ in scaffold.FROM.values()}
    help_text = " ".join(cli.parser()._subparsers._group_actions[0].choices["new"]
                         .format_help().split())
    one = " ".join(lab_section(1).split())
    assert len(templates) == 2 and "two templates" in help_text and "two templates" in one
    for origin in scaffold.FROM:
        assert "`--from %s`" % origin in one or "--from %s" % origin in one, origin
        assert origin in help_text
    assert "new --remove" in one and "--remove" in help_text


def test_lab_md_defines_q_and_m_where_the_grade_is_described():
    three = " ".join(lab_section(3).split())
    assert "Q = " in three and "M = " in three and "not run" in three
    assert "correctness failed — measurements below are void" in three.lower()


def test_an_interrupted_grade_sweep_stops_the_grade_and_leaves_no_temporary_folder(
        tmp_path, monkeypatch):
    """The sweep keeps what it had on SIGINT (or SIGTERM, made one by runner.interruptible);
    the grade then goes no further, and its unpacked traces are gone."""
    made = []

    def interrupted_sweep(path, bdir, out, quiet):
        made.append(os.path.dirname(open(path).read().split("trace = ")[1].split()[0]))
        with open(os.path.join(out, "meta.json"), "w") as f:
            json.dump({"interrupted": True}, f)
    monkeypatch.setattr(G.sweeps, "run_sweep", interrupted_sweep)
    with pytest.raises(KeyboardInterrupt, match="interrupted"):
        G.measure("/b", ["mine"], root=str(tmp_path), quick=True,
                  traces=traces.shipped()[:1])
    assert made and not os.path.exists(made[0])

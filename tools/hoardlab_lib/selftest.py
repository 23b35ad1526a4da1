"""`hoardlab test`: everything a fresh Debian 12 machine needs, then every test.

install-deps -> meson setup + compile -> meson test (the C suites) -> pytest tests/tools,
then the skipped tests by name and one closing line `tests: N passed, N failed, N skipped
(SUITE)` (totals of both; SUITE: the default suite or the full one); non-zero exit on any
failure, including a failed install or build (each counted as one failure).

The default suite runs the knob values by the reliability suites' covering design
(tests/reliability/covering.py); `--full` sets the meson option full_suite (every test under
every knob variant, the product the suite was before) and the default sets it back, so a
build directory never runs one while the summary names the other."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from . import runkit, smoke
from .build import do_build, install_deps, sync_strategies
from .common import REPO, ToolError


def meson_counts(text):
    """(passed, failed) from meson test's closing summary."""
    def n(label):
        m = re.search(r"^%s:\s+(\d+)" % re.escape(label), text, re.M)
        return int(m.group(1)) if m else 0
    if not re.search(r"^Ok:\s+\d+", text, re.M):
        return None
    return n("Ok") + n("Expected Fail"), n("Fail") + n("Unexpected Pass") + n("Timeout")


SKIPPED_LINE = re.compile(r"^\s*\d+/\d+\s+\S+\s+/\s+(\S+)\s+SKIP\s", re.M)


def meson_skipped(text):
    """The names of the tests meson test's output reports as SKIP (an exit status of 77), and
    the count its closing summary gives (`Skipped:`); the count is the summary's when it has
    one, else the number of names."""
    names = SKIPPED_LINE.findall(text)
    m = re.search(r"^Skipped:\s+(\d+)", text, re.M)
    return (int(m.group(1)) if m else len(names)), names


def junit_skipped(path):
    """The names (classname::name) of the skipped test cases of a pytest JUnit XML file."""
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.find("skipped") is not None:
            out.append("%s::%s" % (case.get("classname", ""), case.get("name", "")))
    return out


def full_suite_option(bdir):
    """The build directory's full_suite option (True/False), or None when it has none."""
    path = os.path.join(bdir, "meson-info", "intro-buildoptions.json")
    try:
        with open(path) as f:
            opts = json.load(f)
    except (OSError, ValueError):
        return None
    for o in opts:
        if o.get("name") == "full_suite":
            return bool(o.get("value"))
    return None


def set_full_suite(bdir, full):
    """`meson configure BDIR -Dfull_suite=true|false` when the build has the other value."""
    if full_suite_option(bdir) == full:
        return
    value = "true" if full else "false"
    print("== meson configure %s -Dfull_suite=%s" % (bdir, value), flush=True)
    p = subprocess.run(["meson", "configure", bdir, "-Dfull_suite=" + value], cwd=REPO,
                       stdout=subprocess.DEVNULL)
    if p.returncode != 0:
        raise ToolError("meson configure %s -Dfull_suite=%s failed (exit %d)"
                        % (bdir, value, p.returncode))


def junit_counts(path):
    """(passed, failed, skipped) from a pytest JUnit XML file."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = fails = skipped = 0
    for s in suites:
        tests += int(s.get("tests", 0))
        fails += int(s.get("failures", 0)) + int(s.get("errors", 0))
        skipped += int(s.get("skipped", 0))
    return tests - fails - skipped, fails, skipped


def run_tee(argv, env=None):
    """Run, echoing output, and return (exit code, output)."""
    p = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace")
    out = []
    for line in p.stdout:
        sys.stdout.write(line)
        out.append(line)
    p.wait()
    sys.stdout.flush()
    return p.returncode, "".join(out)


def main(bdir, jobs=None, skip_deps=False, full=False):
    passed = failed = skipped = 0
    skipped_names = []
    notes = []
    which = "full suite" if full else "default suite; --full runs every knob variant"
    if not skip_deps:
        print("== tools/install-deps", flush=True)
        if install_deps() != 0:
            failed += 1
            notes.append("install-deps failed")
    print("== build %s" % bdir, flush=True)
    built = True
    try:
        do_build(bdir, jobs)
        set_full_suite(bdir, full)
    except ToolError as e:
        print("hoardlab: %s" % e, flush=True)
        failed += 1
        built = False
        notes.append("build failed")
    if built:
        print("== meson test -C %s" % bdir, flush=True)
        rc, out = run_tee(["meson", "test", "-C", bdir, "--print-errorlogs"] +
                          (["--num-processes", str(jobs)] if jobs else []))
        c = meson_counts(out)
        if c is None:
            failed += 1
            notes.append("meson test printed no summary (exit %d)" % rc)
        else:
            passed += c[0]
            failed += c[1]
            n, names = meson_skipped(out)
            skipped += n
            skipped_names += names
            if rc != 0 and c[1] == 0:
                failed += 1
                notes.append("meson test exit %d" % rc)
    print("== pytest tests/tools", flush=True)
    env = dict(os.environ, HOARDLAB_BUILD_DIR=bdir, PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "pytest.xml")
        rc, out = run_tee([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           os.path.join(REPO, "tests", "tools"), "--junitxml", xml], env=env)
        if os.path.exists(xml):
            pp, pf, ps = junit_counts(xml)
            passed += pp
            failed += pf
            skipped += ps
            skipped_names += junit_skipped(xml)
            if rc not in (0, 1) and pf == 0:
                failed += 1
                notes.append("pytest exit %d" % rc)
        else:
            failed += 1
            notes.append("pytest did not run (exit %d)" % rc)
    for n in notes:
        print("note: %s" % n)
    if skipped_names:
        print("skipped (%d): %s" % (len(skipped_names), ", ".join(skipped_names)))
    print("tests: %d passed, %d failed, %d skipped (%s)" % (passed, failed, skipped, which),
          flush=True)
    return 0 if failed == 0 else 1


# --- one strategy's tests (`hoardlab test --strategy NAME`) -----------------------------------

def introspect_tests(bdir):
    """meson's test list with each test's environment and command line."""
    p = subprocess.run(["meson", "introspect", "--tests", bdir], cwd=REPO, capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise ToolError("meson introspect --tests %s failed: %s" % (bdir, p.stderr.strip()[-300:]))
    return json.loads(p.stdout)


def tests_of(tests, name):
    """The names of the tests that run under strategy `name`: meson sets HOARD_STRATEGY=name
    (the per-strategy suites, the reliability runs, the fuzzer) or passes name as an argument
    (the preloaded real programs). Tests that run the default strategy are not its."""
    out = []
    for t in tests:
        env = t.get("env") or {}
        if env.get("HOARD_STRATEGY") == name or name in (t.get("cmd") or [])[1:]:
            out.append(t["name"])
    return out


TIMEOUTS_TO_STOP = 2     # test --strategy: tests timed out before the rest are not waited for


def strategy_tests(bdir, name, jobs=None, list_only=False):
    if list_only and os.path.exists(os.path.join(bdir, "build.ninja")):
        sync_strategies(bdir)           # the list needs the configuration, not the binaries
    else:
        do_build(bdir, jobs)
    names = tests_of(introspect_tests(bdir), name)
    if not names:
        raise ToolError("test --strategy %s: no test runs under it; is it compiled in? "
                        "(hoardlab strategies)" % name)
    if list_only:
        print("\n".join(names))
        return 0
    with runkit.interruptible():
        print("== smoke run of %s (a few seconds, checks = on)" % name, flush=True)
        seen = smoke.run(bdir, name)
        if seen:
            print("%s\n  to see it again: %s" % (seen["line"], seen["command"]), flush=True)
            for c in cause_commands(seen, name, names, bdir):
                print("  to see the cause: %s" % c, flush=True)
            print("tests of %s: not run (the smoke run failed), 1 failed" % name, flush=True)
            return 1
        print("== meson test -C %s: %d tests of %s" % (bdir, len(names), name), flush=True)
        logbase = "strategy-" + name
        log = os.path.join(bdir, "meson-logs", logbase + ".json")
        if os.path.exists(log):
            os.remove(log)
        rc, out, timeouts = meson_stopping(["meson", "test", "-C", bdir, "--print-errorlogs",
                                            "--logbase", logbase] +
                                           (["--num-processes", str(jobs)] if jobs else []) +
                                           names)
    c = meson_counts(out) or (0, 1)
    if len(timeouts) >= TIMEOUTS_TO_STOP:
        print("%s appears to deadlock; a lock not released? %s timed out, so the other tests "
              "were not waited for" % (name, " and ".join(timeouts)), flush=True)
        c = (c[0], max(c[1], len(timeouts)))
    print("tests of %s: %d passed, %d failed" % (name, c[0], c[1]), flush=True)
    failed = failed_tests(read_log(log) if os.path.exists(log) else {}, out)
    for line in failed:
        print("  failed: %s" % line, flush=True)
    if any("killed by SIG" in line for line in failed):
        for c in cause_commands({"kind": "crash"}, name, names, bdir):
            print("  to see the cause: %s" % c, flush=True)
    return 0 if rc == 0 and c[1] == 0 else 1


CAUSES = (("rel-asan-stress-%s", "AddressSanitizer names the file and line of a bad access"),
          ("rel-tsan-stress-%s", "ThreadSanitizer names the two lines of a race: the smoke "
           "runs have 2 threads"))


def cause_commands(seen, strategy, registered, bdir):
    """For a crash of a smoke run (which the checker's run repeats without a word), the
    commands whose builds name its cause: the ASan and TSan stress tests of the strategy."""
    if seen["kind"] not in ("crash", "failed"):
        return []
    return ["meson test -C %s --print-errorlogs %s   (%s)" % (bdir, t % strategy, why_)
            for t, why_ in CAUSES if t % strategy in registered]


FAILED_LINE = re.compile(r"^\s*\d+/\d+\s+(?:\S+ / )?(\S+)\s+(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)\b",
                         re.M)


def failed_tests(results, out=""):
    """["NAME (RESULT): why"] of the tests that did not pass, by name: from meson's JSON log
    (results, read_log's), else from its console lines (out)."""
    bad = [(n, r) for n, r in results.items() if r[0] not in ("OK", "SKIP", "EXPECTEDFAIL")]
    if not bad:
        return ["%s (%s)" % m for m in FAILED_LINE.findall(out or "")]
    return ["%s (%s): %s" % (n, r[0], why(*(tuple(r) + (None,))[:3])) for n, r in bad]


TIMEOUT_LINE = re.compile(r"^\s*\d+/\d+\s+(?:\S+ / )?(\S+)\s+TIMEOUT\b")


def meson_stopping(argv, stop_after=TIMEOUTS_TO_STOP, echo=True):
    """Run meson test, echoing its output (echo), in a process group of its own; after `stop_after`
    tests timed out, or on an interruption, end it (SIGTERM: meson ends the tests it runs).
    Returns (exit code, output, [names of the tests timed out])."""
    p = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace", start_new_session=True)
    out, timeouts = [], []
    try:
        for line in p.stdout:
            if echo:
                sys.stdout.write(line)
            out.append(line)
            m = TIMEOUT_LINE.match(line)
            if m:
                timeouts.append(m.group(1))
                if len(timeouts) == stop_after:
                    os.killpg(p.pid, signal.SIGTERM)    # meson cancels the rest, summarises
        p.wait()
    except BaseException:
        runkit.stop(p)
        raise
    sys.stdout.flush()
    return p.returncode, "".join(out), timeouts


# --- what a failed test says (test --strategy, grade) -------------------------------------------

def first_message(text, limit=300):
    """The first line of a failed test's output that says what failed."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    for key in ("ERROR: ", "FAIL: ", "[  ERROR", "[  FAILED", "FAIL", "error", "Error", "ERROR",
                "assert", "ThreadSanitizer", "AddressSanitizer", "hoardlab:", "corrupt",
                "mismatch"):
        for ln in lines:
            if key in ln:
                return ln[:limit]
    return (lines[-1] if lines else "no output")[:limit]


def read_log(path):
    """{test name: (result, output, exit code)} from meson's JSON lines test log."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                name = r["name"].rpartition(" / ")[2]      # "project:suites / name"
                out[name] = (r.get("result"), (r.get("stdout") or "") + (r.get("stderr") or ""),
                             r.get("returncode"))
    return out


def why(result, text, code):
    """What a failed test's log shows: the signal that killed it (a crash is a SIGSEGV, not
    'no output'), a timeout, else its first line that says what failed."""
    sig = runkit.signal_name(code) if isinstance(code, int) else None
    if sig is None and isinstance(code, int) and 128 < code < 128 + 65:
        sig = runkit.signal_name(128 - code)     # a shell's child killed: exit 128 + signal
    first = first_message(text) if (text or "").strip() else ""
    if result == "TIMEOUT":
        return "timed out (a lock not released? a loop in a damaged list?)" + (
            ": " + first if first else "")
    if sig:
        return "killed by %s" % sig + (": " + first if first else "")
    return first or "no output (exit %s)" % code

"""A grade's correctness part: the strategy's own registered tests, by kind, run through
`meson test` (its log of this run kept apart with --logbase, so a grade does not overwrite
another meson test's log), each kind pass or fail with the first failure's message.

The kinds are the per-strategy tests every strategy gets (tests/unit, tests/strategies,
tests/reliability); a kind with no test registered for the strategy reads "not registered"."""
import os
import subprocess

from ..common import REPO, ToolError
from ..selftest import (first_message, introspect_tests, meson_stopping, read_log, tests_of,
                        why)

# (kind, test names with {s} for the strategy; a name ending in * stands for every test whose
# name starts so, e.g. mt-hoard-thread, mt-hoard-hash). Every test `hoardlab test --strategy`
# runs (selftest.tests_of) belongs to the first kind that names it, "other" taking the rest,
# so a grade runs what the tests run; the fuzzer replays its saved corpus under the strategy
# against the model of the malloc API, "fuzzing" is the long fuzzing run.
KINDS = [
    ("conformance", ["api-{s}", "api-{s}-uncounted", "rel-conformance-{s}*", "lab-{s}"]),
    ("stress", ["rel-stress-{s}*", "rel-stress-uncounted-{s}", "mt-{s}", "mt-{s}-*"]),
    ("fork", ["rel-fork-{s}*"]),
    ("churn", ["rel-churn-{s}*", "churn-{s}-*"]),
    ("faults", ["rel-faults-*"]),
    ("checks", ["rel-checks-*", "rel-stress-checks-*", "rel-corners-*"]),
    ("tsan", ["rel-tsan-*", "tsan-*"]),
    ("fuzzer", ["rel-fuzz-malloc-corpus-{s}"]),
    ("fuzzing", ["rel-fuzz-*"]),
    ("asan", ["rel-asan-*"]),
    ("programs", ["rel-prog-*", "preload-*"]),
    ("other", ["*"]),
]


def matching(pattern, registered):
    if pattern.endswith("*"):
        return sorted(n for n in registered if n.startswith(pattern[:-1]))
    return [pattern] if pattern in registered else []


QUICK_SKIPS = ("fuzzing", "asan", "programs")   # --quick: the long fuzzing run and the suites
# that build a core of their own (ASan) or run real programs; the page and the console name
# each test so left out, and the grade reads "incomplete", never "pass"


def plan(bdir, strategy, quick=False):
    """({kind: [test names registered for the strategy]}, {name: meson's test entry}, {kind:
    [names --quick leaves out]}); every test of the strategy is in one kind."""
    tests = {t["name"]: t for t in introspect_tests(bdir)}
    left = set(tests_of(tests.values(), strategy))
    out, skipped = {}, {}
    for kind, names in KINDS:
        got = sorted({m for n in names for m in matching(n.format(s=strategy), left)})
        left -= set(got)
        if quick and kind in QUICK_SKIPS:
            out[kind] = None
            skipped[kind] = got
        else:
            out[kind] = got
    return out, tests, skipped


def targets_of(bdir, entries):
    """The build's files the tests run (their programs and the programs in their arguments),
    so that only those are built, not every test of the tree as `meson test` would."""
    out = set()
    for t in entries:
        for word in t.get("cmd") or []:
            if word.startswith(bdir + os.sep):
                word = os.path.relpath(word, bdir)
            elif word.startswith("/") or "/" not in word or set("=|") & set(word):
                continue
            if not os.path.normpath(word).startswith(".."):     # a source file: not built
                out.add(word)           # a program, or a custom target's output
    return sorted(out)


def status_of(results, names):
    """fail (a test failed, timed out or did not run when asked), not run (a test skipped:
    meson's SKIP, exit 77, is never a pass), or pass; with the first such test's line."""
    bad = [n for n in names if (results.get(n) or ("MISSING",))[0] not in ("OK", "SKIP")]
    bad.sort(key=lambda n: n not in results)       # one that ran and failed first
    if bad:
        if bad[0] not in results:
            return "fail", "%s: not run (meson stopped before it)" % bad[0]
        res, text, code = (tuple(results[bad[0]]) + (None,))[:3]
        return "fail", "%s (%s): %s" % (bad[0], res, why(res, text, code))
    skipped = [n for n in names if results[n][0] == "SKIP"]
    if skipped:
        return "not run", "%s skipped (meson's SKIP, exit 77)" % ", ".join(skipped)
    return "pass", ""


def failures(results, names):
    """["NAME (RESULT): why"] of every test of names that failed, timed out or did not run."""
    out = []
    for n in names:
        res, text, code = (tuple(results.get(n) or ("not run",)) + ("", None))[:3]
        if res not in ("OK", "SKIP"):
            out.append("%s (%s)%s" % (n, res, ": " + why(res, text, code) if n in results
                                      else ": meson stopped before it"))
    return out


SHORT_TIMEOUTS = 0.2     # meson's --timeout-multiplier once the smoke run found a fault
FIRST = ("fuzzer",)      # kinds run in a meson test of their own before the rest: the corpus
                         # replay takes seconds and names a block handed out twice, so it has
                         # its say before timeouts of the other tests stop meson


def batches(kinds):
    """The test names in the order of their meson runs: FIRST's kinds, then the rest."""
    first = sorted({n for k in FIRST for n in kinds.get(k) or []})
    rest = sorted({n for ns in kinds.values() if ns for n in ns} - set(first))
    return [b for b in (first, rest) if b]


def run(bdir, strategy, quick=False, jobs=2, short=False):
    """{kind: {"status": pass|fail|not run|not registered, "tests": n, "message": ...}}.
    short: the smoke run already failed, so the verdict is known and the tests only say
    more: their timeouts cut to SHORT_TIMEOUTS of theirs (a test that a broken strategy
    sends into a loop is not waited for 300 s)."""
    kinds, tests, skipped = plan(bdir, strategy, quick)
    names = sorted({n for ns in kinds.values() if ns for n in ns})
    if names:
        p = subprocess.run(["ninja", "-C", bdir] + targets_of(bdir, [tests[n] for n in names]),
                           cwd=REPO, stdout=subprocess.DEVNULL)
        if p.returncode != 0:
            raise ToolError("grade: building %s's tests failed (ninja -C %s)" % (strategy, bdir))
    results = {}
    for i, batch in enumerate(batches(kinds)):
        logbase = "grade-%s%s" % (strategy, "-%d" % i if i else "")
        log = os.path.join(bdir, "meson-logs", logbase + ".json")
        if os.path.exists(log):
            os.remove(log)
        meson_stopping(["meson", "test", "-C", bdir, "--no-rebuild", "--logbase", logbase,
                        "--num-processes", str(jobs)] +
                       (["--timeout-multiplier", str(SHORT_TIMEOUTS)] if short else []) + batch,
                       echo=False)
        if not os.path.exists(log):
            raise ToolError("grade: meson test wrote no %s (is %s built?)" % (log, bdir))
        results.update(read_log(log))
    out = {}
    for kind, _ in KINDS:
        ns = kinds[kind]
        if ns is None:
            if skipped[kind]:
                out[kind] = {"status": "not run", "tests": len(skipped[kind]),
                             "message": "--quick", "names": skipped[kind]}
            else:
                out[kind] = {"status": "not registered", "tests": 0, "message": ""}
            continue
        if not ns:
            out[kind] = {"status": "not registered", "tests": 0, "message": ""}
            continue
        status, msg = status_of(results, ns)
        out[kind] = {"status": status, "tests": len(ns), "message": msg, "names": ns}
        if status == "fail":
            out[kind]["failed"] = failures(results, ns)
        if status == "not run":
            out[kind]["not_run"] = [n for n in ns if results[n][0] == "SKIP"]
    return out

#!/usr/bin/env python3
"""Run the misuse corpus (tests/security/*.c) under every allocator row and classify what
happened to each program:

  caught   it stopped (an abort, another signal or a non-zero exit status) and stderr has a
           line naming the problem (REPORT); GWP-ASan, for one, reports and then dies of
           SIGSEGV on purpose;
  warned   it ran to the end (exit 0), but stderr has such a line: noticed, not stopped;
  crashed  it stopped without such a line: SIGSEGV, SIGBUS, or an abort, with no word;
  silent   it ran to the end (exit 0) and nothing was said: the misuse went unnoticed;
  hung     it did not finish within the time bound (--timeout).

Rows: every production allocator tools/hoardlab_lib/allocators.py knows and finds installed
(glibc without a preload, the others preloaded), every strategy the build's hlconfig lists
(libhoardlab.so preloaded, HOARD_STRATEGY), and hoard2026:checks=on. Before a row's cells
run, the control program (no misuse) must run to the end under it and name the row's own
library as the one whose malloc runs: ld.so ignores an LD_PRELOAD it cannot load, and such a
row would otherwise look silent. Scudo runs with GWP-ASan off (CORPUS_ENV): on, as by default,
it samples about one allocation in 5000 onto guarded pages, and a sampled block turns a cell
that is silent or crashed into caught in about one run in 500 to 2500 (docs/hardening.md).

With --expected FILE (tests/security/expected.tsv) the outcomes are compared with the stated
ones and every differing cell is named; the exit status is 1 if any differs. A stated outcome
'a|b' is a cell that flips between runs: any of the listed outcomes matches. --write FILE
writes the measured outcomes (run each cell --repeat times to find the cells that flip);
--table prints the Markdown table docs/hardening.md shows.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import resource
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools"))
from hoardlab_lib import allocators, common  # noqa: E402

# The corpus, in the table's order: program (tests/security/NAME.c) and the misuse it commits.
MISUSES = [
    ("double_free", "double free, same thread"),
    ("double_free_thread", "double free, the second free on another thread"),
    ("free_interior", "free of an interior pointer (p + 16)"),
    ("free_foreign", "free of a foreign pointer (inside a mapping of the program's own)"),
    ("write_after_free", "write into a freed block's first 16 bytes, then two mallocs used"),
    ("overflow", "80 bytes written into a 64-byte block, both neighbours freed, malloc again"),
    ("underflow", "16 bytes written before a block, freed, malloc again"),
    ("free_stack", "free of a stack array"),
    ("free_global", "free of a global array"),
    ("realloc_freed", "realloc of a freed block"),
]
OUTCOMES = ("caught", "warned", "crashed", "silent", "hung")
# A line that names the problem: what the allocators' reports say (glibc: 'free(): double
# free detected in tcache 2'; Scudo: 'Scudo ERROR: invalid chunk state ...'; hoardlab:
# 'hoardlab: double free of 0x...'; tcmalloc: 'Attempt to free invalid pointer ...').
REPORT = re.compile(r"free|alloc|chunk|pointer|corrupt|invalid|double|heap|block|overflow"
                    r"|misuse|error", re.I)
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")      # reports differ only in addresses: one line each
# What a row's runs get here beside allocator_env's (the sweeps' environment): only what makes
# its outcomes the same from run to run.
CORPUS_ENV = {"scudo": {"SCUDO_OPTIONS": "GWP_ASAN_Enabled=false"}}
EXTRA_ROWS = [("hoard2026:checks=on", "hoard2026", {"checks": "on"})]


def programs_dir(bdir):
    return os.path.join(bdir, "tests", "security")


def check_corpus(bdir):
    """Every NAME.c of the folder is listed in MISUSES (or is the control), and built."""
    sources = {f[:-2] for f in os.listdir(HERE) if f.endswith(".c")} - {"control"}
    listed = {m for m, _ in MISUSES}
    if sources != listed:
        raise common.ToolError("tests/security: programs %s not in run.py's MISUSES, listed "
                               "but missing: %s" % (sorted(sources - listed) or "none",
                                                    sorted(listed - sources) or "none"))
    missing = [m for m in sorted(listed | {"control"})
               if not os.path.exists(os.path.join(programs_dir(bdir), "sec_" + m))]
    if missing:
        raise common.ToolError("not built in %s: %s (ninja -C %s)" % (
            programs_dir(bdir), ", ".join("sec_" + m for m in missing), bdir))


def rows(bdir):
    """[(row, base, knobs)] available here, and {row: why not} for the production ones that
    are not installed."""
    out, missing = [], {}
    for name in allocators.PRODUCTION:
        try:
            allocators.production_library(name)
            out.append((name, name, {}))
        except common.ToolError as e:
            missing[name] = str(e)
    strategies = [s for s, _ in common.hlconfig_strategies(bdir)]
    out += [(s, s, {}) for s in strategies]
    out += [r for r in EXTRA_ROWS if r[1] in strategies]
    return out, missing


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_one(bdir, program, env, timeout):
    """(outcome, the report line or a description of the end)."""
    try:
        p = subprocess.run([os.path.join(programs_dir(bdir), "sec_" + program)], env=env,
                           capture_output=True, text=True, errors="replace", timeout=timeout,
                           preexec_fn=no_core)
    except subprocess.TimeoutExpired:
        return "hung", "no end within %g s" % timeout
    lines = [ADDRESS.sub("0x...", l.strip()) for l in p.stderr.splitlines() if REPORT.search(l)]
    report = lines[0] if lines else ""
    if p.returncode == 0:
        return ("warned", report) if report else ("silent", "")
    stop = ("signal %s" % signal.Signals(-p.returncode).name if p.returncode < 0
            else "exit %d" % p.returncode)
    if report:
        return "caught", "%s (%s)" % (report, stop)
    return "crashed", stop


def control(bdir, env):
    """None if the control program runs to the end under `env` with the row's own malloc, else
    what went wrong."""
    p = subprocess.run([os.path.join(programs_dir(bdir), "sec_control")], env=env,
                       capture_output=True, text=True, timeout=30, preexec_fn=no_core)
    if p.returncode != 0:
        return "the control program failed (status %d): %s" % (p.returncode, p.stderr.strip())
    where = os.path.realpath(p.stdout.strip())
    want = env.get("LD_PRELOAD")
    if want and where != os.path.realpath(want):
        return "malloc is %s's, not the preloaded %s's" % (where, want)
    if not want and not os.path.basename(where).startswith("libc.so"):
        return "malloc is %s's, not the C library's" % where
    return None


def measure(bdir, row_list, misuses, repeat, timeout, jobs):
    """{(misuse, row): [(outcome, detail)] * repeat}, and {row: the control's complaint}."""
    envs = {row: dict(allocators.allocator_env(base, knobs, bdir), **CORPUS_ENV.get(row, {}))
            for row, base, knobs in row_list}
    broken = {}
    for row, _, _ in row_list:
        why = control(bdir, envs[row])
        if why:
            broken[row] = why
    cells = [(m, row) for m in misuses for row, _, _ in row_list if row not in broken]
    results = {c: [] for c in cells}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = {pool.submit(run_one, bdir, m, envs[row], timeout): (m, row)
                for _ in range(repeat) for m, row in cells}
        for f in concurrent.futures.as_completed(futs):
            results[futs[f]].append(f.result())
    return results, broken


def outcome_of(runs):
    """The cell's outcome: one word, or 'a|b' (sorted as OUTCOMES) if the runs differ."""
    seen = {o for o, _ in runs}
    return "|".join(o for o in OUTCOMES if o in seen)


def read_expected(path):
    """{(misuse, row): set of outcomes} from a misuse<TAB>row<TAB>outcome file."""
    exp = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or not set(parts[2].split("|")) <= set(OUTCOMES):
                raise common.ToolError("%s:%d: not misuse<TAB>row<TAB>outcome (one of %s, or "
                                       "several joined by '|'): %r"
                                       % (path, n, ", ".join(OUTCOMES), line.rstrip("\n")))
            exp[(parts[0], parts[1])] = set(parts[2].split("|"))
    return exp


def compare(results, broken, exp, row_names, misuses):
    """The lines naming each mismatch (empty if none)."""
    bad = ["row %s: %s" % (r, why) for r, why in broken.items()]
    for m in misuses:
        for r in row_names:
            if r in broken:
                continue
            got = {o for o, _ in results[(m, r)]}
            want = exp.get((m, r))
            if want is None:
                bad.append("%s x %s: no outcome stated in the file; measured %s"
                           % (m, r, outcome_of(results[(m, r)])))
            elif not got <= want:
                detail = "; ".join(sorted({d for o, d in results[(m, r)] if d}))
                bad.append("%s x %s: stated %s, measured %s%s" % (
                    m, r, "|".join(o for o in OUTCOMES if o in want),
                    outcome_of(results[(m, r)]), " (%s)" % detail if detail else ""))
    return bad


def table(cells, row_names, misuses):
    """Markdown: a line per allocator row, a column per misuse, and the count caught; `cells`
    is {(misuse, row): outcome} (outcome_of's, or read_expected's joined)."""
    lines = ["| row | " + " | ".join("`%s`" % m for m in misuses) + " | caught |",
             "|---|" + "---|" * (len(misuses) + 1)]
    for r in row_names:
        lines.append("| `%s` | " % r + " | ".join(cells[(m, r)].replace("|", " / ")
                                                 for m in misuses) +
                     " | %d |" % sum(cells[(m, r)] == "caught" for m in misuses))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=None)
    ap.add_argument("--expected", help="compare with this misuse/row/outcome file")
    ap.add_argument("--write", help="write the measured outcomes to this file")
    ap.add_argument("--table", action="store_true", help="print the Markdown table")
    ap.add_argument("--reports", action="store_true",
                    help="print each cell's report line (or how it ended)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each cell (default 1)")
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds a run may take")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (default 2)")
    ap.add_argument("--rows", help="only these rows (comma-separated)")
    ap.add_argument("--misuses", help="only these misuses (comma-separated)")
    a = ap.parse_args(argv)
    try:
        bdir = common.build_dir(a.build_dir)
        check_corpus(bdir)
        row_list, missing = rows(bdir)
        if a.rows:
            want = common.split_commas(a.rows)
            unknown = [r for r in want if r not in [x[0] for x in row_list]]
            if unknown:
                raise common.ToolError("unknown or missing rows: %s" % ", ".join(unknown))
            row_list = [x for x in row_list if x[0] in want]
        misuses = [m for m, _ in MISUSES]
        if a.misuses:
            misuses = [m for m in misuses if m in common.split_commas(a.misuses)]
        for name, why in missing.items():
            print("skipped row %s: %s" % (name, why))
        results, broken = measure(bdir, row_list, misuses, a.repeat, a.timeout, a.jobs)
        row_names = [r for r, _, _ in row_list if r not in broken]
        if a.table:
            print(table({c: outcome_of(runs) for c, runs in results.items()}, row_names,
                        misuses))
        if a.reports:
            for m in misuses:
                for r in row_names:
                    details = sorted({"%s: %s" % (o, d) if d else o for o, d in results[(m, r)]})
                    print("%-20s %-22s %s" % (m, r, " | ".join(details)))
        if a.write:
            with open(a.write, "w") as f:
                f.write("# The misuse corpus's outcomes today, misuse<TAB>row<TAB>outcome, "
                        "measured by\n# tests/security/run.py --repeat %d --write (each cell "
                        "run %d times); 'a|b': the\n# cell flips between runs (a comment above "
                        "it counts each). The meson test (suite\n# security) fails on every "
                        "cell that differs; docs/hardening.md explains.\n"
                        % (a.repeat, a.repeat))
                for m in misuses:
                    for r in row_names:
                        runs = results[(m, r)]
                        if "|" in outcome_of(runs):
                            counts = collections.Counter(o for o, _ in runs)
                            f.write("# flips between runs: %s of %d\n" % (", ".join(
                                "%s %d" % (o, counts[o]) for o in OUTCOMES if counts[o]),
                                len(runs)))
                        f.write("%s\t%s\t%s\n" % (m, r, outcome_of(runs)))
        if a.expected:
            exp = read_expected(a.expected)
            bad = compare(results, broken, exp, [r for r, _, _ in row_list], misuses)
            here = [r for r, _, _ in row_list]
            for r in dict.fromkeys(k[1] for k in exp):
                if r not in here and not a.rows:
                    print("not compared: row %s (%s)" % (
                        r, "not installed here" if r in missing else "not in this build"))
            n = len(misuses) * len(row_names)
            if bad:
                print("%d of %d cells differ from %s:" % (len(bad), n, a.expected))
                for b in bad:
                    print("  " + b)
                return 1
            print("all %d cells (%d misuses x %d rows) as %s states"
                  % (n, len(misuses), len(row_names), a.expected))
        return 0
    except common.ToolError as e:
        print("run.py: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

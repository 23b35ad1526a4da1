"""`sweep` and `run` build first, so a sweep run after an edit measures the edited code.

In a copy of the source tree (the build under test, build/, is never touched), as a student
would: a fresh tree without a build, a sweep (which configures and builds it), an edit to
the library, a sweep with --no-build (the old binary, and meta.json says it was out of
date), a sweep without it (rebuilt; the runs show the edit), the edit undone and `run`
(rebuilt again). The edit makes every program that loads libhoardlab.so print a marker and
exit with status 7, which no old binary does, so the runs show which library they ran.
About 15 s on 2 cores (one build of the library, hlconfig, hlbench and hlcost)."""
import csv
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

EDIT = """
/* tests/tools/test_build.py: an edit the sweep must measure */
#include <unistd.h>
__attribute__((constructor)) static void hl_test_edited(void)
{
    static const char msg[] = "hoardlab-test: the edited library\\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(7);
}
"""
EDITED = "src/core/front/export.c"            # compiled into libhoardlab.so only
SWEEP = """[sweep]
name = edit
strategies = hoard
threads = 1
repetitions = 1
scale = 0.01
[workload threadtest]
"""

pytestmark = pytest.mark.skipif(not (shutil.which("meson") and shutil.which("ninja")),
                                reason="meson and ninja are needed to build (tools/install-deps)")


def source_files():
    """The tree as it is (tracked and new files, not ignored ones), without the results."""
    p = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others",
                        "--exclude-standard"], capture_output=True)
    if p.returncode == 0 and p.stdout:
        files = [f for f in p.stdout.decode().split("\0") if f]
    else:                                   # not a git checkout: walk it
        files = []
        for d, dirs, fs in os.walk(REPO):
            dirs[:] = [x for x in dirs if x != ".git" and not x.startswith("build")
                       and x != "__pycache__"]
            files += [os.path.relpath(os.path.join(d, f), REPO) for f in fs]
    return [f for f in files if not (f.startswith("results/") and f != "results/README.md")
            and os.path.isfile(os.path.join(REPO, f))]


def git(tree, *args):
    return subprocess.run(["git", "-C", str(tree), "-c", "user.name=test",
                           "-c", "user.email=test@localhost", "-c", "commit.gpgsign=false"]
                          + list(args),
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("build") / "hoardlab"
    for f in source_files():
        dst = root / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.join(REPO, f), dst)
    if shutil.which("git"):
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "copy")
    (root / "edit.ini").write_text(SWEEP)
    return root


def tool(tree, *args):
    env = {k: v for k, v in os.environ.items()
           if k != "HOARDLAB_BUILD_DIR" and not k.startswith("HOARD_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([sys.executable, str(tree / "tools" / "hoardlab")] + list(args),
                          capture_output=True, text=True, env=env, timeout=600)


def sweep(tree, name, *extra, rc=0):
    """rc: the sweep's exit status, 1 when its run fails (the report is written all the same)."""
    out = tree / "out" / name
    p = tool(tree, "sweep", str(tree / "edit.ini"), "--out", str(out), "-q", *extra)
    assert p.returncode == rc, p.stderr[-3000:]
    with open(out / "runs.csv") as f:
        rows = list(csv.DictReader(f))
    with open(out / "meta.json") as f:
        meta = json.load(f)
    assert len(rows) == 1
    return p.stderr, rows[0], meta


def build_lines(stderr):
    return [ln for ln in stderr.splitlines() if ln.startswith("build:")]


def test_a_sweep_measures_the_source_as_it_is_now(tree):
    # A fresh tree: the sweep configures and builds it instead of stopping.
    err, row, meta = sweep(tree, "fresh")
    assert "meson setup" in err          # ninja links the targets in any order: any line
    assert any("rebuilt" in ln and "src/libhoardlab.so" in ln for ln in build_lines(err))
    assert row["status"] == "ok" and row["reported_strategy"] == "hoard"
    assert meta["build"]["ran"] and meta["build"]["configured"]
    if shutil.which("git"):
        assert meta["git"]["dirty"] is False and meta["git"]["commit"]

    # Nothing changed: ninja does nothing, and the sweep says nothing about building.
    err, row, meta = sweep(tree, "again")
    assert build_lines(err) == [] and meta["build"]["steps"] == 0 and row["status"] == "ok"

    with open(tree / EDITED) as f:
        original = f.read()
    with open(tree / EDITED, "a") as f:
        f.write(EDIT)

    # --no-build: the old binary, and the sweep says so and records it.
    err, row, meta = sweep(tree, "no-build", "--no-build")
    assert row["status"] == "ok"
    assert meta["build"] == {"ran": False, "stale": True}
    assert any("--no-build" in ln and "older than the source" in ln for ln in build_lines(err))
    with open(tree / "out" / "no-build" / "report.md") as f:
        assert "ran with --no-build while the build was older than the source" in f.read()

    # The default: rebuilt, and the runs ran the edited library.
    err, row, meta = sweep(tree, "edited", rc=1)
    assert any("rebuilt" in ln and "src/libhoardlab.so" in ln for ln in build_lines(err))
    assert meta["build"]["ran"] and meta["build"]["steps"] > 0
    assert "src/libhoardlab.so" in meta["build"]["rebuilt"]
    assert row["status"] == "failed" and row["exit_code"] == "7"
    assert "hoardlab-test: the edited library" in row["error"]
    if shutil.which("git"):
        assert meta["git"]["dirty"] is True and EDITED in meta["git"]["changed"]
        assert len(meta["git"]["diff_sha1"]) == 40
    with open(tree / "out" / "edited" / "report.md") as f:
        assert "(uncommitted changes)" in f.read()

    # `run` builds first too: the edit undone, the library is rebuilt and runs again.
    with open(tree / EDITED, "w") as f:
        f.write(original)
    p = tool(tree, "run", "threadtest", "--scale", "0.01")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "threadtest under hoard" in p.stdout
    assert any("rebuilt" in ln and "src/libhoardlab.so" in ln for ln in build_lines(p.stderr))


def test_a_failed_build_measures_nothing(tree):
    with open(tree / EDITED) as f:
        original = f.read()
    try:
        with open(tree / EDITED, "a") as f:
            f.write("\nthis is not C;\n")
        p = tool(tree, "sweep", str(tree / "edit.ini"), "--out", str(tree / "out" / "broken"))
        assert p.returncode == 2
        assert "build failed" in p.stderr and "nothing was measured" in p.stderr
        assert "export.c" in p.stderr                   # the compiler's own message
        assert not os.path.exists(tree / "out" / "broken")
    finally:
        with open(tree / EDITED, "w") as f:
            f.write(original)

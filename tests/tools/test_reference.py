"""results/reference/<sweep>/: one committed reference result per shipped sweep, holding what
`hoardlab report` needs and the report it writes from them; docs/experiments.md names each,
and no doc names a results folder that is not there."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

TOOL = os.path.join(REPO, "tools", "hoardlab")
REF = os.path.join(REPO, "results", "reference")
SWEEPS = sorted(os.path.basename(p)[:-len(".ini")]
                for p in glob.glob(os.path.join(REPO, "configs", "sweeps", "*.ini")))
REFS = sorted(os.listdir(REF)) if os.path.isdir(REF) else []
# what `report` reads; a reference stores its tables xz-compressed (tidy.COMPRESSED)
INPUTS = ("runs.csv.xz", "rounds.csv.xz", "series.csv.xz", "meta.json", "cost.json")
IGNORED = re.compile(r".*\.(png|ini)$|^records\.jsonl$")        # .gitignore: not committed
MAX_BYTES = 4 << 20     # results/, every file a clone holds (issue 35: it had grown to 18 MB)


def experiments():
    """{sweep: its section of docs/experiments.md}"""
    with open(os.path.join(REPO, "docs", "experiments.md")) as f:
        text = f.read()
    parts = re.split(r"^## (\S+) — .*$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_reference_is_a_shipped_sweep():
    assert REFS, "no results/reference/"
    assert set(REFS) <= set(SWEEPS), set(REFS) - set(SWEEPS)


@pytest.mark.parametrize("name", REFS)
def test_a_reference_holds_the_reports_inputs_and_the_report(name):
    d = os.path.join(REF, name)
    files = {f for f in os.listdir(d) if not IGNORED.match(f)}
    assert {"runs.csv.xz", "meta.json", "report.md"} <= files
    assert files <= set(INPUTS) | {"report.md"}, files
    with open(os.path.join(d, "meta.json")) as f:
        assert json.load(f)["sweep"]["name"] == name


def test_experiments_name_each_sweeps_reference():
    sections = experiments()
    assert set(SWEEPS) <= set(sections), set(SWEEPS) - set(sections)
    for name in SWEEPS:
        text = sections[name]
        if name in REFS:
            assert "results/reference/%s/" % name in text, name
        else:
            assert "no reference yet" in text, name


def test_no_doc_names_a_results_folder_that_is_not_there():
    docs = [os.path.join(REPO, "README.md"), os.path.join(REPO, "results", "README.md")]
    docs += glob.glob(os.path.join(REPO, "docs", "*.md"))
    docs += glob.glob(os.path.join(REPO, "harness", "*.md"))
    docs += glob.glob(os.path.join(REPO, "tests", "**", "*.py"), recursive=True)
    for path in docs:
        with open(path) as f:
            text = f.read()
        # paths inside the repository (not /shared/.../results/... of a cluster example)
        for m in re.finditer(r"(?<![\w/.])results/([\w.-]+)/([\w.-]*)", text):
            folder = m.group(1)
            if folder.startswith("<") or not re.match(r"\d{4}-|reference$", folder):
                continue
            assert folder == "reference", "%s names a dated folder: %s" % (path, m.group(0))


def clone_files(repo):
    """The files under results/ that a clone gets: those git tracks (`git ls-files results`),
    not a user's own sweeps that `tools/hoardlab main` or `sweep` wrote there since. Outside a
    git checkout (an unpacked archive): what .gitignore lets in, the README and the
    references."""
    p = subprocess.run(["git", "-C", repo, "ls-files", "-z", "results"], capture_output=True,
                       text=True)
    if p.returncode == 0:
        return [os.path.join(repo, f) for f in p.stdout.split("\0") if f]
    out = [os.path.join(repo, "results", "README.md")]
    for root, _, files in os.walk(os.path.join(repo, "results", "reference")):
        out += [os.path.join(root, f) for f in files if not IGNORED.match(f)]
    return [f for f in out if os.path.exists(f)]


def test_results_stay_small():
    """The folder a clone gets stays under MAX_BYTES: a reference keeps what its report needs,
    its tables compressed. A user's own results (the README's `tools/hoardlab main` writes a
    dated folder here) are not counted."""
    files = clone_files(REPO)
    assert any(f.endswith(os.path.join("results", "README.md")) for f in files)
    size = sum(os.path.getsize(f) for f in files if os.path.exists(f))
    assert size <= MAX_BYTES, ("results/ holds %.1f MB, more than %.0f MB: compress a "
                               "reference's tables (xz -9 runs.csv rounds.csv series.csv)"
                               % (size / 1e6, MAX_BYTES / (1 << 20)))


@pytest.mark.skipif(not shutil.which("git"), reason="git missing")
def test_the_size_bound_counts_what_git_tracks_not_a_users_own_sweep(tmp_path):
    """The README's two commands in order: `main` writes results/<date>-taxonomy/ (about 6 MB)
    before `test` runs; the bound is on the clone's files, so that sweep is not counted."""
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    ref = tmp_path / "results" / "reference" / "x"
    ref.mkdir(parents=True)
    (tmp_path / "results" / "README.md").write_text("results\n")
    (ref / "report.md").write_text("a report\n")
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "results"], check=True)
    subprocess.run(git + ["commit", "-qm", "x"], check=True)
    own = tmp_path / "results" / "2026-11-28-taxonomy"
    own.mkdir()
    (own / "runs.csv").write_bytes(b"x" * (MAX_BYTES + 1))
    files = clone_files(str(tmp_path))
    assert sorted(os.path.relpath(f, tmp_path) for f in files) == [
        "results/README.md", "results/reference/x/report.md"]
    shutil.rmtree(tmp_path / ".git")            # an unpacked archive: .gitignore's rule
    assert sorted(os.path.relpath(f, tmp_path) for f in clone_files(str(tmp_path))) == [
        "results/README.md", "results/reference/x/report.md"]


@pytest.mark.parametrize("name", REFS)
def test_report_of_a_copy_reproduces_the_committed_report(name, tmp_path):
    pytest.importorskip("matplotlib")       # without it the report lists plots not drawn
    src = os.path.join(REF, name)
    dst = str(tmp_path / name)
    os.makedirs(dst)
    for f in INPUTS:
        if os.path.exists(os.path.join(src, f)):
            shutil.copy(os.path.join(src, f), dst)
    p = subprocess.run([sys.executable, TOOL, "report", dst], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    with open(os.path.join(src, "report.md")) as f:
        want = f.read()
    with open(os.path.join(dst, "report.md")) as f:
        got = f.read()
    assert got == want, ("results/reference/%s/report.md is not what `tools/hoardlab report` "
                         "writes now: rerun it on the folder and commit" % name)

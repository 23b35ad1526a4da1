"""The misuse corpus's runner (tests/security/run.py, issue 66): how a run is classified, that
a row whose library did not load is refused rather than called silent, that a cell differing
from the stated outcome is named, and that the corpus, its meson.build and expected.tsv list
the same misuses. The corpus itself runs as the meson test security-corpus."""
import importlib.util
import os
import re
import stat

import pytest

from conftest import BDIR, REPO, needs_built

SEC = os.path.join(REPO, "tests", "security")
spec = importlib.util.spec_from_file_location("security_run", os.path.join(SEC, "run.py"))
corpus = importlib.util.module_from_spec(spec)
spec.loader.exec_module(corpus)

needs_corpus = needs_built("tests/security/sec_control", "tests/security/sec_double_free",
                           "src/hlconfig", "src/libhoardlab.so")


def fake(tmp_path, name, script):
    """A build folder whose sec_NAME is a shell script."""
    d = tmp_path / "tests" / "security"
    d.mkdir(parents=True, exist_ok=True)
    p = d / ("sec_" + name)
    p.write_text("#!/bin/sh\n" + script + "\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return str(tmp_path)


@pytest.mark.parametrize("script, outcome", [
    ("exit 0", "silent"),
    ("echo 'free(): double free detected in tcache 2' >&2; kill -ABRT $$", "caught"),
    ("echo 'Scudo ERROR: corrupted chunk header at 0x7f00' >&2; exit 1", "caught"),
    ("echo '*** GWP-ASan detected a memory error ***' >&2; kill -SEGV $$", "caught"),
    ("kill -SEGV $$", "crashed"),
    ("kill -ABRT $$", "crashed"),
    ("echo 'mimalloc: error: double free detected' >&2; exit 0", "warned"),
    ("sleep 5", "hung"),
])
def test_each_end_is_classified(tmp_path, script, outcome):
    bdir = fake(tmp_path, "x", script)
    got, detail = corpus.run_one(bdir, "x", dict(os.environ), timeout=0.5)
    assert got == outcome, detail
    assert "0x7f00" not in detail                # addresses removed: one line per report


def test_a_preload_that_did_not_load_is_refused(tmp_path):
    """ld.so runs the program under glibc when it cannot load LD_PRELOAD: not a row."""
    bdir = fake(tmp_path, "control", "echo /lib/x86_64-linux-gnu/libc.so.6")
    why = corpus.control(bdir, dict(os.environ, LD_PRELOAD=str(tmp_path / "missing.so")))
    assert why and "not the preloaded" in why
    assert corpus.control(bdir, {k: v for k, v in os.environ.items()
                                 if k != "LD_PRELOAD"}) is None


def test_the_corpus_meson_and_expected_list_the_same_misuses():
    names = [m for m, _ in corpus.MISUSES]
    with open(os.path.join(SEC, "meson.build")) as f:
        block = re.search(r"sec_misuses = \[(.*?)\]", f.read(), re.S).group(1)
    assert re.findall(r"'(\w+)'", block) == names
    assert sorted(f[:-2] for f in os.listdir(SEC) if f.endswith(".c")) == \
        sorted(names + ["control"])
    exp = corpus.read_expected(os.path.join(SEC, "expected.tsv"))
    assert {m for m, _ in exp} == set(names)
    rows = {r for _, r in exp}
    assert {"glibc", "scudo", "hoard2026", "hoard2026:checks=on"} <= rows
    assert all((m, r) in exp for m in names for r in rows), "every misuse under every row"


@needs_corpus
def test_a_cell_that_differs_is_named(tmp_path, capsys):
    """glibc catches the double free; a file saying silent fails, naming the cell and what
    was measured; a flipping cell stated 'a|b' matches either."""
    exp = tmp_path / "exp.tsv"
    exp.write_text("double_free\tglibc\tsilent\nfree_global\tglibc\tcaught|crashed\n")
    rc = corpus.main(["--build-dir", BDIR, "--rows", "glibc", "--misuses",
                      "double_free,free_global", "--expected", str(exp)])
    out = capsys.readouterr().out
    assert rc == 1
    assert "1 of 2 cells differ" in out
    assert "double_free x glibc: stated silent, measured caught (free(): double free" in out
    exp.write_text("double_free\tglibc\tcaught\n")
    rc = corpus.main(["--build-dir", BDIR, "--rows", "glibc", "--misuses",
                      "double_free,free_global", "--expected", str(exp)])
    assert rc == 1 and "free_global x glibc: no outcome stated" in capsys.readouterr().out


def test_the_docs_table_is_the_expected_file():
    """docs/hardening.md's table of outcomes is expected.tsv's, as run.py --table prints it."""
    exp = corpus.read_expected(os.path.join(SEC, "expected.tsv"))
    rows = list(dict.fromkeys(r for _, r in exp))
    cells = {k: "|".join(o for o in corpus.OUTCOMES if o in v) for k, v in exp.items()}
    want = corpus.table(cells, rows, [m for m, _ in corpus.MISUSES])
    with open(os.path.join(REPO, "docs", "hardening.md")) as f:
        assert want in f.read(), "docs/hardening.md's table differs from expected.tsv:\n" + want

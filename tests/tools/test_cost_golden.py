"""tests/golden/cost.txt, the reviewed fast-path costs: its form and rows, and the test that
measures every row again with callgrind and fails, printing the difference and the command
that rewrites the file, when a cost differs (tools/hoardlab_lib/cost_golden.py). valgrind is
installed by tools/install-deps, so a missing valgrind fails; a missing build skips, and so
does a build the file was not measured on (compiler or options: their counts differ)."""
import json
import shutil
import subprocess

import pytest

from conftest import BDIR, needs_built
from hoardlab_lib import common, cost_golden

COLUMNS = [c for c, _ in cost_golden.COLUMNS] + [cost_golden.UNCOUNTED]
UPDATE = "tools/hoardlab cost --golden-update"

needs_build = needs_built("harness/hlcost", "src/hlconfig", "src/libhoardlab.so")


def need_valgrind():
    if not (shutil.which("valgrind") and shutil.which("callgrind_annotate")):
        pytest.fail("valgrind not found: run tools/install-deps (Debian package valgrind)")


def test_the_file_is_in_the_form_update_writes():
    """Read and written back it is the same text, so a hand edit or a merge that broke its
    columns shows here, and every row has a number in every column."""
    build, specs, values = cost_golden.read()
    with open(cost_golden.PATH) as f:
        assert cost_golden.format_file(build, specs, values) == f.read()
    assert build and specs and len(set(specs)) == len(specs)
    for s in specs:
        assert sorted(values[s]) == sorted(COLUMNS), s
        assert all(float(v) > 0 for v in values[s].values()), s


@needs_build
def test_the_rows_that_matter_are_there():
    """Every strategy bare; hoard2026 with each remote_free value (the bare row is the
    default's); hoard and ownership with tlab = on."""
    _, specs, _ = cost_golden.read()
    strategies = [s for s, _ in common.hlconfig_strategies(BDIR)]
    assert specs[:len(strategies)] == strategies
    out = subprocess.run([common.artifact(BDIR, "hlconfig"), "--json"], capture_output=True,
                         text=True, check=True).stdout
    remote = next(o for o in json.loads(out) if o["name"] == "remote_free")
    for v in remote["choices"]:
        if v != remote["default"]:
            assert "hoard2026:remote_free=%s" % v in specs, "add the row, then " + UPDATE
    assert "hoard:tlab=on" in specs and "ownership:tlab=on" in specs


def test_a_spec_alone_is_a_row_to_measure_and_bad_columns_are_named(tmp_path):
    p = tmp_path / "cost.txt"
    p.write_text("# build: gcc 1; x\n\nallocator local8\nhoard  1.0 2.0 3.0 4.0\nhoard:tlab=on\n")
    build, specs, values = cost_golden.read(str(p))
    assert build == "gcc 1; x" and specs == ["hoard", "hoard:tlab=on"]
    assert values["hoard"] == dict(zip(COLUMNS, ["1.0", "2.0", "3.0", "4.0"]))
    assert values["hoard:tlab=on"] == {}
    p.write_text("hoard 1.0 2.0\n")
    with pytest.raises(common.ToolError) as e:
        cost_golden.read(str(p))
    assert str(e.value).startswith("%s:1: hoard has 2 columns" % p)


def test_diff_names_the_row_the_column_and_both_values():
    expected = {"hoard": {"local8": "47.0", "local64": "46.9", "remote64": "159.0",
                          "uncounted8": "127.8"},
                "serial": {}}
    measured = {"hoard": {"local8": "47.4", "local64": "46.7", "remote64": "160.0",
                          "uncounted8": "128.3"},       # 0.5 apart, not 0.50000000000001
                "serial": {"local8": "88.0"}}
    lines = cost_golden.diff(expected, measured, ["hoard", "serial"])
    assert len(lines) == 2          # within cost_golden.TOLERANCE (0.5) is the same
    assert lines[0].split() == ["hoard", "remote64", "file", "159.0", "measured", "160.0"]
    assert lines[1].split() == ["serial", "local8", "file", "(none)", "measured", "88.0"]


@needs_build
def test_update_fills_a_new_row_and_keeps_the_strategies_first(tmp_path, monkeypatch):
    """--golden-update's work without callgrind: the measurement is stubbed."""
    need_valgrind()
    p = tmp_path / "cost.txt"
    p.write_text("hoard:tlab=on\n")
    monkeypatch.setattr(cost_golden, "measure", lambda bdir, specs, jobs=2: {
        s: dict(zip(COLUMNS, ["1.0", "2.0", "3.0", "4.0"])) for s in specs})
    specs = cost_golden.update(BDIR, str(p))
    strategies = [s for s, _ in common.hlconfig_strategies(BDIR)]
    assert specs == strategies + ["hoard:tlab=on"]
    build, again, values = cost_golden.read(str(p))
    assert again == specs and values["hoard:tlab=on"]["remote64"] == "3.0"
    assert build == cost_golden.build_line(BDIR)


@needs_build
def test_fast_paths_cost_what_the_file_says():
    """The golden test: every row measured again (callgrind counts repeat exactly)."""
    need_valgrind()
    build, _, _ = cost_golden.read()
    here = cost_golden.build_line(BDIR)
    if build != here:
        pytest.skip("tests/golden/cost.txt was measured on another build (%s), this is %s"
                    % (build, here))
    diffs = cost_golden.check(BDIR)
    assert not diffs, ("instructions per malloc+free pair differ from tests/golden/cost.txt "
                       "(row, column, file, measured):\n%s\nIf the change is meant, rewrite "
                       "the file and commit it with the change: %s"
                       % ("\n".join(diffs), UPDATE))

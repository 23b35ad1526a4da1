"""The statistics are declared once (HOARDLAB_STATS in include/hoardlab.h) and the tools read
them from the build: `hlconfig --stats` lists every field of struct hoardlab_stats, and
runs.csv's hoardlab.* columns and the sums over a program's processes come from it."""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO
from hoardlab_lib import common, programs
from hoardlab_lib.runkit import tidy

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
HEADER = os.path.join(REPO, "include", "hoardlab.h")


def hlconfig(*args):
    return subprocess.run([common.require(BDIR, "hlconfig"), *args], capture_output=True,
                          text=True, check=True).stdout


def table():
    return json.loads(hlconfig("--stats", "--json"))


def declared():
    """The names of the X(...) rows of HOARDLAB_STATS, read from the header's text."""
    with open(HEADER) as f:
        text = f.read()
    block = text[text.index("#define HOARDLAB_STATS(X)"):text.index("struct hoardlab_stats {")]
    return re.findall(r"X\(\s*(\w+)\s*,", block)


def test_stats_lists_every_field_of_the_struct(tmp_path):
    names = [s["name"] for s in table()]
    assert names == declared()
    assert len(set(names)) == len(names)
    # the struct holds exactly these, in this order: its offsets say so
    src = tmp_path / "fields.c"
    src.write_text('#include <stdio.h>\n#include <stddef.h>\n#include "hoardlab.h"\n'
                   'int main(void) {\n'
                   '#define F(name, from, across, help) printf("%s %zu\\n", #name, '
                   'offsetof(struct hoardlab_stats, name));\n'
                   '    HOARDLAB_STATS(F)\n'
                   '    printf("sizeof %zu\\n", sizeof(struct hoardlab_stats));\n}\n')
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    exe = tmp_path / "fields"
    subprocess.run([cc, "-I", os.path.join(REPO, "include"), "-o", str(exe), str(src)],
                   check=True)
    lines = [l.split() for l in subprocess.run([str(exe)], capture_output=True, text=True,
                                                check=True).stdout.splitlines()]
    assert [l[0] for l in lines[:-1]] == names
    assert [int(l[1]) for l in lines[:-1]] == [8 * i for i in range(len(names))]
    assert lines[-1] == ["sizeof", str(8 * len(names))]


def test_text_and_json_agree_and_kinds_are_known():
    rows = [l.split("\t") for l in hlconfig("--stats").splitlines()]
    t = table()
    assert [r[:3] for r in rows] == [[s["name"], s["from"], s["across"]] for s in t]
    assert [r[3] for r in rows] == [s["help"] for s in t]
    for s in t:
        assert s["from"] in ("thread", "total") and s["across"] in ("sum", "largest", "max")
        assert s["help"].strip(), s["name"]


def test_every_per_thread_counter_is_counted_somewhere():
    """A `thread` statistic is a field of struct hl_counters (the compiler checks every
    HL_COUNT(name, ...) against it); one that nothing counts would stay 0."""
    text = ""
    for d, _, files in os.walk(os.path.join(REPO, "src")):
        for f in files:
            if f.endswith((".c", ".h")):
                with open(os.path.join(d, f)) as fh:
                    text += fh.read()
    for s in table():
        if s["from"] == "thread":
            assert re.search(r"HL_COUNT\(\s*%s\b|HL_COUNT_IF\(\s*\w+\s*,\s*%s\b|ctr\.%s\b"
                             % (s["name"], s["name"], s["name"]), text), \
                s["name"]


def test_tidy_columns_come_from_the_build():
    names = [s["name"] for s in table()]
    assert tidy.hoardlab_fields(BDIR) == names + tidy.DERIVED_FIELDS
    cols = tidy.columns_for([], BDIR)
    assert [c for c in cols if c.startswith("hoardlab.")] == \
        ["hoardlab." + n for n in names + tidy.DERIVED_FIELDS]


def test_a_statistic_added_to_the_table_becomes_a_column(monkeypatch):
    """Planted in the build's table (as hlconfig would list it): tidy and programs follow."""
    fake = table() + [{"name": "planted", "from": "thread", "across": "sum", "help": "x"}]
    monkeypatch.setitem(common._STATS, BDIR, fake)
    assert tidy.hoardlab_fields(BDIR)[-3:] == ["planted"] + tidy.DERIVED_FIELDS
    cols = tidy.columns_for([], BDIR)
    assert cols.index("hoardlab.planted") == cols.index("hoardlab.fragmentation") - 1
    recs = [{"held_bytes_peak": 2, "in_use_peak": 1, "planted": 3, "threads": 1},
            {"held_bytes_peak": 1, "in_use_peak": 1, "planted": 4, "threads": 5}]
    agg = programs.aggregate_stats(recs, BDIR)
    assert agg["planted"] == 7 and agg["threads"] == 5 and agg["fragmentation"] == 2.0


def test_a_missing_build_is_a_clear_error(tmp_path):
    with pytest.raises(common.ToolError, match="hlconfig --stats.*tools/hoardlab build"):
        tidy.hoardlab_fields(str(tmp_path))


def test_reference_runs_csv_keep_their_columns():
    """Existing results keep their columns: a reference runs.csv (most written before later
    statistics and columns existed) loads and is written again with the same hoardlab.*
    columns without a build; one written by today's tools, from the same rows, starts its
    hoardlab.* group with the build's statistics in the build's order (a new statistic needs
    no reference rerun to be checked)."""
    import csv
    import glob
    import lzma
    order = list(tidy.hoardlab_fields(BDIR))
    paths = glob.glob(os.path.join(REPO, "results", "reference", "*", "runs.csv.xz"))
    assert paths
    for p in paths:
        with lzma.open(p, "rt", newline="") as f:
            cols = next(csv.reader(f))
        rows = tidy.read_csv(p)
        again = tidy.columns_for(rows, fields=tidy.read_fields(rows))
        assert [c for c in again if c.startswith("hoardlab.")] == \
            [c for c in cols if c.startswith("hoardlab.")], p
        today = [c[len("hoardlab."):] for c in tidy.columns_for(rows, bdir=BDIR)
                 if c.startswith("hoardlab.")]
        assert today[:len(order)] == order, p

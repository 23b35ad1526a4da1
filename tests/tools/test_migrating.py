"""The migrating-objects workload (harness/workloads/migrating.c): in the remote-free, handoff
and production sweeps and not in taxonomy.ini (the main job's time), documented in
harness/README.md with every parameter it has, and its record deterministic per seed."""
import json
import os
import re
import subprocess

from conftest import BDIR, REPO, needs_built
from hoardlab_lib import sweeps as sweep

NAME = "migrating-objects"
STRATEGIES = ["serial", "concurrent", "private", "ownership", "hoard", "hoard2026",
              "hoard202607", "lockfree"]


def sections(name):
    sw = sweep.read_sweep(os.path.join(REPO, "configs", "sweeps", name + ".ini"), 2, STRATEGIES)
    return [w for w in sw.workloads if w.get("workload") == NAME]


def test_in_the_remote_free_handoff_and_production_sweeps_not_taxonomy():
    for name in ("remote-free", "handoff", "production"):
        found = sections(name)
        assert len(found) == 1, name
        assert 0 < float(found[0]["scale"]) <= 1, (name, found[0])
    assert sections("taxonomy") == []


def params():
    """The parameter names of migrating.c's table."""
    text = open(os.path.join(REPO, "harness", "workloads", "migrating.c")).read()
    table = text[text.index("hb_migrating_params[]"):text.index("{ NULL")]
    return re.findall(r'\{ "(\w+)",', table)


def test_documented_with_every_parameter():
    text = open(os.path.join(REPO, "harness", "README.md")).read()
    row = next(ln for ln in text.splitlines() if ln.startswith("| `%s` |" % NAME))
    names = params()
    assert len(names) >= 10
    for p in names:
        assert "`%s`" % p in row, p
    assert "**%s**" % NAME in text and "- `%s`:" % NAME in text   # the notes, extra's keys


@needs_built("harness/hlbench")
def test_counts_depend_on_the_seed_alone():
    def run(seed, threads):
        p = subprocess.run([os.path.join(BDIR, "harness", "hlbench"), NAME, "--threads",
                            str(threads), "--scale", "0.02", "--generation", "4", "--seed",
                            str(seed), "--repeat", "2", "--sample-interval", "0"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=120, env={k: v for k, v in os.environ.items()
                                             if k != "LD_PRELOAD"})
        assert p.returncode == 0, p.stderr
        recs = [json.loads(line) for line in p.stdout.splitlines()]
        return [(r["ops"], r["extra"]["sent"], r["extra"]["kept"], r["extra"]["threads_created"])
                for r in recs]
    a = run(7, 3)
    assert a[0] == a[1] and a[0][1] > 0 and a[0][3] > 3      # threads came and went
    assert run(7, 3) == a                                    # another process, same counts
    assert run(8, 3)[0] != a[0]                              # another seed, other counts

"""Composed rows (configs/rows/NAME.ini, docs/rows.md): each is a valid library configuration
that selects what its account claims, it is named wherever a strategy is (`strategies`, `-a`,
sweep files, HOARD_CONFIG with LD_PRELOAD), and a misspelt name is one line naming every
valid one. The claims are read from the file's own account ('What it has:', one `key = value`
a line) and checked against `hlconfig --effective` under the file, so the comment cannot say
more than the configuration does; ESSENTIAL holds what issue 47 asks each row to assemble."""
import os
import re
import subprocess

import pytest

from conftest import BDIR, REPO, needs_built
from hoardlab_lib import allocators, sweeps as sweepmod
from hoardlab_lib.common import ToolError

TOOL = os.path.join(REPO, "tools", "hoardlab")
HLCONFIG = os.path.join(BDIR, "src", "hlconfig")
LIB = os.path.join(BDIR, "src", "libhoardlab.so")
ROWS = allocators.composed_rows()
STRATEGIES = ["serial", "hoard", "hoard2026"]       # enough for the name checks without a build

# The elements each row must assemble (issue 47), as effective values under its file.
ESSENTIAL = {
    "mimalloc-like": {"heap_select": "thread", "remote_free": "list", "free_lists": "sharded",
                      "purge": "dontneed", "purge_delay": "10", "cache": "none"},
    "snmalloc-like": {"heap_select": "thread", "remote_free": "batch", "cache": "thread",
                      "tlab_prefetch": "on"},
    "tcmalloc-like": {"cache": "cpu", "heaps": "1"},
    # issue 51: the testbed's fastest knobs (docs/rows.md says how they were chosen)
    "fastest": {"heap_select": "thread", "remote_free": "batch", "cache": "thread",
                "tlab_adaptive": "on", "tlab_sb_cache": "0", "tlab_prefetch": "on"},
}
EFFECTIVE = re.compile(r"^hoardlab: (\w+)\s*= (.*?)\s*\((\w+)\)$")
SIZE = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def test_the_three_rows_are_there():
    assert set(ESSENTIAL) <= set(ROWS), sorted(ROWS)


def meson_strategies():
    text = open(os.path.join(REPO, "meson_options.txt")).read()
    opt = text.split("'strategies'", 1)[1].split(")", 1)[0]
    return re.findall(r"'(\w+)'", opt.split("value", 1)[1])


def test_a_row_name_is_no_strategys_nor_production_allocators():
    strategies = meson_strategies()
    assert "hoard" in strategies
    for name in ROWS:
        assert name not in strategies and name not in allocators.PRODUCTION, name
        assert allocators.allocator_kind(name) == "hoardlab"


def claims(path):
    """{key: value} the account's 'What it has:' part states ('  key = value   why')."""
    text = open(path).read()
    part = text.split("; What it has:", 1)[1].split("; What it leaves out", 1)[0]
    return dict(re.findall(r"^; {3}([a-z_]+) = (\S+)", part, re.M))


def normal(key, value):
    """A value as --effective prints it: sizes in bytes."""
    m = re.fullmatch(r"(\d+)([KMG])", value)
    return str(int(m.group(1)) * SIZE[m.group(2)]) if m else value


@pytest.mark.parametrize("name", sorted(ROWS))
def test_the_account_opens_the_file_and_states_what_is_left_out(name):
    path, account = ROWS[name]
    text = open(path).read()
    assert text.startswith("; " + account + "\n")
    assert len(account) <= 100, "one line in `strategies`: %r" % account
    assert "; What it leaves out of" in text
    assert claims(path), "%s: no 'key = value' lines under 'What it has:'" % name
    for key in ESSENTIAL.get(name, {}):
        assert key in claims(path), "%s's account does not state %s" % (name, key)


def effective(env):
    p = subprocess.run([HLCONFIG, "--effective"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return {m.group(1): (m.group(2), m.group(3)) for m in map(EFFECTIVE.match,
                                                               p.stdout.splitlines()) if m}


@needs_built("src/hlconfig")
@pytest.mark.parametrize("name", sorted(ROWS))
def test_a_row_selects_what_it_claims(name):
    path, _ = ROWS[name]
    eff = effective({"HOARD_CONFIG": path})
    assert eff["strategy"] == (allocators.expected_strategy(name), "file")
    wanted = dict(claims(path), **ESSENTIAL.get(name, {}))
    for key, value in wanted.items():
        assert key in eff, "%s: %s is not a key" % (name, key)
        assert eff[key] == (normal(key, value), "file"), \
            "%s: %s is %s (%s), its account says %s" % (name, key, *eff[key], value)


# What `fastest` is, as its account says: hoard202607 but for these keys (remote_queue_cap acts
# with queue only, so hoard202607's 256 changes nothing under batch).
FASTEST_OVER_HOARD202607 = {"heap_select": "thread", "remote_free": "batch", "tlab_sb_cache": "0",
                            "tlab_prefetch": "on"}


@needs_built("src/hlconfig")
def test_fastest_is_hoard202607_but_for_the_keys_it_names():
    path, _ = ROWS["fastest"]
    row = {k: v for k, (v, _) in effective({"HOARD_CONFIG": path}).items()}
    env = {"HOARD_STRATEGY": "hoard202607"}
    env.update({"HOARD_" + k.upper(): v for k, v in FASTEST_OVER_HOARD202607.items()})
    ref = {k: v for k, (v, _) in effective(env).items()}
    assert row["strategy"] == "hoard" and ref["strategy"] == "hoard202607"
    differ = {k for k in set(row) | set(ref) if row.get(k) != ref.get(k)}
    assert differ == {"strategy", "remote_queue_cap"}, {k: (row.get(k), ref.get(k))
                                                        for k in differ}
    assert "remote_queue_cap" not in claims(path)


@pytest.mark.parametrize("sweep", ["production.ini", "handoff.ini", "remote-free.ini"])
def test_fastest_runs_in_every_production_sweep_beside_the_peers(sweep):
    path = os.path.join(REPO, "configs", "sweeps", sweep)
    sw = sweepmod.Sweep(open(path).read(), sweep, ncores=2, strategies=meson_strategies())
    bases = {a[1]: a[2] for a in sw.allocators}
    assert "fastest" in bases, sorted(bases)
    assert {"snmalloc", "mimalloc3"} <= set(bases), sorted(bases)
    # a knob on top may only repeat the file's value (the Remote frees table keys rows by it)
    for key, value in bases["fastest"].items():
        assert claims(ROWS["fastest"][0]).get(key) == value, (key, value)
    runs = [r for r in sw.expand() if r["base"] == "fastest"]
    assert runs and {r["kind"] for r in runs} == {"hoardlab"}, sweep
    # on every workload the peers run on
    peers = {r["workload_label"] for r in sw.expand() if r["base"] == "snmalloc"}
    assert peers <= {r["workload_label"] for r in runs}, sweep


@needs_built("src/hlconfig")
def test_a_knob_on_a_row_wins_over_its_file():
    env = allocators.allocator_env("mimalloc-like", {"purge_delay": "100"}, BDIR, environ={})
    assert env["HOARD_CONFIG"] == ROWS["mimalloc-like"][0] and "HOARD_STRATEGY" not in env
    env.pop("LD_PRELOAD")
    eff = effective(env)
    assert eff["purge_delay"] == ("100", "env") and eff["free_lists"] == ("sharded", "file")


@needs_built("src/hlconfig")
def test_a_knob_a_row_cannot_take_is_refused_as_for_a_strategy():
    from hoardlab_lib.runkit import check
    assert check.knob_problem(BDIR, "snmalloc-like", {"remote_batch_bytes": "16K"}) is None
    knob, msg = check.knob_problem(BDIR, "snmalloc-like", {"remote_queue_cap": "8"})
    assert knob == "remote_queue_cap" and "no effect" in msg and "remote_free=batch" in msg


def test_a_misspelt_name_is_one_line_with_every_valid_name():
    msg = allocators.name_problem("mimaloc-like", STRATEGIES)
    assert "did you mean 'mimalloc-like'?" in msg and "\n" not in msg
    for name in STRATEGIES + list(ROWS) + list(allocators.PRODUCTION):
        assert name in msg, name
    for name in STRATEGIES + list(ROWS) + list(allocators.PRODUCTION) + ["preload:/x.so"]:
        assert allocators.name_problem(name, STRATEGIES) is None, name


SWEEP = """[sweep]
strategies = hoard, tcmalloc-like
threads = 1
[allocators]
mi = %s
sn = snmalloc-like:remote_batch_bytes=16K
[workload larson]
"""


def test_a_sweep_file_names_rows_and_a_misspelt_one_stops_it_at_its_line():
    sw = sweepmod.Sweep(SWEEP % "mimalloc-like", "rows.ini", ncores=2, strategies=STRATEGIES)
    assert [(a[1], a[2]) for a in sw.allocators] == [
        ("hoard", {}), ("tcmalloc-like", {}), ("mimalloc-like", {}),
        ("snmalloc-like", {"remote_batch_bytes": "16K"})]
    assert {r["kind"] for r in sw.expand()} == {"hoardlab"}
    with pytest.raises(ToolError, match=r"rows\.ini:5: \[allocators\] mi: unknown strategy or "
                       r"allocator 'mimalloc-lik'; did you mean 'mimalloc-like'\?"):
        sweepmod.Sweep(SWEEP % "mimalloc-lik", "rows.ini", ncores=2, strategies=STRATEGIES)
    with pytest.raises(ToolError, match=r"rows\.ini:2: \[sweep\] strategies: unknown strategy "
                       r"'tcmalloc-lik'; did you mean 'tcmalloc-like'\? .*composed rows: "):
        sweepmod.Sweep((SWEEP % "mimalloc-like").replace("tcmalloc-like", "tcmalloc-lik"),
                       "rows.ini", ncores=2, strategies=STRATEGIES)
    with pytest.raises(ToolError, match=r"strategies: unknown strategy 'glibc' "):
        sweepmod.Sweep((SWEEP % "mimalloc-like").replace("tcmalloc-like", "glibc"),
                       "rows.ini", ncores=2, strategies=STRATEGIES)


@needs_built("src/hlconfig", "src/libhoardlab.so")
def test_strategies_lists_each_row_with_its_account():
    p = subprocess.run([TOOL, "strategies"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    section = p.stdout.split("composed rows", 1)[1].split("production allocators", 1)[0]
    for name, (_, account) in ROWS.items():
        assert re.search(r"^  %s +%s$" % (re.escape(name), re.escape(account)), section,
                         re.M), name


@needs_built("src/hlconfig", "src/libhoardlab.so", "harness/hlbench")
def test_run_with_a_misspelt_name_exits_2_with_one_line():
    p = subprocess.run([TOOL, "run", "--no-build", "larson", "-a", "snmaloc-like:tlab=on"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1, p.stderr
    assert "did you mean 'snmalloc-like'?" in p.stderr and "tcmalloc-like" in p.stderr


@needs_built("src/hlconfig", "src/libhoardlab.so", "harness/hlbench")
@pytest.mark.parametrize("name", sorted(ROWS))
def test_a_row_runs_under_its_name(name):
    """`run -a NAME:key=value`: the record is the row's (strategy as its file says, no
    'not-loaded' warning), with the knob applied."""
    p = subprocess.run([TOOL, "run", "--no-build", "threadtest", "-a", name + ":checks=on",
                        "-t", "2", "--scale", "0.01"], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert "warning" not in p.stderr, p.stderr
    assert p.stdout.startswith("threadtest under %s checks=on: 2 threads" % name), p.stdout


@needs_built("src/libhoardlab.so")
@pytest.mark.parametrize("name", sorted(ROWS))
def test_a_row_file_is_a_library_config_for_any_program(name):
    """HOARD_CONFIG=configs/rows/NAME.ini LD_PRELOAD=libhoardlab.so: a real program runs, and
    the library it loaded reports the row's elements as read from the file."""
    path, _ = ROWS[name]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOARD_CONFIG": path,
           "LD_PRELOAD": LIB, "HOARD_VERBOSE": "1"}
    p = subprocess.run(["ls", "-l", os.path.dirname(path)], env=env, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert os.path.basename(path) in p.stdout
    eff = {m.group(1): (m.group(2), m.group(3)) for m in map(EFFECTIVE.match,
                                                              p.stderr.splitlines()) if m}
    for key, value in ESSENTIAL.get(name, claims(path)).items():
        assert eff.get(key) == (normal(key, value), "file"), (key, eff.get(key))

"""The heap map (tools/hoardlab_lib/heapmap/): a heap log read, its Chrome trace-event file
checked against the format's required fields, and the two targets of issue 39 decided from
real short runs: hoard on a drain moves superblocks to the global heap; private on
producer-consumer has a heap that only grows (and hoard there has none)."""
import json
import os

import pytest

from conftest import BDIR, needs_built
from hoardlab_lib import heapmap
from hoardlab_lib.report import heapmaps

# Two heaps and the global heap 0 (G = 2: lists 0, 1, full 2, empty 3): heap 1 takes two
# superblocks from the OS, drains one to the global heap, heap 2 takes it back, and heap 1
# gives its other one back to the OS.
LOG = """# hoardlab heaplog 1
# pid 7 groups 2 interval_ms 0 dropped 0
# kind t_ns thread heap global class sb from to peer u a live, then ...
a 1000 0 1 0 3 10000 - 2 - 100 100 100 0 0 1 0
a 2000 0 1 0 3 20000 - 2 - 200 200 200 0 0 2 0
g 3000 0 1 0 3 10000 2 0 - 120 200 120 1 0 1 0
d 4000 0 1 0 3 10000 0 - - 100 100 100 0 0 1 0
a 4001 0 0 1 3 10000 - 3 1 0 100 100 0 0 0 1
d 5000 1 0 1 3 10000 3 - - 0 0 100 0 0 0 0
a 5001 1 2 0 3 10000 - 3 0 0 100 100 0 0 0 1
d 6000 0 1 0 3 20000 2 - - 0 0 0 0 0 0 0
a 6500 0 1 0 3 20000 - cut
"""


def write_log(tmp_path, text=LOG):
    p = tmp_path / "heapmap-test.log"
    p.write_text(text)
    return str(p)


def test_the_log_is_read_and_moves_found(tmp_path):
    log = heapmap.read(write_log(tmp_path))
    assert log.groups == 2 and len(log.lines) == 8          # the cut line is skipped
    ms = heapmap.moves(log)
    assert [(m.src, m.dst, m.to_global, m.from_global) for m in ms] == [
        (1, 0, True, False), (0, 2, False, True)]
    assert [ln.sb for ln in heapmap.released(log)] == [0x20000]
    f = heapmap.facts(log)
    assert heapmap.drains_to_global(f) and not heapmap.has_growing_heap(f)
    assert f["peak_superblocks"] == {0: 1, 1: 2, 2: 1}


def test_a_heap_that_only_grows():
    head = "# pid 1 groups 2 interval_ms 0 dropped 0\n"
    n = heapmap.MIN_GROWTH
    lines = ["a %d 0 3 0 1 %x - 2 - %d %d %d 0 0 %d 0" % (i, 0x1000 * (i + 1), 100 * (i + 1),
                                                          100 * (i + 1), 1000 + i, i + 1)
             for i in range(n)]
    f = heapmap.facts(heapmap.parse(head + "\n".join(lines)))
    assert f["only_growing"] == [3] and heapmap.has_growing_heap(f)
    assert not heapmap.drains_to_global(f)
    # one superblock given away: no longer a heap that only grows
    f = heapmap.facts(heapmap.parse(head + "\n".join(lines + [
        "d %d 0 3 0 1 1000 2 - - 400 400 100 0 0 4 0" % n])))
    assert f["only_growing"] == []
    # growing with the live bytes: it reuses (or what it holds is live)
    f = heapmap.facts(heapmap.parse(head + "\n".join(
        ln.replace(" %d 0 0 " % (1000 + i), " %d 0 0 " % (1000 + 100 * i))
        for i, ln in enumerate(lines))))
    assert f["only_growing"] == []
    # fewer than MIN_GROWTH superblocks: a thread's first ones of its classes
    f = heapmap.facts(heapmap.parse(head + "\n".join(lines[:n - 1])))
    assert f["only_growing"] == []


def check_trace(path):
    """The Chrome trace-event format's JSON Object Format: a traceEvents array whose every
    event has name, ph, ts, pid and tid; counters (C) carry args of numbers; complete
    events (X) a duration; flow events (s, f) an id; instant events a scope."""
    with open(path) as f:
        doc = json.load(f)
    assert isinstance(doc, dict) and isinstance(doc["traceEvents"], list)
    phases = set()
    for e in doc["traceEvents"]:
        for k in ("name", "ph", "ts", "pid", "tid"):
            assert k in e, (k, e)
        assert isinstance(e["name"], str) and isinstance(e["ts"], (int, float))
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert e["ph"] in "CXsfiM", e
        if e["ph"] == "C":
            assert e["args"] and all(isinstance(v, (int, float)) for v in e["args"].values())
        if e["ph"] == "X":
            assert e["dur"] > 0
        if e["ph"] in "sf":
            assert "id" in e
        if e["ph"] == "i":
            assert e["s"] in "gpt"
        phases.add(e["ph"])
    return doc, phases


def test_trace_file_has_the_required_fields(tmp_path):
    out = heapmap.export_trace(write_log(tmp_path), str(tmp_path / "t.json"), "test")
    doc, phases = check_trace(out)
    assert phases == set("CXsfiM")
    flows = [e for e in doc["traceEvents"] if e["ph"] in "sf"]
    assert [(e["ph"], e["tid"]) for e in flows] == [("s", 1), ("f", 0), ("s", 0), ("f", 2)]
    held = [e["args"]["held"] for e in doc["traceEvents"]
            if e["ph"] == "C" and e["name"] == "heap 1 bytes"]
    assert held == [100, 200, 200, 100, 0]


def test_report_section_only_when_a_log_exists(tmp_path):
    assert heapmaps.heapmap_section(str(tmp_path)) == []
    write_log(tmp_path)
    lines = heapmaps.heapmap_section(str(tmp_path))
    assert any("![heapmap-test](heapmap-test.png)" in ln for ln in lines)
    assert os.path.exists(tmp_path / "heapmap-test.png")


# Short runs. Producer-consumer is blowup-prodcons, which allocates the same blocks every
# round: prodcons's producer, timed, helps its consumers when they fall behind (a loaded
# machine), reusing what it frees, so whether it keeps growing depends on the load.
SHORT = {"threadtest": {"blocks": 20000, "rounds": 5, "size": 64},
         "blowup-prodcons": {"rounds": 20, "blocks": 2000}}


def short_run(tmp_path, allocator, workload, interval=0):
    paths, f = heapmap.run(BDIR, allocator, workload, str(tmp_path), threads=2,
                           params=dict(SHORT[workload], sample_interval=0, latency_every=0),
                           interval=interval, timeout=120, scale=1.0)
    for k in ("log", "png", "json"):
        assert os.path.getsize(paths[k]) > 0
    check_trace(paths["json"])
    return f, heapmap.read(paths["log"])


@needs_built("src/libhoardlab.so", "harness/hlbench", "src/hlconfig")
@pytest.mark.parametrize("allocator, workload, drains, grows", [
    ("hoard", "threadtest", True, False),       # a drain: to the global heap, and back
    ("private", "blowup-prodcons", False, True),    # the producer's heap only grows (blowup)
    ("hoard", "blowup-prodcons", True, False),      # frees reach the owner: no growth
    ("private", "threadtest", False, False),        # each thread reuses its own blocks
])
def test_targets_from_real_runs(tmp_path, allocator, workload, drains, grows):
    f, _ = short_run(tmp_path, allocator, workload)
    assert heapmap.drains_to_global(f) == drains, heapmap.summary(f)
    assert heapmap.has_growing_heap(f) == grows, heapmap.summary(f)
    if drains:
        assert f["from_global"] > 0, heapmap.summary(f)


@needs_built("src/libhoardlab.so", "harness/hlbench", "src/hlconfig")
def test_sampled_log_keeps_the_moves(tmp_path):
    """heap_log_interval: a heap's group changes written at most once a minute, so (in a
    run far shorter) hardly any `g` lines, and an `s` line at exit per heap with changes
    left unwritten; every move still written."""
    f, log = short_run(tmp_path, "hoard", "threadtest", interval=60000)
    every, _ = short_run(tmp_path / "every", "hoard", "threadtest")
    kinds = [ln.kind for ln in log.lines]
    assert log.interval_ms == 60000 and "s" in kinds
    assert kinds.count("g") <= len(f["heaps"]) and len(log.lines) < every["lines"]
    assert heapmap.drains_to_global(f) and f["from_global"] > 0


# --- issue 48: the defaults named, a bounded log, each heap's role ------------------------------

def test_heapmap_help_names_its_defaults_and_they_are_short():
    from hoardlab_lib import cli
    a = cli.parser().parse_args(["heapmap"])
    assert (a.workload, a.threads, a.scale) == (heapmap.WORKLOAD, heapmap.THREADS,
                                                heapmap.SCALE)
    assert a.scale < 1                          # scale 1 ran 2.5 minutes and wrote 463 MB
    text = " ".join(cli.parser()._subparsers._group_actions[0].choices["heapmap"]
                    .format_help().split())
    for words in ("%s under hoard at %d threads, scale %g" % (
            heapmap.WORKLOAD, heapmap.THREADS, heapmap.SCALE), "default %s" % heapmap.WORKLOAD,
            "%d MiB" % (heapmap.LOG_CAP >> 20)):
        assert words in text, words


def test_a_log_past_its_cap_is_cut_at_a_whole_line_with_a_note(tmp_path):
    path = write_log(tmp_path, LOG + "".join("g %d 0 1 0 3 10000 2 0 - 120 200 120 1 0 1 0\n"
                                             % (7000 + i) for i in range(1000)))
    assert heapmap.cap_log(path, cap=1 << 20) is None         # fits: untouched
    size = os.path.getsize(path)
    note = heapmap.cap_log(path, cap=size // 2)
    assert "reached its cap" in note and "--interval" in note
    assert os.path.getsize(path) <= size // 2
    text = open(path).read()
    assert text.endswith("\n") and len(heapmap.read(path).lines) > 8
    assert heapmap.summary(dict(heapmap.facts(heapmap.read(path)), note=note)).endswith(note)


def test_each_heap_is_named_with_its_thread_and_a_heap_full_of_others_frees_says_so():
    # heap 3 (thread 1, a producer) counts 2 MiB in use while the process has 0.1 MiB live:
    # its blocks were freed onto heap 2 (thread 0), free but unusable to heap 3
    head = "# pid 7 groups 2 interval_ms 0 dropped 0\n"
    lines = ["a %d 1 3 0 3 %x - 2 - %d %d %d 0 0 %d 0" % (1000 + i, 0x10000 * (i + 1),
                                                          (i + 1) << 16, (i + 1) << 16,
                                                          100000, i + 1) for i in range(32)]
    lines.append("a 9000 0 2 0 3 900000 - 2 - 4096 65536 100000 0 0 1 0")
    f = heapmap.facts(heapmap.parse(head + "\n".join(lines)))
    assert heapmap.label(3, f) == "heap 3 (thread 1)" and heapmap.label(2, f) == \
        "heap 2 (thread 0)"
    roles = heapmap.roles(f)
    mine = [r for r in roles if r.startswith("heap 3")][0]
    assert "thread 1's heap" in mine and "free but unusable to it" in mine
    assert [r for r in roles if r.startswith("heap 2")] == ["heap 2: thread 0's heap"]


@needs_built("src/libhoardlab.so", "harness/hlbench", "src/hlconfig")
def test_heapmap_says_what_it_does_as_it_goes(tmp_path, capsys):
    heapmap.run(BDIR, "hoard", "threadtest", str(tmp_path), threads=2, timeout=120,
                params=dict(SHORT["threadtest"], sample_interval=0, latency_every=0))
    err = capsys.readouterr().err
    for words in ("heapmap: running threadtest under hoard, 2 threads", "drawing the map",
                  "exporting the Chrome trace"):
        assert words in err, err

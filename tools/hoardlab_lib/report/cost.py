"""Instructions per malloc+free pair (callgrind), from cost.json."""
import json
import os

from .. import cost


def cost_section(outdir, meta):
    """From cost.json (a sweep with `cost = yes`, or `hoardlab cost --json` copied there)."""
    title = ["## Instructions per malloc+free pair (callgrind)", ""]
    err = (meta.get("cost") or {}).get("error")
    try:
        with open(os.path.join(outdir, "cost.json")) as f:
            results = json.load(f)
        tab = cost.table(results)
    except FileNotFoundError:
        return title + ["Not measured: %s" % err, ""] if err else []
    except (OSError, ValueError, KeyError, TypeError) as e:
        return title + ["`cost.json` could not be read: %r" % e, ""]
    names = ",".join(dict.fromkeys(r["allocator"] for r in results))
    pairs = results[0].get("pairs") or cost.PAIRS
    return title + [
        "Counted by valgrind's callgrind after the timed runs: `harness/hlcost` mallocs and "
        "frees a block of the case's size (remote: a second thread mallocs, the main thread "
        "frees) %d and 3 x %d times, and a cell is the slope (I(3 x %d) - I(%d)) / (2 x %d), "
        "so start-up and exit cancel. Instruction counts are deterministic, unlike the timings "
        "above: the machine's load does not change them, and a rerun repeats them (except "
        "where an allocator's own path varies from run to run, as jemalloc's does in the "
        "remote case, by a few percent). Strategies run with their default configuration. `tools/hoardlab cost -a %s%s` reproduces this table."
        % (pairs, pairs, pairs, pairs, pairs, names,
           "" if pairs == cost.PAIRS else " --pairs %d" % pairs), "", tab, "",
        "front: the core's code around the strategy (init check, size routing, dispatch, "
        "free routing); counting: the statistics, the pair less the same pair with counting "
        "= off (`uncounted`, fast paths built without counting; older results split stats.h's "
        "lines instead, `stats`); strategy: the rest of libhoardlab.so, the "
        "strategy and the mechanisms it uses; caller: hlcost's loop and the PLT, the same "
        "for every allocator. `tools/hoardlab cost --functions` splits a pair per function.",
        ""]

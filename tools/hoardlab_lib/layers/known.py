"""The allow-list: the loops and upward edges that exist today and are to be removed, per
tree. A loop is the set of its files (or modules); an upward edge is (user, definer). Each
entry says which issue removes it and why it is still here. Remove an entry when its knot is
untied: the tests fail while an entry lists something that no longer exists, and
`hoardlab layers` fails on anything not listed, so the list can only shrink. (A loop is known
by its set of files: one more use among the same files passes, one more file does not.)
"""

EMPTY = {"loops": {}, "upward": {}}

# tools/'s import loops, each hidden by an import inside a function; issue 35 restructures
# tools/hoardlab_lib into packages (report/, slurm/). Empty this dict when that is merged.
def _lib(*names):
    return frozenset("hoardlab_lib." + n for n in names)


TOOLS_LOOPS = {
    _lib("report", "report_history", "report_hoard", "report_hoard2026", "report_michael",
         "report_programs", "report_remote", "report_series", "plots", "attribute"):
        (35, "report.py is the helpers, ten sections and the assembler; plots.py and "
             "report_programs/report_series use each other's private plotting kit"),
    _lib("cli", "slurm", "slurm_collect", "slurm_task"):
        (35, "the sweep orchestration slurm needs lives in cli.py"),
    _lib("nodes", "tidy"):
        (35, "nodes.py reads runs.csv through tidy.py, which imports nodes"),
}

KNOWN = {
    "src": EMPTY,
    "harness": EMPTY,
    "tools": {"loops": TOOLS_LOOPS, "upward": {}},
}

NOTHING_KNOWN = {"src": EMPTY, "harness": EMPTY, "tools": EMPTY}   # `hoardlab layers --strict`

"""Sweeps: a sweep file read into runs, run in its shuffled order with the machine's other
load waited out, and its results folder written up to its report. Above the report (which
it writes) and the run kit (runkit/: one run, its checks and records).

The package's one face (the rest imports `sweeps`, never a module of it). Bottom up:
values.py, the values a sweep file's keys take; variants.py, the allocators it names and
their variants under [knobs]; sweepfile.py, the file parsed (Sweep), its runs, their order;
load.py, the machine's other load, seen per run and waited out; calibrate.py, runs sized to
the machine; execute.py, the runs executed, disturbed ones redone, undecided groups repeated;
orchestrate.py, a sweep from its file to its report (also the Slurm commands' steps).
"""
from .orchestrate import (build_for, make_report, out_dir_for, run_sweep, strategies_or_none,
                          validate_sweep)
from .sweepfile import Sweep, read_sweep, shuffled
from .values import LOAD_KEYS, load_policy, parse_threads, split_list

__all__ = ["build_for", "make_report", "out_dir_for", "run_sweep", "strategies_or_none",
           "validate_sweep", "Sweep", "read_sweep", "shuffled", "LOAD_KEYS", "load_policy",
           "parse_threads", "split_list"]

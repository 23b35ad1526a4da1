"""The run kit: one run of hlbench (or of a real program) under one allocator, checked before it
starts, run, and recorded. Below the report, which reads what this package writes; sweeps/
drives it.

The package's one face (the rest imports `runkit`, never a module of it). Bottom up:
check.py, mistakes in a sweep or an allocator spec, found before the first run (asking the
built hlconfig and hlbench); runner.py, one hlbench process and its records, the progress
line of many; meta.py, meta.json (machine, topology, compiler, commit, configurations);
nodes.py, the node a run ran on and kinds of node; tidy.py, runs.csv, rounds.csv and
series.csv: the schema, writing, reading.
"""
from .check import allocator as check_allocator, knob_problem, sweep as check_sweep
from .meta import (collect as collect_meta, compiler, cpu_model, git_info, loadavg, machine,
                   read as read_meta, topology, write as write_meta)
from .nodes import (KIND_DIR, header_line as kinds_header_line, here as this_node,
                    kinds as node_kinds, name as node_name, topology_text)
from .runner import (PRELOAD_IGNORED, RUN_TIMEOUT, Progress, call, fmt_time, hlbench_argv,
                     interruptible, parse_records, run_one, signal_name, stop)
from .tidy import (COMPRESSED, DERIVED_FIELDS, PREFIXES, ROUND_COLUMNS, RUN_COLUMNS,
                   SERIES_COLUMNS, columns_for, hoardlab_fields, knobs_text, read_csv,
                   read_fields, read_series, rows_for, series_columns, series_rows,
                   series_summary, table_file, time_weighted_mean, write_csv, write_series)

__all__ = [
    "check_allocator", "knob_problem", "check_sweep",
    "collect_meta", "compiler", "cpu_model", "git_info", "loadavg", "machine", "read_meta",
    "topology", "write_meta",
    "KIND_DIR", "kinds_header_line", "this_node", "node_kinds", "node_name", "topology_text",
    "PRELOAD_IGNORED", "RUN_TIMEOUT", "Progress", "call", "fmt_time", "hlbench_argv",
    "interruptible", "parse_records", "run_one", "signal_name", "stop",
    "COMPRESSED", "DERIVED_FIELDS", "PREFIXES", "ROUND_COLUMNS", "RUN_COLUMNS",
    "SERIES_COLUMNS", "columns_for", "hoardlab_fields", "knobs_text", "read_csv",
    "read_fields", "read_series", "rows_for", "series_columns", "series_rows",
    "series_summary", "table_file", "time_weighted_mean", "write_csv", "write_series",
]

"""The heap over time, from a heap log (`heap_log = PATH`, src/core/instruments/heaplog.c),
and `hoardlab heapmap`. The package's one face (the rest imports `heapmap`, never a module of
it). Bottom up: log.py, the log read and what it shows (superblocks moving to and from the
global heap, a heap that only grows, each heap's role); png.py, the heap map (heaps x time,
coloured by fullness) as a PNG; trace.py, the log as a Chrome trace-event file (Perfetto,
chrome://tracing); command.py, `hoardlab heapmap`'s run: a workload with the log on, the log
capped, the map drawn and the trace exported.
"""
from .command import HEAP_STRATEGIES, LOG_CAP, SCALE, THREADS, WORKLOAD, cap_log, run
from .log import (MIN_GROWTH, drains_to_global, facts, has_growing_heap, label, moves, parse,
                  read, released, roles, summary)
from .png import draw
from .trace import export_trace

__all__ = ["HEAP_STRATEGIES", "LOG_CAP", "SCALE", "THREADS", "WORKLOAD", "cap_log", "run",
           "MIN_GROWTH", "drains_to_global", "facts", "has_growing_heap", "label", "moves",
           "parse", "read", "released", "roles", "summary", "draw", "export_trace"]

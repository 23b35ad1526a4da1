"""`hoardlab layers`: the use graphs of the house, checked for loops and for their layer order.

- src/ (libhoardlab's core) and harness/ (hlbench): a file may use only files of its own layer
  or below (order.py, the one place the orders are written; the core's layers are its
  folders), and no files may use each other
  in a loop. The graph comes from the object files' symbols and the headers' code
  (cgraph.py).
- tools/: no module may import another in a loop, however the import is hidden (pygraph.py).

- src/core's faces (faces.py): a file outside a core folder F includes of F's headers only
  its face F/F.h, and a face declares only what F defines. Read from the text, no build.
  Every run checks it; `--faces` runs it alone.

Prints, per tree, its size, every upward edge and every loop; fails (exit 1) on one that the
allow-list (known.py) does not name, and on an entry of it that is gone. `--strict` allows
nothing. The modules, bottom up: order (the layer orders and trees), known (the allow-list),
creader (reading C text), cgraph (a C tree's graph), pygraph (tools/'s import graph), rules
(upward edges, loops, the text), faces (the folders' faces); this face runs them over the
three trees.
"""
import os

from ..common import REPO
from .cgraph import graph, headers, objects, source_graph, symbol_graph
from .creader import header_code, sections, strip
from .faces import check_faces, face_name, faces_report
from .known import EMPTY, KNOWN, NOTHING_KNOWN
from .order import (ALLOWED, HARNESS, HARNESS_LAYERS, HEADER_NODE, LAYERS, SRC, SRC_FOLDERS,
                    TARGETS, TOOLS, TREES, layer_of)
from .pygraph import import_graph
from .rules import calls, check, components, cycle_through, loops, stale, upward

__all__ = ["ALLOWED", "EMPTY", "HARNESS", "HARNESS_LAYERS", "HEADER_NODE", "KNOWN", "LAYERS",
           "NOTHING_KNOWN", "SRC", "SRC_FOLDERS", "TARGETS", "TOOLS", "TREES",
           "calls", "check", "check_faces", "components", "cycle_through", "face_name",
           "faces_report", "graph", "header_code", "headers", "import_graph", "layer_of",
           "loops", "objects", "report", "section_graphs", "sections", "source_graph", "stale",
           "strip", "symbol_graph", "upward"]

def section_graphs(bdir, src=None, harness=None, tools=None):
    """[(tree, its graph)] of the three trees; src, harness, tools: other roots to read (a
    copy with a planted loop), else the repository's."""
    return [(SRC, graph(bdir, src, SRC)),
            (HARNESS, graph(bdir, harness, HARNESS)),
            (TOOLS, import_graph(tools or os.path.join(REPO, TOOLS.root)))]


def report(bdir, src=None, known=KNOWN, harness=None, tools=None, faces=False):
    """(failed, text) of the whole house: src/'s and harness/'s objects of the build in bdir,
    and tools/'s import graph, each checked against its entry of `known`; faces: src/core's
    faces too (faces.py)."""
    failed, texts = False, []
    for tree, edges in section_graphs(bdir, src, harness, tools):
        bad, text = check(edges, known[tree.name], tree)
        failed = failed or bad
        texts.append(text)
    if faces:
        bad, text = faces_report(src or os.path.join(REPO, SRC.root))
        failed = failed or bad
        texts.append(text)
    return failed, "\n".join(texts)

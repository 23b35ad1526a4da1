"""The shape of tools/ (issues 35 and 64), with room under each cap: at most MAX_ROOT modules at
the root of hoardlab_lib (the rest in packages), no module over MAX_LINES lines, no class over
MAX_CLASS, no function over MAX_FUNCTION; no import inside a function except one that defers a
slow optional dependency (and says so on its line); a package is imported through its face,
its __init__, never a module of it from outside the package; and docs/tool.md's list of
modules ("The code") is the tree's.

Import loops among tools/'s modules are the layer check's (tools/hoardlab_lib/layers/pygraph.py,
tests/tools/test_layers.py), which reads the same import graph the face check below reads
(layers.import_graph) but checks loops only. The tests (tests/tools) may read a package's
modules directly: they test each module where it is."""
import ast
import glob
import os
import re

from conftest import REPO
from hoardlab_lib import layers

MAX_ROOT = 18
MAX_LINES = 400
MAX_CLASS = 150
MAX_FUNCTION = 80
DEFERRED = "deferred:"          # the comment that allows an import inside a function
TOOLS = os.path.join(REPO, "tools")
LIB = "hoardlab_lib"


def sources():
    """{path under tools/: text} of every Python file: the package and the hoardlab script."""
    paths = glob.glob(os.path.join(TOOLS, LIB, "**", "*.py"), recursive=True)
    out = {}
    for p in paths + [os.path.join(TOOLS, "hoardlab")]:
        with open(p) as f:
            out[os.path.relpath(p, TOOLS)] = f.read()
    return out


def too_long(text, name):
    """[(what, lines)] over the limits in one file's text: the module, a class, a function."""
    out = []
    n = len(text.splitlines())
    if n > MAX_LINES:
        out.append((name, n))
    for node in ast.walk(ast.parse(text)):
        length = getattr(node, "end_lineno", 0) - getattr(node, "lineno", 0) + 1
        if isinstance(node, ast.ClassDef) and length > MAX_CLASS:
            out.append(("%s: class %s" % (name, node.name), length))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and length > MAX_FUNCTION:
            out.append(("%s: %s()" % (name, node.name), length))
    return out


def local_imports(text, name):
    """Imports inside a function whose line does not say it defers a slow dependency."""
    lines = text.splitlines()
    out = []
    for fn in ast.walk(ast.parse(text)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and \
                        DEFERRED not in lines[node.lineno - 1]:
                    out.append("%s:%d: %s" % (name, node.lineno, ast.unparse(node)))
    return out


def face_bypasses(edges):
    """The import edges {(importer, imported): [where]} (layers.import_graph's, dotted names)
    that reach a module inside a package of hoardlab_lib from outside that package:
    ['importer -> imported (where)']. hoardlab_lib itself is the tool, not a package with a
    face: its root modules import each other freely."""
    out = []
    for (importer, imported), where in sorted(edges.items()):
        parts = imported.split(".")
        for k in range(2, len(parts)):
            package = ".".join(parts[:k])
            if importer != package and not importer.startswith(package + "."):
                out.append("%s -> %s (%s)" % (importer, imported, "; ".join(where)))
                break
    return out


def root_modules():
    return sorted(f for f in os.listdir(os.path.join(TOOLS, LIB))
                  if f.endswith(".py") and f != "__init__.py")


def tree_modules():
    """Every package (`report/`) and module (`report/series.py`) of hoardlab_lib, by its path,
    but the __init__s (a package's line in the docs is its face's); a folder without Python
    (lab/templates/) is no package."""
    out = set()
    for d, dirs, files in os.walk(os.path.join(TOOLS, LIB)):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        rel = os.path.relpath(d, os.path.join(TOOLS, LIB))
        prefix = "" if rel == "." else rel + "/"
        if prefix and "__init__.py" in files:
            out.add(prefix)
        out.update(prefix + f for f in files if f.endswith(".py") and f != "__init__.py")
    return out


def listed_modules(text):
    """[path] of the packages and modules docs/tool.md lists under "## The code": the code block's lines
    below `tools/hoardlab_lib/` whose first word is `NAME/` or `NAME.py`, nested by their
    indentation (two spaces a level, at most one level below the line before); other lines
    continue a description."""
    section = text.split("## The code", 1)[1]
    block = section.split("```", 2)[1]
    out, stack, inside = [], [], False
    for line in block.splitlines():
        if line.strip() == "tools/%s/" % LIB:
            inside = True
            continue
        m = re.match(r"( *)([\w]+(?:\.py|/))(?:\s|$)", line)
        if not inside or not m:
            continue
        depth = len(m.group(1)) // 2 - 1
        if len(m.group(1)) % 2 or depth < 0 or depth > len(stack):
            continue
        stack[depth:] = [m.group(2)]
        if m.group(2) != "__init__.py":
            out.append("".join(stack))
    return out


def path_of(name):
    """docs/tool.md's path of a module named by its dotted name (layers.import_graph's):
    hoardlab_lib.report.series -> report/series.py, the package hoardlab_lib.report -> report/."""
    rel = name.split(".")[1:]
    if os.path.isdir(os.path.join(TOOLS, LIB, *rel)):
        return "/".join(rel) + "/"
    return "/".join(rel) + ".py"


def upward_in_the_list(order, edges):
    """The imports that go to a module listed below the importer, but a face's own imports of
    its package's modules: ['importer -> imported']."""
    where = {p: i for i, p in enumerate(order)}
    out = []
    for importer, imported in sorted(edges):
        if not importer.startswith(LIB + ".") or imported.startswith(importer + "."):
            continue
        a, b = path_of(importer), path_of(imported)
        if a in where and b in where and where[b] >= where[a]:
            out.append("%s -> %s" % (a, b))
    return out


def test_no_module_class_or_function_over_the_limits():
    over = [x for p, t in sorted(sources().items()) for x in too_long(t, p)]
    assert not over, over


def test_the_limits_catch_a_long_function_a_long_class_and_a_long_module():
    body = "def f():\n" + "    x = 1\n" * MAX_FUNCTION
    assert too_long(body, "m.py") == [("m.py: f()", MAX_FUNCTION + 1)]
    cls = "class C:\n" + "    x = 1\n" * MAX_CLASS
    assert too_long(cls, "m.py") == [("m.py: class C", MAX_CLASS + 1)]
    assert too_long("x = 1\n" * (MAX_LINES + 1), "m.py") == [("m.py", MAX_LINES + 1)]


def test_few_modules_at_the_root():
    assert len(root_modules()) <= MAX_ROOT, root_modules()


def test_no_import_inside_a_function_but_a_deferred_one():
    found = [x for p, t in sorted(sources().items()) for x in local_imports(t, p)]
    assert not found, found
    planted = "def f():\n    from . import cli\n\n\ndef g():\n    import matplotlib  # %s slow\n"
    assert local_imports(planted % DEFERRED, "m.py") == ["m.py:2: from . import cli"]


def test_every_package_is_imported_through_its_face():
    assert face_bypasses(layers.import_graph(TOOLS)) == []


def test_a_face_bypass_is_found():
    edges = {("hoardlab_lib.report.plots", "hoardlab_lib.verdicts.today"): ["line 13"],
             ("hoardlab_lib.report.plots", "hoardlab_lib.verdicts"): ["line 12"],
             ("hoardlab_lib.report.plots", "hoardlab_lib.report.series"): ["line 14"],
             ("hoardlab_lib.report", "hoardlab_lib.report.plots"): ["line 20"],
             ("hoardlab_lib.lab.correct", "hoardlab_lib.selftest"): ["line 13"],
             ("hoardlab_lib.a.b", "hoardlab_lib.a.c.d"): ["line 1"],
             ("hoardlab_lib.x", "hoardlab_lib.a.c.d"): ["line 2"],
             ("hoardlab", "hoardlab_lib.cli"): ["line 9"]}
    assert face_bypasses(edges) == [
        "hoardlab_lib.a.b -> hoardlab_lib.a.c.d (line 1)",
        "hoardlab_lib.report.plots -> hoardlab_lib.verdicts.today (line 13)",
        "hoardlab_lib.x -> hoardlab_lib.a.c.d (line 2)"]


def test_docs_list_every_module_of_the_tree():
    with open(os.path.join(REPO, "docs", "tool.md")) as f:
        listed = set(listed_modules(f.read()))
    tree = tree_modules()
    assert sorted(tree - listed) == [], "in the tree, not in docs/tool.md"
    assert sorted(listed - tree) == [], "in docs/tool.md, not in the tree"


def test_the_docs_list_is_read_by_its_indentation():
    text = ("## The code\n\n```\ntools/hoardlab          the command\ntools/" + LIB + "/\n"
            "  common.py             paths,\n                        common.py continued\n"
            "  report/               the report\n    __init__.py         the assembler\n"
            "    header.py           a section\n  cli.py                the parser\n```\n")
    assert listed_modules(text) == ["common.py", "report/", "report/header.py", "cli.py"]


def test_the_docs_list_goes_the_way_the_imports_go():
    with open(os.path.join(REPO, "docs", "tool.md")) as f:
        order = listed_modules(f.read())
    assert upward_in_the_list(order, layers.import_graph(TOOLS)) == []
    edges = {("hoardlab_lib.report", "hoardlab_lib.report.series"): [],     # a face: fine
             ("hoardlab_lib.report.purge", "hoardlab_lib.report.series"): [],
             ("hoardlab_lib.common", "hoardlab_lib.cli"): []}
    assert upward_in_the_list(order, edges) == ["common.py -> cli.py"]

"""The shape of tools/ (issue 35): no module over MAX_LINES lines, no function over
MAX_FUNCTION lines, no import inside a function except one that defers a slow optional
dependency (and says so on its line). Import loops among tools/'s modules are the layer
check's (tools/hoardlab_lib/layers/pygraph.py, tests/tools/test_layers.py)."""
import ast
import glob
import os

from conftest import REPO

MAX_LINES = 450
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
    """[(what, lines)] over the limits in one file's text."""
    out = []
    n = len(text.splitlines())
    if n > MAX_LINES:
        out.append((name, n))
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION:
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


def test_no_module_or_function_over_the_limits():
    over = [x for p, t in sorted(sources().items()) for x in too_long(t, p)]
    assert not over, over


def test_the_limits_catch_a_long_function_and_a_long_module():
    body = "def f():\n" + "    x = 1\n" * MAX_FUNCTION
    assert too_long(body, "m.py") == [("m.py: f()", MAX_FUNCTION + 1)]
    assert too_long("x = 1\n" * (MAX_LINES + 1), "m.py") == [("m.py", MAX_LINES + 1)]


def test_no_import_inside_a_function_but_a_deferred_one():
    found = [x for p, t in sorted(sources().items()) for x in local_imports(t, p)]
    assert not found, found
    planted = "def f():\n    from . import cli\n\n\ndef g():\n    import matplotlib  # %s slow\n"
    assert local_imports(planted % DEFERRED, "m.py") == ["m.py:2: from . import cli"]

"""The shape of tools/ (issue 35): no module over MAX_LINES lines, no function over
MAX_FUNCTION lines, no import inside a function except one that defers a slow optional
dependency (and says so on its line), and no import loop among tools/'s modules, counting
the imports inside functions and those of a package's __init__."""
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


def module_name(path):
    """tools/-relative path -> dotted module ('hoardlab_lib/report/__init__.py' ->
    'hoardlab_lib.report')."""
    parts = path[:-len(".py")].split(os.sep)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(srcs):
    """{module: {modules of tools/ it imports}}, every import statement anywhere in it
    (inside functions too). `from . import x` names the module x when it is one."""
    mods = {module_name(p): (p, t) for p, t in srcs.items() if p.endswith(".py")}
    graph = {}
    for mod, (path, text) in mods.items():
        package = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                base = ".".join(x for x in (base if node.level else "", node.module or "")
                                if x)
                for a in node.names:
                    full = "%s.%s" % (base, a.name)
                    edges.add(full if full in mods else base)
            elif isinstance(node, ast.Import):
                edges |= {a.name for a in node.names}
        graph[mod] = {e for e in edges if e in mods and e != mod}
    return graph


def cycle(graph):
    """One import loop as a list of modules, or None."""
    state = {}

    def visit(m, stack):
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n, stack + [n])
                if found:
                    return found
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [m])
            if found:
                return found
    return None


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


def test_no_import_loop_among_tools_modules():
    graph = import_graph(sources())
    assert "hoardlab_lib.report.hoard" in graph["hoardlab_lib.report"]    # the graph is read
    assert cycle(graph) is None, " -> ".join(cycle(graph))


def test_a_planted_loop_is_found(tmp_path):
    srcs = {os.path.join(LIB, "__init__.py"): "",
            os.path.join(LIB, "a.py"): "def f():\n    from . import b\n",
            os.path.join(LIB, "b.py"): "from .a import f\n",
            os.path.join(LIB, "p", "__init__.py"): "from . import q\n",
            os.path.join(LIB, "p", "q.py"): "from .. import a\n"}
    assert cycle(import_graph(srcs)) == ["hoardlab_lib.a", "hoardlab_lib.b", "hoardlab_lib.a"]
    srcs[os.path.join(LIB, "b.py")] = "from .p import q\n"
    srcs[os.path.join(LIB, "a.py")] = "from . import p\n"
    srcs[os.path.join(LIB, "p", "q.py")] = "from .. import a\n"
    assert cycle(import_graph(srcs)) == ["hoardlab_lib.a", "hoardlab_lib.p",
                                         "hoardlab_lib.p.q", "hoardlab_lib.a"]

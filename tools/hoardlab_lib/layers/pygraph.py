"""The import graph of tools/: {(importer, imported): [where]} over its Python modules, named
by their dotted path from tools/ (`hoardlab_lib.cli`, `hoardlab_lib.layers.order`; the
`hoardlab` script is `hoardlab`).

Every import counts, wherever it stands: at the top, inside a function (the usual way to hide
a loop from Python), under `if` or `try`, and a package __init__'s relative imports. Only
imports of tools/'s own modules are edges:

- `import a.b.c` and `from a.b import c`: a.b.c when that is a module of tools/ (else the
  package a.b whose name it imports);
- `from . import x` in package p (or in a module of p): p.x when that is a module, else p
  (its __init__, which defines x);
- a package's __init__ running before its submodule is not an edge: only what a file names.
"""
import ast
import collections
import os

SCRIPTS = ("hoardlab",)                 # Python files of tools/ without .py


def modules(root):
    """{module name: (path, is a package)} of the Python files under root."""
    out = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__" and not x.startswith("."))
        rel = os.path.relpath(d, root)
        parts = [] if rel == "." else rel.split(os.sep)
        for f in sorted(files):
            if f == "__init__.py":
                out[".".join(parts)] = (os.path.join(d, f), True)
            elif f.endswith(".py"):
                out[".".join(parts + [f[:-3]])] = (os.path.join(d, f), False)
            elif not parts and f in SCRIPTS:
                out[f] = (os.path.join(d, f), False)
    out.pop("", None)                   # a root __init__ would have no name
    return out


def targets(node, name, is_pkg, mods):
    """{module of `mods`: [names imported]} of one import statement."""
    out = collections.defaultdict(list)
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in mods:
                out[alias.name].append(alias.name)
        return out
    if node.level:
        base = name.split(".") if is_pkg else name.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
        pkg = ".".join(base + ([node.module] if node.module else []))
    else:
        pkg = node.module or ""
    for alias in node.names:
        sub = pkg + "." + alias.name if pkg else alias.name
        if sub in mods:
            out[sub].append(alias.name)
        elif pkg in mods:
            out[pkg].append(alias.name)
    return out


def file_imports(path, name, is_pkg, mods):
    """[(imported module, where)] of one file, where = 'line N: from . import x, y' (with
    ' (in a function)' for an import inside a function)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    inner = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner.update(id(n) for n in ast.walk(fn) if n is not fn)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        head = "import " if isinstance(node, ast.Import) else \
            "from %s%s import " % ("." * node.level, node.module or "")
        for target, names in targets(node, name, is_pkg, mods).items():
            out.append((node.lineno, target, "line %d: %s%s%s" % (
                node.lineno, head, ", ".join(names),
                " (in a function)" if id(node) in inner else "")))
    return [(target, where) for _, target, where in sorted(out)]


def import_graph(root):
    """{(importer, imported): [where]} of tools/ (root)."""
    mods = modules(root)
    edges = collections.defaultdict(list)
    for name, (path, is_pkg) in sorted(mods.items()):
        for target, where in file_imports(path, name, is_pkg, mods):
            if target != name:
                edges[(name, target)].append(where)
    return dict(edges)

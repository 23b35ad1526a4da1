"""The use graph of a C tree (src/ or harness/): {(user, definer): [what is used]}, from three
readings, so that a use hidden in a header is seen:

1. Object files (nm): a symbol a file's object uses and another file's object defines. Code
   inlined from a header is compiled into the including file, so the calls it makes count
   for that file.
2. Headers' code: the bodies of each header's inline functions and macros (comments and
   strings removed). An identifier there that another node defines (a function or variable
   per nm, or an inline function or macro of another node's header) is an edge of the
   header's node: tlab.h's fast paths count with `HL_COUNT` of stats.h, so
   `cache/tlab -> base/stats`. Plain declarations (prototypes, externs), types and enum
   constants are not uses: a prototype names a function without calling it, and a struct's
   layout or an enum's value is data.
3. Sources' uses of headers: an identifier in a .c file that another node's header defines as
   an inline function or macro (these leave no symbol in the object file).

A header is its stem's node, its sections those of the files they name (creader.py), and a
tree's HEADER_NODE gives a header without a .c of its stem to the file whose code it is.
"""
import collections
import glob
import os
import subprocess

from ..common import REPO, ToolError
from .creader import IDENT, header_code, sections, strip
from .order import SRC


def objects(bdir, tree=SRC):
    """{node: object path} of the tree's objects, e.g. 'heap' or 'strategies/hoard'."""
    out = {}
    for o in glob.glob(os.path.join(bdir, tree.objdir, "*.o")):
        base = os.path.basename(o)[:-len(".c.o")]
        for oprefix, nprefix in tree.objmap:
            if base.startswith(oprefix):
                out[nprefix + base[len(oprefix):]] = o
                break
    if not out:
        raise ToolError("no object files under %s/%s: build first" % (bdir, tree.objdir))
    return out


def symbol_graph(objs):
    """({symbol: definer}, {(user, definer): [symbols]}) from the object files (nm)."""
    defs, uses = {}, collections.defaultdict(set)
    node = {path + ":": name for name, path in objs.items()}
    # one nm for all: it heads each object's symbols with a line "PATH:"
    p = subprocess.run(["nm"] + sorted(objs.values()), capture_output=True, text=True,
                       check=True)
    name = None
    for line in p.stdout.splitlines():
        parts = line.split()
        if line in node:
            name = node[line]
        elif len(parts) == 3 and parts[1] in "TDBRV":
            defs[parts[2]] = name
        elif len(parts) == 2 and parts[0] == "U":
            uses[name].add(parts[1])
    edges = collections.defaultdict(list)
    for user, syms in uses.items():
        for s in sorted(syms):
            definer = defs.get(s)
            if definer and definer != user:
                edges[(user, definer)].append(s)
    return defs, edges


def headers(root, tree=SRC):
    """[(node, header file, text section)] of every header of the tree's source folders. A
    section heading names a file by its name alone (`sizeclass.c`): its node is that of the
    folder holding it."""
    where = {}                                # a file's stem -> its node, e.g. heap/heap
    for d, prefix in tree.dirs:
        for path in sorted(glob.glob(os.path.join(root, d, "*.[ch]"))):
            where.setdefault(os.path.basename(path)[:-2], prefix + os.path.basename(path)[:-2])
    out = []
    for d, prefix in tree.dirs:
        for h in sorted(glob.glob(os.path.join(root, d, "*.h"))):
            stem = prefix + os.path.basename(h)[:-2]
            stem = tree.header_node.get(stem, stem)
            for owner, text in sections(h, stem, prefix, where):
                out.append((owner, os.path.relpath(h, os.path.join(root, d)), text))
    return out


def source_path(root, node, tree=SRC):
    """The .c file of a node: the folder of the longest node prefix it carries."""
    d, prefix = max((dp for dp in tree.dirs if node.startswith(dp[1])), key=lambda dp: len(dp[1]))
    return os.path.join(root, d, node[len(prefix):] + ".c")


def source_graph(root, sym_defs, nodes, tree=SRC):
    """{(user, definer): [names]} from headers' code (2.) and sources' uses of it (3.)."""
    hdr = []                                  # (node, header, {name: refs})
    hdefs = {}                                # name -> node defining it in a header
    for owner, hname, text in headers(root, tree):
        code = header_code(text)
        hdr.append((owner, hname, code))
        for name in code:
            hdefs.setdefault(name, owner)
    edges = collections.defaultdict(list)
    for owner, hname, code in hdr:
        for name, refs in sorted(code.items()):
            for r in sorted(set(refs)):
                definer = sym_defs.get(r) or hdefs.get(r)
                ref = "%s: %s" % (hname, r)
                if definer and definer != owner and ref not in edges[(owner, definer)]:
                    edges[(owner, definer)].append(ref)
    for node in nodes:
        path = source_path(root, node, tree)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            names = set(IDENT.findall(strip(f.read())))
        for r in sorted(names):
            definer = hdefs.get(r)
            if definer and definer != node:
                edges[(node, definer)].append(r)
    return edges


def graph(bdir, root=None, tree=SRC):
    """{(user, definer): [what is used]} over the tree's files: objects and headers."""
    objs = objects(bdir, tree)
    sym_defs, edges = symbol_graph(objs)
    root = root or os.path.join(REPO, tree.root)
    for key, names in source_graph(root, sym_defs, objs, tree).items():
        have = set(edges.get(key, ()))
        edges.setdefault(key, []).extend(n for n in names if n not in have)
    return dict(edges)

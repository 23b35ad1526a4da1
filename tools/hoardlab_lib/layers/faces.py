"""The faces of src/core's folders (STYLE.md item 22): each folder src/core/F/ has
one header named after it, F/F.h, its face, which is the folder's whole interface to the rest
of src/ (snmalloc's mem/mem.h, ds/ds.h):

(a) a file of src/ outside F (another core folder, src/strategies/, src/hlconfig.c) includes
    of F's headers only F.h; F's own files include what they like;
(b) a face declares only what its folder defines: every function or variable declared (a
    prototype, an `extern`) in F.h, or in a header of F that F.h includes (transitively, within
    F: a face may be a list of F's inner headers), is defined in a .c of F (a function body or a
    variable without `extern`; or a name passed to a macro called at the top level of a .c of F,
    the way HL_MALLOC_PAIR defines functions), or is a static inline function of F's headers.
    A folder without a face is one violation of (a) (its face is missing) and has nothing to
    check under (b).

Read statically, from the text (creader.strip: comments and strings removed), no object
files and no build: an `#include "NAME"` names the header of that basename in a core folder
(meson puts every core folder on the include path). Macros that declare (HL_DECLARE_PAIR) are
not read as declarations, types and enum constants are not checked, and tests/ and harness/
are not read (white-box tests may include a folder's inner headers).

`hoardlab layers --faces` runs this rule alone; every `hoardlab layers` runs it with the others.
"""
import collections
import glob
import os
import re

from .creader import IDENT, strip
from .order import SRC_FOLDERS

CORE = "src/core"
FOLDERS = [f for f in SRC_FOLDERS if f != "strategies"]
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
KEYWORDS = {"extern", "static", "inline", "const", "volatile", "struct", "union", "enum",
            "unsigned", "signed", "void", "char", "short", "int", "long", "float", "double",
            "_Bool", "bool", "typedef", "register", "restrict", "_Thread_local", "__thread",
            "_Atomic", "_Noreturn", "__inline", "__inline__", "sizeof", "__typeof__", "typeof",
            "_Alignas", "return", "if", "else", "for", "while", "do", "switch", "case"}
MACRO_CALL = re.compile(r"\s*[A-Z_][A-Z0-9_]*\s*\(.*\)\s*", re.S)     # HL_DECLARE_PAIR(m, f)
Violation = collections.namedtuple("Violation", "folder kind path line text")


def face_name(folder):
    """The face of a core folder, relative to src/core: F/F.h."""
    return "%s/%s.h" % (folder, folder)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def _drop_groups(s, pattern):
    """s without each match of `pattern` (ending at an opening parenthesis) and the balanced
    group it opens, newlines kept."""
    out, i = [], 0
    for m in re.finditer(pattern, s):
        if m.start() < i:
            continue
        j, depth = m.end() - 1, 0
        while j < len(s):
            depth += {"(": 1, ")": -1}.get(s[j], 0)
            j += 1
            if depth == 0:
                break
        out.append(s[i:m.start()])
        out.append("\n" * s.count("\n", m.start(), j) + " ")
        i = j
    out.append(s[i:])
    return "".join(out)


def statements(text):
    """[(first line, kind, head)] of a C text's top-level statements, comments, strings and
    preprocessor lines removed: kind 'body' for a definition with a brace body not ended by
    `;` (a function), 'decl' for a statement ended by `;` (its brace bodies dropped), 'macro'
    for a macro call standing alone (no `;`: its line ends it)."""
    code = strip(text)
    code = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: "\n" * m.group(0).count("\n"),
                  code, flags=re.M)
    code = _drop_groups(code, r"\b(?:__attribute__|__asm__|asm|__declspec|_Static_assert|"
                              r"__extension__\s*\()\s*\(")
    out, head, start, depth, paren, i, n = [], [], None, 0, 0, 0, len(code)
    while i < n:
        c = code[i]
        if depth == 0:
            if c == "{" and paren == 0:
                depth = 1
            elif c == ";" and paren == 0:
                out.append((start, "decl", "".join(head)))
                head, start = [], None
            else:
                if c == "(":
                    paren += 1
                elif c == ")":
                    paren -= 1
                    h = "".join(head) + ")"
                    # a macro called alone at the top level: NAME(...) and then a new line
                    if paren == 0 and MACRO_CALL.fullmatch(h) \
                            and re.match(r"[ \t]*\n", code[i + 1:]):
                        out.append((start, "macro", h))
                        head, start, i = [], None, i + 1
                        continue
                if start is None and not c.isspace():
                    start = line_of(code, i)
                head.append(c)
        else:
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    h = "".join(head)
                    if h.rstrip().endswith(")") and "=" not in h and \
                            not re.match(r"\s*typedef\b", h):
                        out.append((start, "body", h))
                        head, start = [], None
                    else:
                        head.append(" {} ")
        i += 1
    return out


def declared(head):
    """[name] a statement head declares or defines (a function's name, each variable's), [] for
    a type, a typedef or a forward declaration."""
    toks = re.findall(r"[A-Za-z_]\w*|\S", head)
    if not toks or toks[0] == "typedef" or MACRO_CALL.fullmatch(head):
        return []
    if toks[0] in ("struct", "union", "enum") and (len(toks) <= 2 or toks[2:3] == ["{"] and
                                                   toks[-1] == "}"):
        return []                              # struct x; struct x {...}; enum {...};
    # a function: the identifier before the first parenthesis; a pointer to one: (*name)
    for k, t in enumerate(toks):
        if t == "(":
            if toks[k + 1:k + 2] == ["*"] and k + 2 < len(toks) and IDENT.fullmatch(toks[k + 2]):
                return [toks[k + 2]]
            if k and IDENT.fullmatch(toks[k - 1]) and toks[k - 1] not in KEYWORDS:
                return [toks[k - 1]]
            return []
        if t in ("=", "["):
            break
    names, depth, last = [], 0, None
    for t in toks + [","]:
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
            if t == "}" and depth == 0:
                last = None                  # the tag before a body declares nothing
        elif depth == 0 and t == ",":
            if last:
                names.append(last)
            last = None
        elif depth == 0 and t == "=":
            depth = 100                      # an initializer: skip to the next declarator
            if last:
                names.append(last)
            last = None
        elif depth == 0 and IDENT.fullmatch(t) and t not in KEYWORDS and not t.isupper():
            last = t                         # (an all-capitals word is a macro: HL_TLS)
        if depth >= 100 and t == ",":
            depth = 0
    return [x for x in names if x]


def read_file(path):
    with open(path) as f:
        return f.read()


class Core:
    """src/core's folders (FOLDERS, or those given), read once: {folder: [paths]},
    {basename: (folder, path)}."""

    def __init__(self, src, folders=None):
        self.src = src
        self.folders = list(folders or FOLDERS)
        self.files = {}
        self.where = {}
        for folder in self.folders:
            paths = sorted(glob.glob(os.path.join(src, "core", folder, "*.[ch]")))
            self.files[folder] = paths
            for p in paths:
                self.where.setdefault(os.path.basename(p), (folder, p))
        self.texts = {}

    def text(self, path):
        if path not in self.texts:
            self.texts[path] = read_file(path)
        return self.texts[path]

    def header(self, name):
        """(folder, path) of an included name, or (None, None) outside the core."""
        if "/" in name:
            folder = name.split("/")[0]
            path = os.path.join(self.src, "core", name)
            if folder in self.files and path in self.files[folder]:
                return folder, path
            return None, None
        return self.where.get(name, (None, None))

    def face(self, folder):
        path = os.path.join(self.src, "core", face_name(folder))
        return path if os.path.exists(path) else None


def folder_of(src, path):
    """The core folder of a file of src/, or its other home (strategies, src)."""
    rel = os.path.relpath(path, src).split(os.sep)
    if rel[0] == "core" and len(rel) > 2:
        return rel[1]
    return rel[0] if len(rel) > 1 else "src"


def rel(path, root):
    return os.path.relpath(path, root)


def include_violations(core, root):
    """(a): [Violation] of every include of a folder's inner header from outside it, and of
    every folder without a face."""
    out = []
    for folder in core.folders:
        if not core.face(folder):
            out.append(Violation(folder, "no face", rel(os.path.join(core.src, "core", folder),
                                                        root) + "/", 0,
                                 "no face header %s" % face_name(folder)))
    paths = sorted(glob.glob(os.path.join(core.src, "**", "*.[ch]"), recursive=True))
    for path in paths:
        mine = folder_of(core.src, path)
        text = core.text(path)
        for m in INCLUDE.finditer(text):
            folder, hpath = core.header(m.group(1))
            if folder is None or folder == mine or \
                    os.path.basename(hpath) == os.path.basename(face_name(folder)):
                continue
            out.append(Violation(folder, "inner include", rel(path, root),
                                 line_of(text, m.start()),
                                 '%s includes "%s", inside %s/: include %s' % (
                                     mine, m.group(1), folder, face_name(folder))))
    return out


def face_closure(core, folder):
    """[path] of a folder's face and the folder's headers it includes, transitively."""
    face = core.face(folder)
    if not face:
        return []
    out, todo = [], [face]
    while todo:
        p = todo.pop(0)
        if p in out:
            continue
        out.append(p)
        for m in INCLUDE.finditer(core.text(p)):
            f, hp = core.header(m.group(1))
            if f == folder and hp.endswith(".h"):
                todo.append(hp)
    return out


def definitions(core, folder):
    """{name} a folder defines: its .c files' functions and variables (not `extern`), names
    passed to macros called at their top level, and its headers' static inline functions."""
    out = set()
    for path in core.files[folder]:
        for _, kind, head in statements(core.text(path)):
            toks = set(re.findall(r"[A-Za-z_]\w*", head))
            if path.endswith(".c"):
                if kind == "macro":
                    out.update(t for t in toks if t not in KEYWORDS)
                elif kind == "body" or "extern" not in toks:
                    out.update(declared(head))
            elif kind == "body" and "inline" in toks:
                out.update(declared(head))
    return out


def declaration_violations(core, root, defs_anywhere):
    """(b): [Violation] of every function or variable a face declares that its folder does
    not define."""
    out = []
    for folder in core.folders:
        closure = face_closure(core, folder)
        if not closure:
            continue
        mine = definitions(core, folder)
        for path in closure:
            for line, kind, head in statements(core.text(path)):
                if kind != "decl":
                    continue
                toks = set(re.findall(r"[A-Za-z_]\w*", head))
                if "static" in toks:
                    continue
                for name in declared(head):
                    if name in mine:
                        continue
                    elsewhere = sorted(defs_anywhere.get(name, ()))
                    out.append(Violation(folder, "foreign declaration", rel(path, root), line,
                                         "%s's face declares %s, defined %s" % (
                                             folder, name, "in " + ", ".join(elsewhere)
                                             if elsewhere else "in no .c of src/core")))
    return out


def check_faces(src, root=None, folders=None):
    """[Violation] of both rules over a src/ tree (root: what paths are relative to, else
    src's parent; folders: the core's, else FOLDERS)."""
    root = root or os.path.dirname(os.path.abspath(src))
    core = Core(src, folders)
    anywhere = collections.defaultdict(set)
    for folder in core.folders:
        for name in definitions(core, folder):
            anywhere[name].add(folder + "/")
    return include_violations(core, root) + declaration_violations(core, root, anywhere)


def faces_report(src, root=None, folders=None):
    """(failed, text): per folder the count of each kind of violation, then every one as
    PATH:LINE: what."""
    folders = list(folders or FOLDERS)
    found = check_faces(src, root, folders)
    per = collections.defaultdict(collections.Counter)
    for v in found:
        per[v.folder][v.kind] += 1
    lines = ["faces: %d folders, %d with a face, %d violations" % (
        len(folders), sum(1 for f in folders if os.path.exists(
            os.path.join(src, "core", face_name(f)))), len(found))]
    for folder in folders:
        c = per[folder]
        lines.append("  %-12s %s" % (folder + "/", ", ".join(
            "%d %s" % (c[k], k) for k in ("no face", "inner include", "foreign declaration")
            if c[k]) or "ok"))
    for v in sorted(found, key=lambda v: (v.path, v.line)):
        lines.append("  %s%s: %s" % (v.path, ":%d" % v.line if v.line else "", v.text))
    return bool(found), "\n".join(lines)

"""Reading C text: comments and strings removed, a header split into the sections of the files
it holds, and the identifiers each inline function or macro of a header references.

A header counts as part of the node of its stem, except where it is split into sections by
comments of the form `/* ---- NAME.c: ...` (or `NAME.h`): the code under such a heading, up to
the next heading that names a file, is NAME's (the first file named) wherever NAME's file
lies, so src/core/base/base.h's `sizeclass.c` section is `mem/sizeclass`, harness/run.h's
`params.c` section is `params`.
"""
import re

SECTION = re.compile(r"/\*\s*-{3,}\s*([\w/]+)\.[ch]\b")
IDENT = re.compile(r"(?<!\w)[A-Za-z_]\w*")     # not the x of 0x10


def strip(text):
    """C text without comments, string and character literals (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j) or " ")
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" ")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sections(path, node, prefix="", where=None):
    """[(node, text)] of a header: its text split at `/* ---- NAME.c` headings (NAME's node
    is where[NAME], the folder that holds NAME's file, else prefix + NAME: the header's
    folder's node prefix)."""
    with open(path) as f:
        text = f.read()
    out, start, owner = [], 0, node
    for m in SECTION.finditer(text):
        out.append((owner, text[start:m.start()]))
        owner, start = (where or {}).get(m.group(1), prefix + m.group(1)), m.start()
    out.append((owner, text[start:]))
    return [(o, strip(t)) for o, t in out]


def header_code(text):
    """{name: [identifiers it references]} of one stripped header text: its macros' and inline
    functions' bodies (a struct's or enum's body is skipped: types and constants are data)."""
    defs = {}
    lines = text.replace("\\\n", " ").split("\n")
    code = []
    for line in lines:
        s = line.strip()
        if s.startswith("#"):
            m = re.match(r"#\s*define\s+(\w+)(\([^)]*\))?(.*)", s)
            if m:
                params = set(IDENT.findall(m.group(2) or ""))
                defs.setdefault(m.group(1), []).extend(
                    t for t in IDENT.findall(m.group(3)) if t not in params)
            code.append("")
        else:
            code.append(line)
    toks = re.findall(r"(?<!\w)[A-Za-z_]\w*|[{};()]", "\n".join(code))
    depth, head, fn, body = 0, [], None, []
    for t in toks:
        if depth == 0:
            if t == "{":
                depth, body, fn = 1, [], None
                if "inline" in head:
                    fn = next((head[k - 1] for k in range(1, len(head)) if head[k] == "("
                               and IDENT.match(head[k - 1]) and head[k - 1] != "__attribute__"),
                              None)
            elif t == ";":
                head = []
            else:
                head.append(t)
        elif t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                if fn:
                    defs.setdefault(fn, []).extend(x for x in body if IDENT.match(x))
                head = [] if fn else ["}"]
        else:
            body.append(t)
    return defs

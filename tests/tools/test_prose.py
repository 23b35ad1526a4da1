"""Prose that cannot drift (issue 64; STYLE.md item 23): what the comments of src/, harness/
and include/ say about other files is checked against those files, and src/'s comments stay
short enough to be read.

Cross-references. A comment phrase "FILE's NAME" (`sender.c's hl_remote_post`, `stats.h's
HL_MALLOC_PAIR`, `tlab.h's Accounting`; the phrase may wrap to the next comment line) must
resolve:
- FILE, the word before "'s" with an extension (`.c`, `.h`, `.py`, `.md`, `.build`), is a
  file of the tree: a path from the repository's root or from src/ or src/core/
  (`src/meson.build`, `heap/heap.h`), else a basename that exactly one file carries under
  the referring file's own root (src/, harness/ or include/), else under all three.
- NAME, the word after it, occurs in FILE. An identifier-shaped NAME (it holds `_` or a
  digit, or is all capitals, or is written `name()`) must occur as an identifier in FILE's
  code, comments and strings removed: a comment of FILE naming a function that is gone does
  not keep the reference alive. Any other NAME (`ready`, `see`, `Accounting`, `promise`: a
  static function, a section heading, a word of FILE's prose) must occur in FILE as a whole
  word, anywhere in its text, or, for a plural in "s", its singular (`rseq.h's sections`
  holds when rseq.h speaks of a section). NAME is read as a word of prose when it is one of the few
  words that follow "'s" in ordinary English (`own`, `inline`, `fast`, ... : WORDS).
Every stale reference is reported at once, each as PATH:LINE.

Size. A head comment (the first comment block of a src/**/*.[ch] file, before any code: one
/* */ comment or a run of // lines) is at most 40 lines (HEAD_MAX). Comments are at most 20 %
of src/'s lines (RATIO_MAX), counted over every line of src/**/*.[ch]: a line is a comment
line when it holds comment text and no code (a line of code with a trailing comment counts as
code; a blank line, or one holding only the comment's closing `*/`, counts as neither comment
nor code but is a line of the total).

`python3 tests/tools/test_prose.py` prints the numbers: every reference, the head comments
over the cap, and the ratio.
"""
import collections
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools"))

from hoardlab_lib.layers.creader import strip  # noqa: E402

ROOTS = ("src", "harness", "include")          # the trees whose comments are read
HEAD_MAX = 40
RATIO_MAX = 0.20
# "FILE's NAME": FILE ends in an extension; NAME is a word, maybe `name()`
REF = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.(?:c|h|py|md|build))'s\s+"
                 r"([A-Za-z_]\w*)(\(\))?")
# words that follow "FILE's" as plain English rather than as something of the file
WORDS = {"own", "inline", "fast", "slow", "common", "struct", "way", "or", "and", "the", "a",
         "an", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}


def sources(roots=ROOTS, repo=REPO, exts=("c", "h")):
    """Every C file of the trees, sorted, as paths relative to the repository."""
    out = []
    for root in roots:
        for ext in exts:
            out += glob.glob(os.path.join(repo, root, "**", "*." + ext), recursive=True)
    return sorted(os.path.relpath(p, repo) for p in out)


def comments(text):
    """[(first line, last line, text)] of every comment of a C text (1-based lines); a run of
    // lines on consecutive lines is one comment."""
    out, i, n, line = [], 0, len(text), 1
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            body = text[i:j]
            out.append((line, line + body.count("\n"), body))
            line += body.count("\n")
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            body = text[i:j]
            if out and out[-1][2].startswith("//") and out[-1][1] == line - 1 and \
                    not text[text.rfind("\n", 0, i) + 1:i].strip():
                first, _, prev = out.pop()
                out.append((first, line, prev + "\n" + body))
            else:
                out.append((line, line, body))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            if c == "\n":
                line += 1
            i += 1
    return out


def prose(body):
    """A comment's words with its markers (/* */ // and leading *) removed, lines kept."""
    lines = []
    for ln in body.split("\n"):
        ln = re.sub(r"^\s*(/\*+|\*+/?|//+)", "", ln)
        lines.append(ln.replace("*/", ""))
    return "\n".join(lines)


def references(path, repo=REPO):
    """[(line, FILE, NAME, called)] of every "FILE's NAME" in a file's comments."""
    with open(os.path.join(repo, path)) as f:
        text = f.read()
    out = []
    for first, _, body in comments(text):
        words = prose(body)
        for m in REF.finditer(words):
            out.append((first + words.count("\n", 0, m.start()), m.group(1), m.group(2),
                        bool(m.group(3))))
    return out


class Tree:
    """The files a reference may name, and what each holds (read once)."""

    def __init__(self, repo=REPO, roots=ROOTS):
        self.repo = repo
        self.by_name = collections.defaultdict(list)
        for root in roots:
            for p in glob.glob(os.path.join(repo, root, "**", "*"), recursive=True):
                if os.path.isfile(p):
                    self.by_name[os.path.basename(p)].append(os.path.relpath(p, repo))
        self.texts = {}

    def find(self, name, where=""):
        """The path of FILE named in the file `where`, or None (no such file, or several with
        that basename)."""
        if "/" in name:
            for base in ("", "src", os.path.join("src", "core")):
                p = os.path.join(base, name)
                if os.path.isfile(os.path.join(self.repo, p)):
                    return p
            return None
        hits = self.by_name.get(name, [])
        near = [h for h in hits if h.split(os.sep)[0] == where.split(os.sep)[0]]
        return near[0] if len(near) == 1 else hits[0] if len(hits) == 1 else None

    def text(self, path):
        if path not in self.texts:
            with open(os.path.join(self.repo, path)) as f:
                text = f.read()
            self.texts[path] = (text, strip(text) if path.endswith((".c", ".h")) else text)
        return self.texts[path]


def identifier_shaped(name, called=False):
    return called or "_" in name or any(ch.isdigit() for ch in name) or \
        (name.isupper() and len(name) > 1)


def resolve(tree, fname, name, called=False, where=""):
    """None when "FILE's NAME", written in the file `where`, holds, else why not."""
    path = tree.find(fname, where)
    if path is None:
        n = len(tree.by_name.get(fname, []))
        return "no file %s" % fname if n == 0 else "%s names %d files" % (fname, n)
    text, code = tree.text(path)
    word = re.compile(r"(?<![\w])%s(?![\w])" % re.escape(name))
    if identifier_shaped(name, called):
        return None if word.search(code) else "%s is not an identifier of %s" % (name, path)
    if word.search(text):
        return None
    if name.endswith("s") and re.search(r"(?<![\w])%s(?![\w])" % re.escape(name[:-1]), text):
        return None
    return "%s is not a word of %s" % (name, path)


def check_references(repo=REPO, roots=ROOTS, files=None):
    """([(path, line, FILE, NAME)] checked, [(path, line, FILE, NAME, why)] stale)."""
    tree = Tree(repo, roots)
    seen, stale = [], []
    for path in files or sources(roots, repo):
        for line, fname, name, called in references(path, repo):
            if name.lower() in WORDS and not called:
                continue
            seen.append((path, line, fname, name))
            why = resolve(tree, fname, name, called, path)
            if why:
                stale.append((path, line, fname, name, why))
    return seen, stale


def head_comment(text):
    """(first line, lines) of a C text's head comment: its first comment when only blank
    lines come before it, else (None, 0)."""
    found = comments(text)
    if not found:
        return None, 0
    first, last, _ = found[0]
    before = "\n".join(text.split("\n")[:first - 1])
    if before.strip():
        return None, 0
    return first, last - first + 1


def comment_lines(text):
    """(comment lines, all lines) of a C text, by the rule in this module's head."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    has_comment = [False] * len(lines)
    for first, last, body in comments(text):
        for k, ln in enumerate(body.split("\n")):
            if re.search(r"[^\s/*]", ln):
                has_comment[first - 1 + k] = True
    code = strip(text).split("\n")
    count = sum(1 for k in range(len(lines))
                if has_comment[k] and not (code[k].strip() if k < len(code) else ""))
    return count, len(lines)


def src_files(repo=REPO):
    return sources(("src",), repo)


def head_comments(repo=REPO):
    """[(path, lines)] of every src/ head comment, longest first."""
    out = []
    for path in src_files(repo):
        with open(os.path.join(repo, path)) as f:
            out.append((path, head_comment(f.read())[1]))
    return sorted(out, key=lambda x: (-x[1], x[0]))


def ratio(repo=REPO):
    """(comment lines, all lines) over src/**/*.[ch]."""
    c = t = 0
    for path in src_files(repo):
        with open(os.path.join(repo, path)) as f:
            a, b = comment_lines(f.read())
        c, t = c + a, t + b
    return c, t


# ---- the rules on small texts


def test_comments_are_found_with_their_lines():
    text = 'int a; /* one */\nchar *s = "/* not */";\n// two\n// three\n\n/* four\n * x */\n'
    assert [(a, b) for a, b, _ in comments(text)] == [(1, 1), (3, 4), (6, 7)]


def test_a_reference_may_wrap_and_be_called():
    text = "/* as sender.c's\n * hl_send_flush() does, and heap.h's own lock */\nint x;\n"
    body = comments(text)[0][2]
    words = prose(body)
    assert [(m.group(1), m.group(2), m.group(3)) for m in REF.finditer(words)] == [
        ("sender.c", "hl_send_flush", "()"), ("heap.h", "own", None)]


def test_references_resolve_by_their_rule(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.c").write_text(
        "/* b.h's hl_gone is stale, b.h's hl_there holds, b.h's promise holds (a word of b.h),\n"
        " * b.h's HL_OLD is stale (b.h only mentions it), c.h's x names no file,\n"
        " * b.h's promises hold (the singular), b.h's own is English */\nint y;\n")
    (tmp_path / "src" / "b.h").write_text("/* the promise; HL_OLD once */\nvoid hl_there(void);\n")
    seen, stale = check_references(str(tmp_path), ("src",))
    assert len(seen) == 6                    # b.h's own is not counted
    assert [(p, ln, f, n) for p, ln, f, n, _ in stale] == [
        ("src/a.c", 1, "b.h", "hl_gone"), ("src/a.c", 2, "b.h", "HL_OLD"),
        ("src/a.c", 2, "c.h", "x")]


def test_comment_lines_are_counted_by_the_rule():
    text = "/* head\n * more\n */\nint a; /* trailing: code */\n\n// alone\nint b;\n"
    # comment lines: 1, 2 and 6 (line 3 is only the closer); 7 lines in all
    assert comment_lines(text) == (3, 7)
    assert head_comment(text) == (1, 3)
    assert head_comment("int a;\n/* not a head */\n") == (None, 0)


# ---- the rules on the tree


def test_every_cross_reference_in_a_comment_resolves():
    seen, stale = check_references()
    assert seen, "no FILE's NAME reference found: the pattern is broken"
    assert not stale, "%d of %d FILE's NAME references are stale:\n%s" % (
        len(stale), len(seen), "\n".join("  %s:%d: %s's %s: %s" % s for s in stale))


def test_head_comments_are_at_most_40_lines():
    over = [(p, n) for p, n in head_comments() if n > HEAD_MAX]
    assert not over, "head comments over %d lines:\n%s" % (
        HEAD_MAX, "\n".join("  %s:1: %d lines" % x for x in over))


def test_comments_are_at_most_a_fifth_of_src():
    c, t = ratio()
    assert c <= RATIO_MAX * t, "comments are %d of %d src/ lines (%.1f %%), over %d %%" % (
        c, t, 100.0 * c / t, 100 * RATIO_MAX)


if __name__ == "__main__":
    seen, stale = check_references()
    print("%d FILE's NAME references, %d stale" % (len(seen), len(stale)))
    for s in stale:
        print("  %s:%d: %s's %s: %s" % s)
    heads = head_comments()
    print("head comments over %d lines: %d" % (HEAD_MAX, sum(n > HEAD_MAX for _, n in heads)))
    for p, n in heads[:12]:
        print("  %4d %s" % (n, p))
    c, t = ratio()
    print("comment lines %d of %d src/ lines: %.1f %%" % (c, t, 100.0 * c / t))

"""Entries a grep finds (issue 35): every function and variable libhoardlab's objects define is
named, as a whole word, somewhere in src/ or include/, so `grep -rn 'NAME\\b' src` lands where
it is made. A name pasted together by a macro (stats.h's HL_MALLOC_PAIR makes `m_entry`,
tlab.c's eighteen TLAB paths and their table) is written out in a comment beside the
macro's use. Reads the build's objects (HOARDLAB_BUILD_DIR, else build/; skipped when the core
is not built). And the hooks a reader can find: every function pointer a src/core header
declares is named in docs/architecture.md's Hooks table."""
import glob
import os
import re
import subprocess

import pytest

from conftest import REPO

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
LIB = os.path.join(BDIR, "src", "libhoardlab_core.a")


def defined_names(archive):
    """Functions and variables an archive's objects define, local ones included, without the
    compiler's clone suffixes (`.cold`, `.constprop.0`, `.part.0`)."""
    out = subprocess.run(["nm", "--defined-only", archive], capture_output=True, text=True,
                         check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwWdDbBrR":
            name = parts[2].split(".")[0]
            if name:
                names.add(name)
    return names


def source_words(text):
    return set(re.findall(r"\w+", text))


def unnamed(names, words):
    return sorted(n for n in names if n not in words)


def test_a_pasted_name_without_its_comment_is_caught():
    src = "HL_FREE_PAIR(, hl_hoard_free, hl_heap_free_fast, after_free)\n"
    names = {"hl_hoard_free", "hl_hoard_free_entry"}
    assert unnamed(names, source_words(src)) == ["hl_hoard_free_entry"]
    src = "/* HL_FREE_PAIR defines hl_hoard_free, hl_hoard_free_entry */\n" + src
    assert unnamed(names, source_words(src)) == []


@pytest.mark.skipif(not os.path.exists(LIB), reason="libhoardlab_core not built in %s" % BDIR)
def test_every_defined_name_is_written_in_the_sources():
    text = ""
    for path in glob.glob(os.path.join(REPO, "src", "**", "*.[ch]"), recursive=True) + \
            glob.glob(os.path.join(REPO, "include", "*.h")):
        with open(path) as f:
            text += f.read()
    missing = unnamed(defined_names(LIB), source_words(text))
    assert not missing, ("defined by a macro but written nowhere in src/ (name them in a comment "
                         "beside the macro's use): %s" % ", ".join(missing))


# --- docs/architecture.md's Hooks table: every function pointer a core header declares -----

POINTER = re.compile(r"\(\s*\*\s*(\w+)\s*\)\s*\(")


def declared_pointers(text):
    """Names of the function pointers a header declares: variables, struct members,
    parameters and typedefs (`(*NAME)(`), comments removed."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    return set(POINTER.findall(text))


def hooks_section():
    with open(os.path.join(REPO, "docs", "architecture.md")) as f:
        text = f.read()
    return text.split("## Hooks", 1)[1].split("\n## ", 1)[0]


def test_a_new_pointer_is_found():
    assert declared_pointers("extern bool (*hl_x_hook)(int a); /* (*not)(this) */\n"
                             "typedef void *(*hl_y_fn)(size_t);\n"
                             "void f(void (*fn)(int), int n);") == {"hl_x_hook", "hl_y_fn", "fn"}


def test_the_hooks_table_names_every_function_pointer():
    table = set(re.findall(r"`\.?(\w+)", hooks_section()))
    missing = {}
    for path in sorted(glob.glob(os.path.join(REPO, "src", "core", "*", "*.h"))):
        with open(path) as f:
            for name in declared_pointers(f.read()) - table:
                missing.setdefault(os.path.basename(path), []).append(name)
    assert not missing, "docs/architecture.md's Hooks table does not name: %s" % missing


# --- line length: a comment a reader can see whole ------------------------------------------

def test_no_source_line_over_120_characters():
    long_lines = []
    for path in sorted(glob.glob(os.path.join(REPO, "src", "**", "*.[ch]"), recursive=True)):
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if len(line.rstrip("\n")) > 120:
                    long_lines.append("%s:%d" % (os.path.relpath(path, REPO), n))
    assert not long_lines, "lines over 120 characters: %s" % long_lines

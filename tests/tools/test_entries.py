"""Entries a grep finds (issue 35): every function and variable libhoardlab's objects define is
named, as a whole word, somewhere in src/ or include/, so `grep -rn 'NAME\\b' src` lands where
it is made. A name pasted together by a macro (stats.h's HL_MALLOC_PAIR makes `m_entry`,
tlab.h's HL_TLAB_PATHS twelve functions and a table) is written out in a comment beside the
macro's use. Reads the build's objects (HOARDLAB_BUILD_DIR, else build/; skipped when the core
is not built)."""
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

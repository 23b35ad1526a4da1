"""docs/lab.md's worked example, `tcache`, built as a student would build it, and its test
(tests/strategies/lab_NAME.c, from `new`'s template) planting the bug issue 67 found: a free path
that takes a memalign'd block's inside for a whole block when its usable size is some class's
size (`hl_class_size(c) == n` alone: under pow2x4 the classes are 16 bytes apart) leaks the
outer block and miscounts U. The example as the page gives it must pass the lab test; the same
with that old test must fail it; a strategy from the heap template passes it too. In a copy
of the tree with only those three strategies compiled in: about 10 s on 2 cores.
"""
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO
from test_build import source_files
from hoardlab_lib.lab import scaffold

OLD_TEST = ("n <= TCACHE_MAX && c < TCACHE_CLASSES && tc.n[c] < TCACHE_DEPTH &&\n"
            "                  hl_class_size(c) == n")


def lab_example(text):
    """The worked example's C block of docs/lab.md."""
    m = re.search(r"```c\n(#define TCACHE_CLASSES.*?)```", text, re.S)
    assert m, "docs/lab.md has no worked example starting with #define TCACHE_CLASSES"
    return m.group(1)


def strategy_file(template_text, example, name, old=False):
    """The scaffolded strategy with its two paths replaced by the example, its row pointing at
    the example's memalign and thread_exit, under pow2x4; old: the free path's test as it was
    (the class size alone)."""
    if old:
        assert OLD_TEST in example, "the example's free-path test changed: update OLD_TEST"
        example = example.replace(OLD_TEST, "c < TCACHE_CLASSES && tc.n[c] < TCACHE_DEPTH && "
                                  "hl_class_size(c) == n")
    body = re.sub(r"/\* size: 0 < size.*?\n}\n", "", template_text, flags=re.S)
    body = re.sub(r"/\* p: a block this strategy.*?\n}\n", "", body, flags=re.S)
    body = body.replace('#include "heap.h"\n',
                        '#include "heap.h"\n#include <string.h>\n\n' +
                        example.replace("tcache", name))
    for a, b in ((".memalign = hl_sh_memalign,", ".memalign = %s_memalign," % name),
                 (".thread_exit = NULL,", ".thread_exit = %s_thread_exit," % name),
                 ('"size_classes=pow2"', '"size_classes=pow2x4"')):
        assert a in body, a
        body = body.replace(a, b)
    return body


def test_the_examples_template_parts_are_found():
    example = lab_example(open(os.path.join(REPO, "docs", "lab.md")).read())
    assert "tcache_memalign" in example and OLD_TEST in example
    tmpl = scaffold.render("single.c", dict(scaffold.FROM["serial"][1], NAME="x", FROM="serial"))
    text = strategy_file(tmpl, example, "x", old=True)
    assert "x_path_malloc(size_t size, bool counted)\n{\n    unsigned c" in text
    assert text.count("x_path_free(void *p, bool counted)") == 1
    assert "hl_class_size(c) == n" in text and "n <= TCACHE_MAX" not in text


@pytest.mark.skipif(not shutil.which("ninja"), reason="ninja missing")
def test_the_worked_example_passes_its_lab_test_and_the_old_free_path_fails_it(tmp_path):
    root = tmp_path / "hoardlab"
    for f in source_files():
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.join(REPO, f), root / f)
    example = lab_example((root / "docs" / "lab.md").read_text())
    bdir = str(root / "build")
    for name, old in (("tcfixed", False), ("tcold", True)):
        scaffold.new(name, "serial", bdir, build=False, repo=str(root))
        path = root / "src" / "strategies" / (name + ".c")
        path.write_text(strategy_file(path.read_text(), example, name, old))
    scaffold.new("myheaps", "hoard", bdir, build=False, repo=str(root))    # the heap template
    names = ("tcfixed", "tcold", "myheaps")
    env = dict(os.environ)
    env.pop("HOARDLAB_BUILD_DIR", None)
    p = subprocess.run(["meson", "setup", bdir, "-Dstrategies=" + ",".join(names)], cwd=root,
                       env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    p = subprocess.run(["ninja", "-C", bdir] + ["tests/strategies/lab_" + n for n in names],
                       cwd=root, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-3000:]
    got = {}
    for name in names:
        p = subprocess.run(["meson", "test", "-C", bdir, "--no-rebuild", "--print-errorlogs",
                            "lab-" + name], cwd=root, env=env, capture_output=True, text=True)
        got[name] = (p.returncode, p.stdout)
    assert got["tcfixed"][0] == 0, got["tcfixed"][1][-3000:]
    assert got["myheaps"][0] == 0, got["myheaps"][1][-3000:]
    assert got["tcold"][0] != 0, got["tcold"][1][-3000:]
    assert "size_classes = pow2x4" in got["tcold"][1], got["tcold"][1][-3000:]

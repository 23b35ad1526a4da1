"""docs/experiments.md covers every shipped sweep, each with its command and the parts a
student needs; docs/architecture.md's layers are src/core's folders, which `hoardlab layers`
checks, and its table of design elements names files that exist, every src/core/*/*.c among
them (a strategy's row there is welcome but not required: adding a strategy stays two files,
docs/adding.md); the README keeps its shape (the set-up commands first, short, every doc
linked), and every link of the README and docs/ leads somewhere."""
import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_every_shipped_sweep_is_an_experiment():
    text = open(os.path.join(ROOT, "docs", "experiments.md")).read()
    sections = dict(re.findall(r"^## (\S+) — .*?\n(.*?)(?=^## |\Z)", text, re.M | re.S))
    sweeps = sorted(f[:-4] for f in os.listdir(os.path.join(ROOT, "configs", "sweeps"))
                    if f.endswith(".ini"))
    assert sorted(sections) == sweeps
    for name, body in sections.items():
        for part in ("**Question.**", "**Command.**", "**Read.**", "**Try.**"):
            assert part in body, "%s: no %s" % (name, part)
        assert "configs/sweeps/%s.ini" % name in body or name == "taxonomy", name


# --- docs/architecture.md: the layers and the design element -> file table -----------------

def architecture():
    text = open(os.path.join(ROOT, "docs", "architecture.md")).read()
    elements = text.split("## Design element → file", 1)[1]
    rows = [line for line in elements.splitlines() if line.startswith("| ") and "---" not in line]
    return text, rows[1:]                                   # without the header row


def test_architecture_table_names_files_that_exist():
    _, rows = architecture()
    assert len(rows) >= 30
    for row in rows:
        element, files = row.split(" | ")[:2]
        paths = re.findall(r"`((?:src|include)/[\w/.]+)`", files)
        assert paths, "no file for %s" % element
        for p in paths + re.findall(r"`((?:src|include|docs)/[\w/.]+)`", row):
            assert os.path.exists(os.path.join(ROOT, p)), "%s: %s does not exist" % (element, p)


def test_architecture_table_names_every_core_file():
    _, rows = architecture()
    named = set()
    for row in rows:
        named.update(re.findall(r"`(src/[\w/.]+)`", row.split(" | ")[1]))
    core = sorted(os.path.relpath(f, ROOT)
                  for f in glob.glob(os.path.join(ROOT, "src", "core", "*", "*.c")))
    assert len(core) >= 30
    missing = [f for f in core if f not in named]
    assert not missing, "docs/architecture.md's table does not name: %s" % ", ".join(missing)


def layer_tables():
    """The Layers tables of docs/architecture.md and docs/layout.md: {folder: its cells}, in
    order."""
    arch = architecture()[0].split("## Design element", 1)[0].split("## Layers", 1)[1]
    layout = open(os.path.join(ROOT, "docs", "layout.md")).read()
    layout = layout.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [re.findall(r"^\| (\w+) \| (.*) \|$", t, re.M) for t in (arch, layout)]
    return [{name: cells for name, cells in r if name != "folder"} for r in rows]


def core_folder(name):
    """The files of src/core/NAME (`ls`), or of src/strategies."""
    return sorted(os.listdir(os.path.join(ROOT, "src", *(
        ["strategies"] if name == "strategies" else ["core", name]))))


@pytest.mark.parametrize("which", [0, 1], ids=["architecture.md", "layout.md"])
def test_layer_tables_are_the_folders(which):
    """The order is written once, as the folder order (SRC_FOLDERS in
    tools/hoardlab_lib/layers/order.py, which `ls src/core` is): each table has a row per
    folder, bottom up, and names no file that is not in that row's folder. architecture.md's
    names every file of each folder."""
    from hoardlab_lib import layers
    table = layer_tables()[which]
    assert list(table) == layers.SRC_FOLDERS
    assert sorted(os.listdir(os.path.join(ROOT, "src", "core"))) == \
        sorted(f for f in layers.SRC_FOLDERS if f != "strategies")
    for name, cells in table.items():
        files = core_folder(name)
        named = re.findall(r"`([\w]+\.[ch])`", cells)
        assert [f for f in named if f not in files] == [], name
        if name == "strategies":
            assert "`src/strategies/*.c`" in cells
        elif which == 0:
            assert [f for f in files if f not in named] == [], name


def test_harness_layer_table_is_the_one_hoardlab_layers_checks():
    """harness/README.md's Files table: HARNESS_LAYERS' layers in order, each with its files
    and no .c file of another layer."""
    from hoardlab_lib import layers
    text = open(os.path.join(ROOT, "harness", "README.md")).read()
    text = text.split("## Files", 1)[1].split("\n## ", 1)[0]
    table = dict(re.findall(r"^\| (\w+) \| (.*?) \|", text, re.M))
    assert [name for name, _ in layers.HARNESS_LAYERS] == [n for n in table if n != "layer"]
    for name, members in layers.HARNESS_LAYERS:
        for m in members:
            assert "`%s.c`" % m in table[name], (name, m)
        named = re.findall(r"`([\w/*]+)\.c`", table[name])
        assert [f for f in named if f not in members] == [], name


def test_layout_links_the_architecture():
    text = open(os.path.join(ROOT, "docs", "layout.md")).read()
    layout = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    assert "](architecture.md)" in layout


def test_each_sweeps_run_time_is_stated_in_one_place():
    """Issue 25: docs/tool.md's table of shipped sweeps gives every sweep file's time; the
    README, the pages its sections moved to (issue 64) and experiments.md point to it instead
    of stating times of their own."""
    tool = open(os.path.join(ROOT, "docs", "tool.md")).read()
    rows = {m.group(1): m.group(2) for m in
            re.finditer(r"^\| `([\w-]+\.ini)` \|.*\| ([^|]*) \|$", tool, re.M)}
    for path in glob.glob(os.path.join(ROOT, "configs", "sweeps", "*.ini")):
        name = os.path.basename(path)
        assert name in rows, "docs/tool.md's sweep table lacks %s" % name
        assert re.search(r"\d", rows[name]), "no time for %s: %r" % (name, rows[name])
    for doc in ["README.md"] + [os.path.join("docs", d) for d in README_PAGES] + [
            os.path.join("docs", "experiments.md")]:
        text = open(os.path.join(ROOT, doc)).read()
        assert not re.search(r"\d+ min", text), "%s states a run time of its own" % doc


# --- the layout's docs/ entry lists the docs there are ----------------------------------------

def docs_there():
    return {f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md")}


def test_layout_lists_every_doc():
    text = open(os.path.join(ROOT, "docs", "layout.md")).read()
    block = text.split("    docs/", 1)[1].split("\n\n", 1)[0]    # the layout's docs/ entry
    listed = set(re.findall(r"([\w-]+\.md)", block))
    there = docs_there()
    assert listed == there, "docs/layout.md's docs/ entry: missing %s, not there %s" % (
        sorted(there - listed), sorted(listed - there))


# --- the README's shape (issue 64): a newcomer's first screen, every doc one line -----------

# The pages the README's sections moved to (issue 64); the tests above that read a section of
# the README read it there.
README_PAGES = ("usage.md", "benchmarks.md", "cost.md", "layout.md", "adding.md")
README_MAX_LINES = 150


def test_readme_starts_with_the_two_commands():
    """The set-up commands, `main` then `test`, as command lines within the first 15 lines."""
    head = open(os.path.join(ROOT, "README.md")).read().splitlines()[:15]
    commands = [ln.split()[:2] for ln in head if ln.startswith("    tools/hoardlab ")]
    assert commands == [["tools/hoardlab", "main"], ["tools/hoardlab", "test"]], head


def test_readme_is_short():
    lines = open(os.path.join(ROOT, "README.md")).read().splitlines()
    assert len(lines) <= README_MAX_LINES, "README.md has %d lines, more than %d: move a " \
        "section to docs/ and link it" % (len(lines), README_MAX_LINES)


def test_readme_links_every_doc_with_a_line_saying_what_it_is():
    """Each docs/*.md has one list item of its own in the README: its link, then what it is;
    and the README links no doc that is not there."""
    text = open(os.path.join(ROOT, "README.md")).read()
    items = dict(re.findall(r"^- \[docs/([\w-]+\.md)\]\(docs/\1\): (\S.{9,})$", text, re.M))
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)", text))
    there = docs_there()
    assert set(items) == there, "README's list of docs: missing %s, not there %s" % (
        sorted(there - set(items)), sorted(set(items) - there))
    assert linked <= there, sorted(linked - there)
    for page in README_PAGES:
        assert page in there, page


# --- links: every relative link of the README and docs/ leads to a file and a heading --------

def heading_anchors(path):
    """The anchors a Markdown renderer makes of a file's headings (GitHub's rule: lower case,
    punctuation but - and _ dropped, spaces to -), code blocks aside."""
    text = re.sub(r"^```.*?^```", "", open(path).read(), flags=re.S | re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#{1,6} (.+?)\s*$", text, re.M)}


def test_links_of_the_readme_and_docs_resolve():
    stale = []
    for doc in ["README.md"] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        path = os.path.join(ROOT, doc)
        for m in re.finditer(r"\]\(([^)#\s]*)(?:#([^)\s]+))?\)", open(path).read()):
            target, anchor = m.groups()
            if re.match(r"[a-z]+:", target):
                continue                                    # https:, mailto:
            where = os.path.normpath(os.path.join(os.path.dirname(path), target or
                                                  os.path.basename(path)))
            if not os.path.exists(where):
                stale.append("%s: %s" % (os.path.relpath(path, ROOT), target))
            elif anchor and where.endswith(".md") and anchor not in heading_anchors(where):
                stale.append("%s: %s#%s" % (os.path.relpath(path, ROOT), target, anchor))
    assert not stale, stale


# --- docs/architecture.md's Hooks table: who sets and who calls, named as the code has them --

def hooks_rows():
    text = open(os.path.join(ROOT, "docs", "architecture.md")).read()
    section = text.split("## Hooks", 1)[1].split("\n## ", 1)[0]
    return [line.split(" | ") for line in section.splitlines()
            if line.startswith("| ") and "---" not in line][1:]


def src_text():
    paths = glob.glob(os.path.join(ROOT, "src", "**", "*.[ch]"), recursive=True)
    return {os.path.basename(p): open(p).read() for p in paths}


def test_hooks_table_names_what_the_code_has():
    """Every file and every identifier with an underscore (a function, a macro, a member)
    that the set-by and called-by columns name in backticks exists in src/: a renamed
    function or a deleted macro makes its row stale, and this fails."""
    files = src_text()
    words = set(re.findall(r"\b\w+\b", "\n".join(files.values())))
    stale = []
    for cells in hooks_rows():
        for cell in cells[1:3]:
            for name in re.findall(r"`\.?([\w.]+)`", cell):
                if re.fullmatch(r"\w+\.[ch]", name):
                    ok = name in files
                elif "_" in name and "=" not in name:
                    ok = name.split(".")[-1] in words
                else:
                    continue
                if not ok:
                    stale.append("%s (row %s)" % (name, cells[0][:40]))
    assert not stale, "docs/architecture.md's Hooks table names what src/ lacks: %s" % stale


def test_source_paths_in_the_docs_exist():
    """A path under src/ that README.md or a doc names exists (placeholders in capitals and the
    lab's example strategy, which `new` writes, aside): files move when layers do."""
    stale = []
    for doc in ["README.md"] + glob.glob(os.path.join(ROOT, "docs", "*.md")):
        text = open(os.path.join(ROOT, doc)).read()
        for path in set(re.findall(r"\bsrc/[\w/.-]+\.[ch]\b", text)):
            if re.search(r"[A-Z]{3}", path) or path.endswith("/tcache.c"):
                continue
            if not os.path.exists(os.path.join(ROOT, path)):
                stale.append("%s: %s" % (os.path.basename(doc), path))
    assert not stale, stale

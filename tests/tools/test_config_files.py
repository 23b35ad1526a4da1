"""Each configuration key is implemented in the one file its row names (issue 64).

A row of HL_OPTIONS (src/core/base/config.h) is X(name, section, file, ...); docs/config.md,
generated from the table, shows `file` in its column of that name. For every key:
- the file exists (a path from the repository's root);
- the file's code, comments and strings removed (creader.strip), reads the key's field:
  `hl_cfg.KEY`.
A few keys reach their file through a parameter or a variable that another file sets from
hl_cfg once at start-up (`hl_lock_kind = hl_cfg.lock` in init.c; lock.c spins or sleeps on
it). VIA names each of them with the file that hands it over. For those the rule is weaker,
and says so: the handing file's code reads the field (`.KEY`: `hl_cfg.KEY`, or
`(cfg).KEY` in a macro), and the named file names KEY as a whole word in its code or its
comments (strings do not count). A key listed in VIA whose file reads `hl_cfg.KEY` itself
must leave VIA, so the list holds only the keys that need it.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools"))

from hoardlab_lib.layers.creader import strip  # noqa: E402

CONFIG_H = os.path.join(REPO, "src", "core", "base", "config.h")
ROW = re.compile(r'\bX\((\w+),\s*\w+,\s*"([^"]+)",')
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)

# key -> the file that reads hl_cfg.KEY and hands the value to the key's file.
VIA = {
    "lock": "src/core/front/init.c",              # hl_lock_kind, read by lock.c and lock.h
    "numa": "src/core/base/config.c",             # hl_os_set_numa: os.c reads no key
    "census": "src/core/instruments/observe.c",   # census_on: observe.c starts census.c
    "trace": "src/core/instruments/observe.c",    # hl_trace_init(path)
    "heap_log": "src/core/instruments/observe.c",  # hl_heaplog_init(path)
    "fault_at": "src/core/base/base.h",           # HL_FAULT_CONFIGURE: hl_fault_set(...)
    "fault_rate": "src/core/base/base.h",
    "fault_seed": "src/core/base/base.h",
    "fault_count": "src/core/base/base.h",
}


def table():
    """[(key, file)] of HL_OPTIONS and HL_FAULT_OPTIONS, in the table's order."""
    with open(CONFIG_H) as f:
        return ROW.findall(f.read())


def _text(path):
    with open(os.path.join(REPO, path)) as f:
        return f.read()


def word(name, text):
    return re.search(r"(?<!\w)%s(?!\w)" % re.escape(name), text) is not None


def reads(key, code):
    return re.search(r"\bhl_cfg\s*\.\s*%s(?!\w)" % re.escape(key), code) is not None


def check(key, path):
    """None if PATH implements KEY by the rule above, else why not."""
    if not os.path.isfile(os.path.join(REPO, path)):
        return "%s: %s does not exist" % (key, path)
    text = _text(path)
    code = strip(text)
    if key not in VIA:
        return None if reads(key, code) else "%s: %s does not read hl_cfg.%s" % (key, path, key)
    if reads(key, code):
        return "%s: %s reads hl_cfg.%s itself: take it out of VIA" % (key, path, key)
    giver = strip(_text(VIA[key]))
    if not re.search(r"\.\s*%s(?!\w)" % re.escape(key), giver):
        return "%s: %s (VIA) does not read the field" % (key, VIA[key])
    if not word(key, code + "\n".join(COMMENT.findall(text))):
        return "%s: %s does not name it in its code or comments" % (key, path)
    return None


def test_the_table_names_a_file_for_every_key():
    keys = [k for k, _ in table()]
    with open(CONFIG_H) as f:
        rows = len(re.findall(r"^\s*X\(\w+,", f.read(), re.M))
    assert len(keys) == rows and len(keys) >= 50, "a row's file is not its third field"
    assert len(set(keys)) == len(keys)
    assert set(VIA) <= set(keys), set(VIA) - set(keys)


def test_every_key_is_implemented_in_the_file_it_names():
    bad = [why for why in (check(k, p) for k, p in table()) if why]
    assert not bad, "\n".join(bad)


def test_docs_config_md_names_the_tables_files():
    """docs/config.md is the table's (docs_current.sh compares it whole); here, its column."""
    files = dict(table())
    with open(os.path.join(REPO, "docs", "config.md")) as f:
        rows = [ln for ln in f if ln.startswith("| `")]
    assert rows
    for ln in rows:
        cells = [c.strip() for c in ln.strip().strip("|").split(" | ")]
        key, file = cells[0].strip("`"), cells[5].strip("`")
        assert files.get(key) == file, (key, file)


def test_a_wrong_file_fails():
    assert check("tlab_sb_cache", "src/core/heap/purge.c")         # reads no hl_cfg.tlab_sb_cache
    assert check("purge_holes", "src/core/heap/nowhere.c")         # no such file
    assert check("census", "src/core/heap/purge.c")                # VIA: never says census
    assert check("lock", "src/core/front/init.c")                  # VIA: init.c reads it itself
    assert check("tlab_sb_cache", "src/core/cache/tlab_sb_cache.c") is None

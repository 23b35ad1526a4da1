"""hoardlab_lib: the modules behind the `tools/hoardlab` command.

docs/tool.md ("The code") lists every package and module, bottom up: a module imports only
modules listed above it, a package is imported through its face (its __init__), and
tests/tools/test_shape.py checks that no import loop, no import inside a function (but a
commented deferral of matplotlib), no module over 450 lines and no function over 80 lines
comes back.
"""

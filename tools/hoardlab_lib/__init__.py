"""hoardlab_lib: the modules behind the `tools/hoardlab` command.

docs/tool.md ("The code") lists every package and module, bottom up: a module imports only
modules listed above it, a package is imported through its face (its __init__), never a module
of it from outside; `hoardlab layers` finds no import loop, and tests/tools/test_shape.py
checks the rest: at most 18 modules here at the root, none over 400 lines, no class over 150
lines and no function over 80, no import inside a function (but a commented deferral of
matplotlib), and that list equal to the tree.
"""

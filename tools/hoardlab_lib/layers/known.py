"""The allow-list: the loops and upward edges that exist today and are to be removed, per
tree. A loop is the set of its files (or modules); an upward edge is (user, definer). Each
entry says which issue removes it and why it is still here. Remove an entry when its knot is
untied: the tests fail while an entry lists something that no longer exists, and
`hoardlab layers` fails on anything not listed, so the list can only shrink. (A loop is known
by its set of files: one more use among the same files passes, one more file does not.)
"""

EMPTY = {"loops": {}, "upward": {}}

KNOWN = {
    "src": EMPTY,
    "harness": EMPTY,
    "tools": EMPTY,
}

NOTHING_KNOWN = {"src": EMPTY, "harness": EMPTY, "tools": EMPTY}   # `hoardlab layers --strict`

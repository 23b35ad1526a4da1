#!/usr/bin/env bash
# docs_current.sh HLCONFIG DOC — docs/config.md must be exactly what the key table generates.
# On failure: build/src/hlconfig --markdown > docs/config.md
# docs/config.md describes a build with every strategy of meson_options.txt; a build with
# fewer (-Dstrategies=...) lists fewer choices for `strategy`, so that one row is left out
# of the comparison there — unless the build has a strategy the docs do not name.
set -euo pipefail
built=$("$1" --strategies | cut -f1 | tr '\n' ' ')
row() { grep '^| `strategy` |' "$1" | cut -d'|' -f5 | tr -d ' ' | tr ',' ' '; }
documented=$(row "$2")
for s in $built; do
    [[ " $documented " == *" $s "* ]] || { echo "docs/config.md does not name strategy $s"; exit 1; }
done
if [[ $(echo $built) == $(echo $documented) ]]; then
    diff -u "$2" <("$1" --markdown)
else
    diff -u <(grep -v '^| `strategy` |' "$2") <("$1" --markdown | grep -v '^| `strategy` |')
fi
echo "docs/config.md is current"

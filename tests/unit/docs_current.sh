#!/usr/bin/env bash
# docs_current.sh HLCONFIG DOC — docs/config.md must be exactly what the key table generates.
# On failure: build/src/hlconfig --markdown > docs/config.md
# docs/config.md describes a build with every strategy of meson_options.txt; a build with
# fewer (-Dstrategies=...) lists fewer choices for `strategy`, so that one row is left out
# of the comparison there — unless the build has a strategy the docs do not name.
set -euo pipefail
fix() { echo "fix: $1 --markdown > $2   (then review the diff and commit it)"; }
trap 'fix "$1" "$2"' ERR
built=$("$1" --strategies | cut -f1 | tr '\n' ' ')
row() { grep '^| `strategy` |' "$1" | cut -d'|' -f5 | tr -d ' ' | tr ',' ' '; }
documented=$(row "$2")
for s in $built; do
    [[ " $documented " == *" $s "* ]] || { echo "docs/config.md does not name strategy $s"; fix "$1" "$2"; exit 1; }
done
# A faults build (-Dfaults=true) has the fault_* keys too, which the docs leave out.
generated() { "$1" --markdown | grep -v '^| `fault_' || true; }
if [[ $(echo $built) == $(echo $documented) ]]; then
    diff -u "$2" <(generated "$1")
else
    diff -u <(grep -v '^| `strategy` |' "$2") <(generated "$1" | grep -v '^| `strategy` |')
fi
echo "docs/config.md is current"

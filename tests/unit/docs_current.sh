#!/usr/bin/env bash
# docs_current.sh HLCONFIG DOC — docs/config.md must be exactly what the key table generates.
# On failure: build/src/hlconfig --markdown > docs/config.md
diff -u "$2" <("$1" --markdown) && echo "docs/config.md is current"

#!/usr/bin/env bash
# fuzz_expect_finding.sh PATTERN FUZZ_RUN ARGS... — run fuzz_run.sh on a fuzzer built with a
# planted bug and pass only if the finding reaches meson as a failure: fuzz_run.sh's exit
# status is neither 0 nor 77 and its log names the finding (PATTERN, grep -E). Not meson's
# should_fail: meson reads 77 as SKIP even under should_fail, which is the bug this guards.
set -u
pattern=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" > "$log" 2>&1
rc=$?
tail -n 40 "$log"
if [ "$rc" = 0 ] || [ "$rc" = 77 ]; then
  echo "fuzz_expect_finding: fuzz_run.sh exited $rc on a planted bug: meson counts that as" \
       "$([ "$rc" = 0 ] && echo a pass || echo a skip), not a failure" >&2
  exit 1
fi
if ! grep -Eq "$pattern" "$log"; then
  echo "fuzz_expect_finding: exit $rc, but the log does not name the planted bug ($pattern)" >&2
  exit 1
fi
echo "fuzz_expect_finding: the planted bug was found and fuzz_run.sh exited $rc (a failure)"

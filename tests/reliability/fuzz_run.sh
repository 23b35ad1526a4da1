#!/usr/bin/env bash
# fuzz_run.sh FUZZER CORPUS DICT SECONDS [KEY=V1|V2|... ...] — run a libFuzzer target.
# SECONDS = 0: replay every input of the saved corpus once (a regression test).
# Otherwise fuzz for SECONDS starting from the saved corpus; new inputs and any crash go to
# fuzz-work/NAME/ beside the fuzzer in the build directory, never into the source tree. To grow
# the saved corpus by hand: FUZZER -merge=1 CORPUS fuzz-work/NAME/corpus. DICT '-': none.
#
# KEY=V1|V2|...: knobs rotated from run to run (fuzz_malloc): each run sets HOARD_KEY to one
# of its values, the combination numbered by FUZZ_ROTATION (default: days since 1970, so CI
# goes through every combination, one a day). The line it prints repeats the run.
# FUZZ_RSS_MB: libFuzzer's memory limit (default 2048).
#
# Every finding is a failure: libFuzzer's own exit codes for a crash, a leak or a sanitizer's
# report (-error_exitcode, default 77) and for a slow input (-timeout_exitcode) are set to 1 in
# both branches, since meson reads 77 as SKIP (even under should_fail); an out-of-memory input
# exits 71 (libFuzzer's fixed code). Whatever else exits 77 is turned into 1 below, with a line
# saying so. rel-fuzz-catches-overlap{,-corpus} (meson.build) hold this to a planted bug.
set -eu
fuzzer=$1 corpus=$2 dict=$3 secs=$4
shift 4
work=$(dirname "$fuzzer")/fuzz-work/$(basename "$fuzzer")
mkdir -p "$work/corpus"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
rotation=${FUZZ_ROTATION:-$(( $(date +%s) / 86400 ))}
r=$rotation setting=
for kv in "$@"; do                     # mixed radix: every combination once per cycle
  IFS='|' read -r -a vals <<< "${kv#*=}"
  v=${vals[$(( r % ${#vals[@]} ))]}
  r=$(( r / ${#vals[@]} ))
  export "HOARD_${kv%%=*}=$v"
  setting+=" HOARD_${kv%%=*}=$v"
done
prefix=$work/${HOARD_STRATEGY:+$HOARD_STRATEGY-}
if [ $# -gt 0 ]; then
  echo "fuzz_run: FUZZ_ROTATION=$rotation HOARD_STRATEGY=${HOARD_STRATEGY:-}$setting"
fi
exitopts=(-error_exitcode=1 -timeout_exitcode=1)
rc=0
if [ "$secs" = 0 ]; then
  "$fuzzer" "${exitopts[@]}" -timeout=60 -artifact_prefix="$prefix" "$corpus"/* || rc=$?
else
  dictopt=()
  [ "$dict" = - ] || dictopt=(-dict="$dict")
  "$fuzzer" "${exitopts[@]}" -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -max_len=4096 "${dictopt[@]}" -artifact_prefix="$prefix" \
    -print_final_stats=1 "$work/corpus" "$corpus" || rc=$?
fi
if [ "$rc" = 77 ]; then
  echo "fuzz_run: $(basename "$fuzzer") exited 77 (meson's SKIP); reported as 1, a failure" >&2
  rc=1
fi
exit "$rc"

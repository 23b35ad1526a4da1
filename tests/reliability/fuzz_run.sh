#!/usr/bin/env bash
# fuzz_run.sh FUZZER CORPUS DICT SECONDS — run the config fuzzer.
# SECONDS = 0: replay every input of the saved corpus once (a regression test).
# Otherwise fuzz for SECONDS starting from the saved corpus; new inputs and any crash go to
# fuzz-work/ beside the fuzzer in the build directory, never into the source tree. To grow the
# saved corpus by hand: FUZZER -merge=1 CORPUS fuzz-work/corpus
set -eu
fuzzer=$1 corpus=$2 dict=$3 secs=$4
work=$(dirname "$fuzzer")/fuzz-work
mkdir -p "$work/corpus"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ "$secs" = 0 ]; then
  exec "$fuzzer" -artifact_prefix="$work/" "$corpus"/*
fi
exec "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -dict="$dict" -artifact_prefix="$work/" -print_final_stats=1 "$work/corpus" "$corpus"

#!/usr/bin/env bash
# Sanitizers and fuzzing (docs/RELIABILITY.md, "Sanitizers and fuzzing"); CI runs it after
# `scripts/setup.sh test`:
#   1. configure and build preset `asan` (the CPU path under AddressSanitizer + UBSan, clang) in build-asan/;
#   2. ctest --preset asan (a sanitizer report, a leak or undefined behaviour fails the test);
#   3. each libFuzzer target for OCTOFLOW_FUZZ_SECONDS (default 60) on a copy of its seed corpus
#      (build-asan/fuzz-runs/<fuzzer>/corpus: the committed fuzz/corpus/ is left as it is).
# Exits 1 if any step fails, after naming where each crashing input was saved.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${OCTOFLOW_FUZZ_SECONDS:-60}
jobs=${OCTOFLOW_JOBS:-$(nproc)}
build=build-asan

cmake --preset asan
cmake --build --preset asan -j"$jobs"

failures=()
if ! ctest --preset asan -j"$jobs"; then
  failures+=("ctest --preset asan")
fi

# The fuzzers run from the source root, so that the seeds' relative paths (STL files, Catalyst
# scripts) resolve as they do for the CLI.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:print_stacktrace=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
run_fuzzer() {
  local fuzzer=$1 seeds=$2 dictionary=${3:-}
  local work="$root/$build/fuzz-runs/$fuzzer"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp "$root/fuzz/corpus/$seeds"/* "$work/corpus/"
  local arguments=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
                   -artifact_prefix="$work/artifacts/")
  if [ -n "$dictionary" ]; then arguments+=(-dict="$root/$dictionary"); fi
  echo "== $fuzzer: ${seconds} s on a copy of fuzz/corpus/$seeds ($(ls "$work/corpus" | wc -l) seeds), log $work/fuzz.log"
  local status=0
  "$root/$build/bin/$fuzzer" "${arguments[@]}" "$work/corpus" >"$work/fuzz.log" 2>&1 || status=$?
  grep -E "^(stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb)|^#[0-9]+ *DONE" "$work/fuzz.log" || true
  local found
  found=$(find "$work/artifacts" -type f | sort)
  if [ "$status" -ne 0 ] || [ -n "$found" ]; then
    echo "== $fuzzer: FINDING (exit status $status); the end of its log:" >&2
    tail -n 60 "$work/fuzz.log" >&2
    if [ -n "$found" ]; then
      echo "== $fuzzer: crashing input(s) saved to:" >&2
      echo "$found" | sed 's/^/     /' >&2
      echo "== reproduce: $build/bin/$fuzzer <input>" >&2
    fi
    failures+=("$fuzzer")
  else
    echo "== $fuzzer: no finding; corpus now $(ls "$work/corpus" | wc -l) inputs"
  fi
}
run_fuzzer CaseParserFuzz case_parser fuzz/case_parser.dict
run_fuzzer CheckpointReaderFuzz checkpoint

if [ ${#failures[@]} -ne 0 ]; then
  echo "reliability check FAILED: ${failures[*]}" >&2
  exit 1
fi
echo "reliability check passed: asan tests and ${seconds} s of each fuzzer without a finding"

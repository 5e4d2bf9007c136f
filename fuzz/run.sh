#!/usr/bin/env bash
# Fuzzes every target for a bounded time from its committed seed corpus (fuzz/corpus/<target>):
#
#   bash fuzz/run.sh [SECONDS]      # default 30 of one core per target; CI runs it so
#
# The targets are built once, together, then fuzzed all at once: each for SECONDS x targets /
# cores of wall time (at least SECONDS), so that each gets about SECONDS of one core however
# many cores there are (3 targets on 2 cores: 45 s).
#
# Needs nightly Rust and cargo-fuzz (`cargo install cargo-fuzz --locked`). The seeds stay as
# committed: what libFuzzer finds goes to a working corpus in the target directory, so a
# second run goes on from there. A crash or a failed assertion fails the run with exit 1 and
# keeps the input at the path the log prints (`artifacts/<target>/` in the target directory);
# `cargo +nightly fuzz run <target> <that path>` replays it.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-30}"
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [SECONDS], a whole number above 0 (got $seconds)" >&2; exit 2; }
target_dir="$(../.ci/target-dir "$PWD/Cargo.toml")"
mapfile -t targets < <(cargo +nightly fuzz list)
for target in "${targets[@]}"; do
  [[ -d "corpus/$target" ]] || { echo "no seed corpus for $target: add $PWD/corpus/$target" >&2; exit 1; }
done
started=$SECONDS
cargo +nightly fuzz build -O
echo "built ${#targets[@]} targets in $((SECONDS - started)) s"

cores="$(nproc)"
wall=$(((seconds * ${#targets[@]} + cores - 1) / cores))
((wall >= seconds)) || wall=$seconds
started=$SECONDS
declare -A jobs
for target in "${targets[@]}"; do
  found="$target_dir/fuzz-corpus/$target"
  artifacts="$target_dir/fuzz-artifacts/$target/"
  mkdir -p "$found" "$artifacts"
  cargo +nightly fuzz run -O "$target" "$found" "corpus/$target" -- \
    -max_total_time="$wall" -artifact_prefix="$artifacts" -print_final_stats=1 \
    >"$target_dir/fuzz-$target.log" 2>&1 &
  jobs[$target]=$!
done
failed=0
for target in "${targets[@]}"; do
  log="$target_dir/fuzz-$target.log"
  if ! wait "${jobs[$target]}"; then
    tail -40 "$log" >&2
    echo "fuzz target $target failed; its input is kept in $target_dir/fuzz-artifacts/$target/ (log: $log)" >&2
    failed=1
    continue
  fi
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  echo "$target: $runs runs, no failure"
done
echo "${#targets[@]} targets fuzzed at once for $wall s each on $cores cores (in $((SECONDS - started)) s)"
exit "$failed"

#!/usr/bin/env bash
# Fuzzes every target for a bounded time from its committed seed corpus (fuzz/corpus/<target>):
#
#   bash fuzz/run.sh [SECONDS]      # default 30 per target; CI runs it so
#
# Needs nightly Rust and cargo-fuzz (`cargo install cargo-fuzz --locked`). The seeds stay as
# committed: what libFuzzer finds goes to a working corpus in the target directory, so a
# second run goes on from there. A crash or a failed assertion stops the run with exit 1 and
# keeps the input at the path the log prints (`artifacts/<target>/` in the target directory);
# `cargo +nightly fuzz run <target> <that path>` replays it.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-30}"
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [SECONDS], a whole number above 0 (got $seconds)" >&2; exit 2; }
target_dir="$(../.ci/target-dir "$PWD/Cargo.toml")"
for target in $(cargo +nightly fuzz list); do
  seeds="corpus/$target"
  [[ -d "$seeds" ]] || { echo "no seed corpus for $target: add $PWD/$seeds" >&2; exit 1; }
  found="$target_dir/fuzz-corpus/$target"
  artifacts="$target_dir/fuzz-artifacts/$target/"
  mkdir -p "$found" "$artifacts"
  started=$SECONDS
  if ! cargo +nightly fuzz run -O "$target" "$found" "$seeds" -- \
    -max_total_time="$seconds" -artifact_prefix="$artifacts" -print_final_stats=1 2>"$target_dir/fuzz-$target.log"; then
    tail -40 "$target_dir/fuzz-$target.log" >&2
    echo "fuzz target $target failed; its input is kept in $artifacts (log: $target_dir/fuzz-$target.log)" >&2
    exit 1
  fi
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$target_dir/fuzz-$target.log" | grep -o '[0-9]*$' || echo '?')"
  echo "$target: $runs runs in $((SECONDS - started)) s (build included), no failure"
done

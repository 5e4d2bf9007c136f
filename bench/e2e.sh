#!/usr/bin/env bash
# End-to-end load test of search-server (not run in CI): throughput cost, shedding cost,
# reaction time, poll cost. Loopback only, bounded (about two minutes), stops by itself.
#
#   bash bench/e2e.sh [ROUND_SECONDS [BASELINE_SEARCH_SERVER_BINARY]]
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v wrk >/dev/null; then
  echo "installing wrk (Debian package)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi

cargo build --release -q -p load-examples --bin search-server
cargo build --release -q -p load-bench --bin e2e
target_dir="$(.ci/target-dir)" # CARGO_TARGET_DIR or a cargo config may move it
mkdir -p bench/results
out="bench/results/e2e-$(date -u +%Y%m%dT%H%M%SZ).md"
{
  echo "# End-to-end run, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores"
  echo
  "$target_dir/release/e2e" "$target_dir/release/search-server" "${1:-5}" ${2:+"$2"}
} | tee "$out"
echo "saved to $out" >&2

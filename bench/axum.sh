#!/usr/bin/env bash
# The tower layer end to end: the axum example (release) with and without LoadControlLayer,
# wrk -t2 -c32 on /search?q=load in alternating rounds (A B A B A B). Loopback only, bounded
# (six rounds of ROUND_SECONDS), stops by itself. Not run in CI.
#
#   bash bench/axum.sh [ROUND_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
round="${1:-5}"

if ! command -v wrk >/dev/null; then
  echo "installing wrk (Debian package)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
cargo build --release -q -p load-examples --example axum
axum="$(.ci/target-dir)/release/examples/axum" # CARGO_TARGET_DIR or a cargo config may move it

# Control on (80/90) with a cluster that refuses connections: every poll fails fast and load
# control fails open, so each request takes the layer's admitted path. No adaptive sampling.
config="$(mktemp)"
pids="$(mktemp)"
# The servers start in command substitutions (subshells): their pids go to a file.
trap 'kill $(cat "$pids") 2>/dev/null || true; rm -f "$config" "$pids"' EXIT
printf 'search_engine.http.url=http://127.0.0.1:9\nweb.load.control=80\napi.load.control=90\nadaptive.load.control=0\n' >"$config"

start() { # ARGS... -> prints the address
  local out
  out="$(mktemp)"
  RUST_LOG=error "$axum" --listen 127.0.0.1:0 --config "$config" "$@" >"$out" 2>/dev/null &
  echo $! >>"$pids"
  for _ in $(seq 100); do
    if grep -q '^listening on ' "$out"; then
      sed -n 's/^listening on http:\/\///p' "$out"
      return
    fi
    sleep 0.1
  done
  echo "the axum example did not start" >&2
  exit 1
}
with="$(start)"
without="$(start --without-load-control)"
curl -fsS "http://$with/search?q=load" >/dev/null   # starts the monitor

rps() { wrk -t2 -c32 -d"${round}s" "http://$1/search?q=load" | awk '/Requests\/sec/ {print $2}'; }
results=()
for i in 1 2 3; do
  results+=("$(rps "$without") $(rps "$with")")
done
printf '%s\n' "${results[@]}" | awk '
  BEGIN { print "| round | without the layer req/s | with the layer req/s | with / without |"; print "|---|---|---|---|" }
  { a += $1; b += $2; printf "| %d | %.0f | %.0f | %.3f |\n", NR, $1, $2, $2 / $1 }
  END { printf "| all | %.0f | %.0f | **%.3f** |\n", a, b, b / a }'

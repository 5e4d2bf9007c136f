#!/usr/bin/env bash
# The closed-loop experiment (not run in CI, except `--smoke`): a real 3-node OpenSearch
# cluster, search-server in front of it (its crawler indexing under adaptive control), and
# an open-loop search load stepped from 0.25x to 2x of the rate that first drives the
# cluster's CPU to 90 %, with load control off (100) and on (70), alternating. Loopback
# only, every step bounded; the whole run takes about 8 minutes after the build.
#
#   bash bench/closed_loop.sh            # full run: table, results.json and PNG plots in bench/closed-loop/
#   bash bench/closed_loop.sh --smoke    # one 3 s step at 20/s (CI); no plots
#
# With $LOAD_OPENSEARCH_URL set it uses that cluster; otherwise it starts one with
# tests/opensearch/cluster.sh (Java 17 and Maven; the first start downloads OpenSearch)
# and stops it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=""
[[ "${1:-}" == "--smoke" ]] && smoke="--smoke"

if [[ -n "$smoke" ]]; then
  cargo build -q -p load-examples --bin search-server
  cargo build -q -p load-bench --bin closed_loop
  bin=target/debug
  out="target/closed-loop-smoke"
else
  cargo build --release -q -p load-examples --bin search-server
  cargo build --release -q -p load-bench --bin closed_loop
  bin=target/release
  out="bench/closed-loop"
fi

if [[ -z "${LOAD_OPENSEARCH_URL:-}" ]]; then
  trap 'tests/opensearch/cluster.sh stop' EXIT
  LOAD_OPENSEARCH_URL="$(LOAD_CLUSTER_SECURE=0 tests/opensearch/cluster.sh start)"
fi
# One address and nothing else (a captured colour code or a second line fails here, at once).
tests/opensearch/cluster.sh check-url "$LOAD_OPENSEARCH_URL"

started=$SECONDS
mkdir -p "$out"
if [[ -n "$smoke" ]]; then
  "$bin/closed_loop" "$bin/search-server" "$LOAD_OPENSEARCH_URL" "$out" --smoke
  echo "closed-loop smoke: $((SECONDS - started)) s"
  exit 0
fi

{
  echo "# Closed-loop run, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores shared by the cluster, the server and the generator"
  echo
  "$bin/closed_loop" "$bin/search-server" "$LOAD_OPENSEARCH_URL" "$out"
} | tee "$out/table.md"

# The plots: matplotlib in a virtual environment of its own under target/.
venv=target/plot-venv
if ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q matplotlib
fi
"$venv/bin/python" bench/plot_closed_loop.py "$out/results.json" "$out"
echo "closed-loop run: $((SECONDS - started)) s (cluster start and build excluded); see $out/"

#!/usr/bin/env bash
# The closed-loop experiment (not run in CI, except `--smoke`): a real OpenSearch node whose
# JVM runs in a cpuset of its own CPU, search-server fleets in front of it on the other CPU
# (crawlers off: background work quiet), and an open-loop Poisson search load stepped from
# 0.25x to 3x of the rate that first drives the cluster's CPU to 90 %, in Fess's mode, the
# limit mode and the peer (congestion-limiter's Vegas), alternating; with two front ends also
# skewed demand; then a 0.5x -> 2x step test and a burst test per mode. For each workload
# (uniform: 3-word searches; mixed: 70 % two-word, 30 % eight-word) and each fleet size in
# LOAD_FRONT_ENDS (default "1 2"; LOAD_WORKLOADS picks workloads; LOAD_ONE_X=<searches/s> gives
# 1x instead of finding it, to compare two builds at one rate; LOAD_CANDIDATE=<commit> runs that
# commit's limit mode beside this checkout's, alternating, in <profile>/candidate-<commit>/).
# Loopback only, every step bounded; about 15 minutes per workload and fleet size after the
# build.
#
#   bash bench/closed_loop.sh            # full run: tables, results.json and PNG plots in bench/closed-loop/<workload>-<n>fe/
#   bash bench/closed_loop.sh --short    # the law's judge (about 15 minutes): the limit mode and the peer
#                                        # at 0.5x-4x, each goal beside its figure, in bench/closed-loop/short/<workload>-<n>fe/
#   bash bench/closed_loop.sh --onset    # the first seconds of an overload (about 8 minutes a fleet size):
#                                        # surges of 2x and 4x from quiet, fresh and warm-idle front ends,
#                                        # each front end's law traced, in bench/closed-loop/onset/uniform-<n>fe/
#                                        # (LOAD_ONSET_SURGES=1,1.25: other surges, in onset/surges-1-1.25x/)
#   bash bench/closed_loop.sh --smoke    # one short step per mode at 20/s (CI); no plots
#
# The full run starts its own node (tests/opensearch/cluster.sh with LOAD_CLUSTER_CPUS: root,
# a cgroup-v1 cpuset hierarchy and at least 2 CPUs; Maven and a JDK, the first start
# downloads OpenSearch) and pins itself, the servers and the generator to the other CPUs.
# One node, not three: the test runner's nodes share one JVM, whose CPU-load counters are
# per process, so each node's os.cpu.percent covers the time since any node last read it
# (idle, the busiest of three read 100 in 19 of 30 polls). With $LOAD_OPENSEARCH_URL set it
# uses that cluster instead, unisolated (the results say so). The smoke run uses
# $LOAD_OPENSEARCH_URL, or starts a node.
set -euo pipefail
cd "$(dirname "$0")/.."
# The commit the run measures, read before the run writes its own (tracked) tables: read
# later, every run after the first was called dirty by its predecessor's results.
described="$(git describe --always --dirty 2>/dev/null || echo '?')"
smoke=""
profile=""
case "${1:-}" in
  --smoke) smoke="--smoke" ;;
  --short) profile="--short" ;;
  # The onset test is a short profile of its own: its results in onset/, uniform by default.
  --onset) profile="--onset" ;;
  "") ;;
  *) echo "usage: $0 [--short | --onset | --smoke]" >&2; exit 2 ;;
esac
# Checked before anything is built or started.
surges=()
if [[ -n "${LOAD_ONSET_SURGES:-}" ]]; then
  if [[ "$profile" != --onset || ! "$LOAD_ONSET_SURGES" =~ ^[0-9]+([.][0-9]+)?(,[0-9]+([.][0-9]+)?)*$ ]]; then
    echo "LOAD_ONSET_SURGES=$LOAD_ONSET_SURGES: factors of 1x by commas (for example 1,1.25), with --onset" >&2
    exit 2
  fi
  surges=(--surges "$LOAD_ONSET_SURGES")
fi
if [[ -n "${LOAD_ONE_X:-}" && ! "$LOAD_ONE_X" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "LOAD_ONE_X=$LOAD_ONE_X: not a rate in searches a second (for example LOAD_ONE_X=171)" >&2
  exit 2
fi
# A candidate law: the limit mode of another commit's build, run beside the law in force.
candidate_sha=""
if [[ -n "${LOAD_CANDIDATE:-}" ]]; then
  if [[ -z "$profile" ]]; then
    echo "LOAD_CANDIDATE is the short loop's and the onset test's (--short or --onset)" >&2
    exit 2
  fi
  if ! candidate_sha="$(git rev-parse --verify -q "$LOAD_CANDIDATE^{commit}")"; then
    echo "LOAD_CANDIDATE=$LOAD_CANDIDATE: not a commit of this repository" >&2
    exit 2
  fi
fi

# Where cargo puts the binaries: CARGO_TARGET_DIR or a cargo config may move it.
target_dir="$(.ci/target-dir)"
if [[ -n "$smoke" ]]; then
  # With the tests' features (dev-dependencies unified): after `cargo test --workspace`, as
  # in CI, nothing is built again.
  cargo build -q --workspace --bins --tests
  bin="$target_dir/debug"
  out="$target_dir/closed-loop-smoke"
else
  if [[ -n "$candidate_sha" ]]; then
    # The candidate's tree, built into the same target directory (its dependencies are
    # shared) before this checkout's own build replaces the binary; its copy kept aside.
    candidate_src="$target_dir/candidate/src-$candidate_sha"
    candidate_bin="$target_dir/candidate/search-server-$candidate_sha"
    if [[ ! -x "$candidate_bin" ]]; then
      rm -rf "$candidate_src"
      mkdir -p "$candidate_src"
      git archive "$candidate_sha" | tar -x -C "$candidate_src"
      cargo build --release -q --manifest-path "$candidate_src/Cargo.toml" --target-dir "$target_dir" \
        -p load-examples --bin search-server
      cp "$target_dir/release/search-server" "$candidate_bin"
    fi
  fi
  cargo build --release -q -p load-examples --bin search-server
  cargo build --release -q -p load-bench --bin closed_loop
  bin="$target_dir/release"
  out="bench/closed-loop${profile:+/${profile#--}}"
fi

pin=()
isolated=""
if [[ -z "${LOAD_OPENSEARCH_URL:-}" ]]; then
  trap 'tests/opensearch/cluster.sh stop' EXIT
  if [[ -z "$smoke" ]]; then
    cpus="$(nproc)"
    if ((cpus < 2)) || [[ "$(id -u)" != 0 ]]; then
      echo "the full run isolates the cluster on a CPU of its own: it needs root and 2 CPUs or more" \
        "(found $cpus CPUs, uid $(id -u)); or set LOAD_OPENSEARCH_URL for an unisolated run" >&2
      exit 1
    fi
    cluster_cpu=$((cpus - 1))
    front_cpus="0-$((cpus - 2))"
    export LOAD_CLUSTER_CPUS="$cluster_cpu" LOAD_CLUSTER_NODES=1
    pin=(taskset -c "$front_cpus")
    isolated="--isolated"
    echo "cluster on CPU $cluster_cpu; this run, the server and the generator on CPUs $front_cpus" >&2
  fi
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

# The 1x rate a run found (results.json, or short.json / onset.json for those profiles).
results=results.json
[[ -n "$profile" ]] && results="${profile#--}.json"
rate_of() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r.get("short", r.get("onset", r))["rate_1x_per_s"])' "$1"
}
workloads="${LOAD_WORKLOADS:-uniform mixed}"
[[ "$profile" == --onset ]] && workloads="${LOAD_WORKLOADS:-uniform}"

# One run per workload and fleet size. The full run's fleets reuse their workload's 1x rate
# (a run of fleets alone, LOAD_FRONT_ENDS without 1, reads it from the last one-front-end
# results); the short loop's and the onset test's runs each find their own (the node's cost
# per search drifts between runs), unless LOAD_ONE_X gives it. The short loop warms the
# node in its first run only (the full run warms it in each).
warm=()
[[ -n "$profile" ]] && warm=(--warm-up)
for workload in $workloads; do
  rate=()
  if [[ -n "${LOAD_ONE_X:-}" ]]; then
    # A given 1x (searches a second), no ladder: two laws compared on the same rate.
    rate=(--rate "$LOAD_ONE_X")
  elif [[ -z "$profile" && " ${LOAD_FRONT_ENDS:-1 2} " != *" 1 "* ]]; then
    single="$out/$workload-1fe/$results"
    [[ -f "$single" ]] || { echo "no $single to take the 1x rate from: include 1 in LOAD_FRONT_ENDS" >&2; exit 1; }
    rate=(--rate "$(rate_of "$single")")
  fi
  for n in ${LOAD_FRONT_ENDS:-1 2}; do
    dir="$out/$workload-${n}fe"
    ((${#surges[@]})) && dir="$out/surges-${LOAD_ONSET_SURGES//,/-}x/$workload-${n}fe"
    candidate=()
    if [[ -n "$candidate_sha" ]]; then
      # Beside the law in force's tables, never over them; the change judged kept with them.
      dir="$out/candidate-${candidate_sha:0:7}/${dir#"$out"/}"
      mkdir -p "$dir"
      # The change itself: the runs' own results and the model's kept rows left out.
      git diff "${described%-dirty}" "$candidate_sha" -- . ':(exclude)bench/closed-loop' \
        ':(exclude)sim/results' > "$dir/candidate.diff" || true
      candidate=(--candidate "$candidate_bin")
    fi
    mkdir -p "$dir"
    {
      if [[ -n "$isolated" ]]; then
        echo "# Closed-loop ${profile:+${profile#--} }run, $(date -u '+%Y-%m-%d %H:%M UTC'), at $described: $n front end(s), $workload workload; one OpenSearch node on CPU $cluster_cpu (a cpuset of its own), the servers and the generator on CPUs $front_cpus"
      else
        echo "# Closed-loop ${profile:+${profile#--} }run, $(date -u '+%Y-%m-%d %H:%M UTC'), at $described: $n front end(s), $workload workload; $LOAD_OPENSEARCH_URL, not isolated (its CPU may include the servers' and the generator's)"
      fi
      if [[ -n "$candidate_sha" ]]; then
        echo
        echo "The candidate: the limit mode of ${candidate_sha:0:7} ($(git log -1 --format=%s "$candidate_sha")), its change in candidate.diff."
      fi
      echo
      "${pin[@]}" "$bin/closed_loop" "$bin/search-server" "$LOAD_OPENSEARCH_URL" "$dir" $isolated $profile \
        --front-ends "$n" --workload "$workload" "${rate[@]}" "${warm[@]}" "${surges[@]}" \
        "${candidate[@]}"
    } | tee "$dir/table.md"
    warm=()
    if [[ -z "$profile" ]] && ((${#rate[@]} == 0)); then
      rate=(--rate "$(rate_of "$dir/$results")")
    fi
  done
done
if [[ -n "$profile" ]]; then
  echo "closed-loop ${profile#--} run: $((SECONDS - started)) s (cluster start and build excluded); see $out/"
  exit 0
fi

# The plots: matplotlib in a virtual environment of its own under target/.
venv=target/plot-venv
if ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q matplotlib
fi
for dir in "$out"/*-*fe; do
  "$venv/bin/python" bench/plot_closed_loop.py "$dir/results.json" "$dir"
done
echo "closed-loop run: $((SECONDS - started)) s (cluster start and build excluded); see $out/"

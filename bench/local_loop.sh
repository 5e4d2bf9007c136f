#!/usr/bin/env bash
# The local loop (not run in CI): a service limited by its own CPU (the `cpu_service`
# example: each request a few ms of hashing on tokio's blocking pool, behind the library's
# layer reading its own CPU) alone on one core, an open-loop Poisson load from the others.
# Fess's rule, the limit mode (on the service's own load, and on its CPU alone), tower's
# ConcurrencyLimit(1) (tuned by hand to the core, the oracle), little-loadshedder 0.2
# (latency target ten times the light-load p50) and a port of Kratos' BBR limiter at
# 0.25x-4x, alternating, each step on a fresh service; then a burst test and a step from 0.5x
# to 2x per mode; the goals of the short real loop beside each figure. About 9 minutes after
# the build.
#
#   bash bench/local_loop.sh [--work-ms MS]    # results in bench/local-loop/
#   bash bench/local_loop.sh --bursts 5        # the burst test alone, 5 rounds a mode:
#                                              # bench/local-loop/bursts.{md,json}, ~3 minutes
#   bash bench/local_loop.sh --step 3          # the step test alone, traced, 3 rounds a mode:
#                                              # bench/local-loop/step.{md,json}, ~2 minutes
#   bash bench/local_loop.sh --one-x 3         # the 1x and 1.1x steps alone, traced, 3 rounds:
#                                              # bench/local-loop/one-x.{md,json}, ~3 minutes
#
# The service starts in a cgroup-v1 cpuset of the last CPU and a cpuacct group of its own
# (/sys/fs/cgroup/{cpuset,cpuacct}/load-control-service), so that `SystemSource` reads the
# service's own CPU over its one core; this script, the generator and everything else run
# on the other CPUs. Needs root, a cgroup-v1 cpuset and cpuacct hierarchy, 2 CPUs or more.
# Loopback only, every step bounded; the groups are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
work=(--work-ms 3)
extra=()
while (($#)); do
  case "$1" in
    --work-ms) work=(--work-ms "${2:?--work-ms needs milliseconds}"); shift 2 ;;
    --bursts | --step | --one-x) extra=("$1" "${2:?$1 needs a count of rounds}"); shift 2 ;;
    *) echo "usage: $0 [--work-ms MS] [--bursts ROUNDS | --step ROUNDS | --one-x ROUNDS]" >&2; exit 2 ;;
  esac
done
cpus="$(nproc)"
if ((cpus < 2)) || [[ "$(id -u)" != 0 ]]; then
  echo "the local loop puts the service on a CPU of its own: it needs root and 2 CPUs or more" \
    "(found $cpus CPUs, uid $(id -u))" >&2
  exit 1
fi
for hierarchy in cpuset cpuacct; do
  if [[ ! -f "/sys/fs/cgroup/$hierarchy/tasks" ]]; then
    echo "the local loop needs a cgroup-v1 $hierarchy hierarchy at /sys/fs/cgroup/$hierarchy" >&2
    exit 1
  fi
done

cargo build --release -q -p load-examples --example cpu_service
cargo build --release -q -p load-bench --bin local_loop
target_dir="$(.ci/target-dir)"
out=bench/local-loop

service_cpu=$((cpus - 1))
cpuset=/sys/fs/cgroup/cpuset/load-control-service
cpuacct=/sys/fs/cgroup/cpuacct/load-control-service
remove_groups() {
  local group pid
  for group in "$cpuset" "$cpuacct"; do
    [[ -d "$group" ]] || continue
    for pid in $(cat "$group/tasks" 2>/dev/null); do
      kill "$pid" 2>/dev/null || true
    done
    sleep 0.2
    rmdir "$group" 2>/dev/null || true
  done
  rm -f "$enter"
}
enter="$(mktemp)"
trap remove_groups EXIT
mkdir -p "$cpuset" "$cpuacct"
echo "$service_cpu" >"$cpuset/cpuset.cpus"
cat /sys/fs/cgroup/cpuset/cpuset.mems >"$cpuset/cpuset.mems"
# The service's shell moves itself into both groups, then becomes the service.
cat >"$enter" <<SH
#!/usr/bin/env bash
echo \$\$ >"$cpuset/cgroup.procs" && echo \$\$ >"$cpuacct/cgroup.procs" && exec "\$@"
SH
chmod +x "$enter"
# What the tables say they measured: when, the commit, and whether the checkout had changes.
LOAD_LOOP_RUN="$(date -u '+%Y-%m-%d %H:%M UTC'), at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
git diff --quiet HEAD -- . ':!bench/local-loop' 2>/dev/null || LOAD_LOOP_RUN+=" with changes"
export LOAD_LOOP_RUN
echo "the service on CPU $service_cpu; this run and the generator on CPUs 0-$((cpus - 2))" >&2
mkdir -p "$out"
taskset -c "0-$((cpus - 2))" "$target_dir/release/local_loop" "$enter" \
  "$target_dir/release/examples/cpu_service" "$out" "${work[@]}" "${extra[@]}"

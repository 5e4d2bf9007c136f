#!/usr/bin/env bash
# Real OpenSearch for the tests, on 127.0.0.1, in the background:
#   - a cluster of 3 nodes in one JVM (plain HTTP), steered by the tests;
#   - one secured node (security plugin: TLS with a CA made here, basic auth).
#
#   tests/opensearch/cluster.sh start         build if needed, start both, wait, print the cluster URL
#                                             (LOAD_CLUSTER_SECURE=0: the cluster only)
#   tests/opensearch/cluster.sh url           the cluster's URL
#   tests/opensearch/cluster.sh check-url URL exit 1, naming the value, unless URL is one cluster URL
#   tests/opensearch/cluster.sh secure-url    the secured node's URL (https)
#   tests/opensearch/cluster.sh stop          stop both (SIGTERM, then SIGKILL after 60 s)
#   tests/opensearch/cluster.sh capture DIR   save the cluster's real responses as fixtures in DIR
#
# LOAD_CLUSTER_CPUS=1 (a cgroup-v1 cpuset list) starts the cluster's JVM inside a cpuset of
# those CPUs of its own (/sys/fs/cgroup/cpuset/load-control-cluster; root only). The JDK
# reads its cgroup once, at start, and then reports os.cpu.percent over the cpuset's CPUs
# only: the cluster's CPU signal is the cluster's, whatever runs on the other CPUs. `stop`
# removes the cpuset.
#
# The 3 nodes share one JVM, and the JDK's CPU-load counters are per process: each node's
# os.cpu.percent covers the time since *any* node last read it, so on an idle host the
# busiest of three often reads 100 (19 of 30 polls, measured). Good for the tests, which
# steer the nodes' figures; a load experiment wants LOAD_CLUSTER_NODES=1 (or one JVM per
# node), as bench/closed_loop.sh does.
#
# The first start downloads OpenSearch and its security plugin from Maven Central (about
# 150 MB into ~/.m2); later starts are offline. State lives in $LOAD_CLUSTER_DIR (default:
# target/opensearch at the root of the checkout), wiped at each start: cluster/ and secure/
# (with certs/ca.pem and password). Needs Java 17, Maven and openssl.
#
# `start` and `url` print exactly one line on stdout, the URL, so that scripts can capture
# it; everything else (Maven, openssl, progress) goes to stderr
# (tests/opensearch/stdout_check.sh holds it to that).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
base="${LOAD_CLUSTER_DIR:-$root/target/opensearch}"
cluster="$base/cluster"
secure="$base/secure"
nodes="${LOAD_CLUSTER_NODES:-3}"
with_secure="${LOAD_CLUSTER_SECURE:-1}"
java_opts=(-XX:+UseSerialGC -Dlog4j2.formatMsgNoLookups=true)

build() {
  if ! (cd "$here" && mvn -B -q -o package >/dev/null 2>&1); then
    echo "building the cluster runner (the first time downloads OpenSearch from Maven Central)" >&2
    # Maven writes ANSI codes to stdout when it downloads, even with -B -q.
    (cd "$here" && mvn -B -q package) >&2
  fi
}

# Exit 1 with a message naming the value, unless it is exactly one http(s) URL of a host
# and port (what `start` prints): no whitespace, no control characters, nothing around it.
check_url() { # VALUE
  if [[ "$1" =~ ^https?://[A-Za-z0-9.-]+:[0-9]{1,5}$ ]]; then
    return 0
  fi
  printf 'not a cluster URL: %q (expected http://HOST:PORT, as cluster.sh start prints it)\n' "$1" >&2
  return 1
}

running() { # DIR
  [[ -f "$1/pid" ]] && kill -0 "$(cat "$1/pid")" 2>/dev/null
}

cpuset_dir=/sys/fs/cgroup/cpuset/load-control-cluster

# Creates the cluster's cpuset of LOAD_CLUSTER_CPUS, or says why it cannot.
make_cpuset() {
  local root=/sys/fs/cgroup/cpuset
  if [[ ! -f "$root/cpuset.cpus" || ! -f "$root/tasks" ]]; then
    echo "LOAD_CLUSTER_CPUS needs a cgroup-v1 cpuset hierarchy at $root (not found)" >&2
    return 1
  fi
  if [[ ! "$LOAD_CLUSTER_CPUS" =~ ^[0-9]+([-,][0-9]+)*$ ]]; then
    printf 'LOAD_CLUSTER_CPUS=%q is not a CPU list such as 1 or 2-3\n' "$LOAD_CLUSTER_CPUS" >&2
    return 1
  fi
  mkdir -p "$cpuset_dir" 2>/dev/null || {
    echo "cannot create $cpuset_dir (LOAD_CLUSTER_CPUS needs root)" >&2
    return 1
  }
  cat "$root/cpuset.mems" >"$cpuset_dir/cpuset.mems"
  if ! echo "$LOAD_CLUSTER_CPUS" >"$cpuset_dir/cpuset.cpus" 2>/dev/null; then
    echo "LOAD_CLUSTER_CPUS=$LOAD_CLUSTER_CPUS: not CPUs of this machine ($(cat "$root/cpuset.cpus"))" >&2
    return 1
  fi
  echo "the cluster's JVM runs on CPUs $(cat "$cpuset_dir/cpuset.cpus") (cpuset $cpuset_dir)" >&2
}

remove_cpuset() {
  [[ -d "$cpuset_dir" ]] || return 0
  # Anything left in it (nothing, once the JVM is gone) goes back to the root cpuset.
  local pid
  for pid in $(cat "$cpuset_dir/tasks" 2>/dev/null); do
    echo "$pid" >/sys/fs/cgroup/cpuset/tasks 2>/dev/null || true
  done
  rmdir "$cpuset_dir" 2>/dev/null || true
}

launch() { # DIR HEAP CLASSPATH ARGS...
  local dir="$1" heap="$2" classpath="$3" enter=()
  shift 3
  # The JVM outlives this script: it must not hold `start`'s stdout (fd 3), or a caller's
  # `$(cluster.sh start)` would wait for the cluster to stop.
  if [[ -n "${LOAD_CLUSTER_CPUS:-}" ]]; then
    # The JVM must start inside the cpuset: the shell moves itself in, then becomes java.
    enter=(bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cpuset_dir")
  fi
  nohup "${enter[@]}" java "-Xms$heap" "-Xmx$heap" "${java_opts[@]}" -Djava.io.tmpdir="$dir" \
    -Dsecurity.config="$here/target/security-plugin/config" -cp "$classpath" \
    org.loadcontrol.cluster.Cluster "$dir" "$@" >"$dir/java.log" 2>&1 </dev/null 3>&- &
  echo $! >"$dir/pid"
}

await() { # DIR WHAT CHECK...
  local dir="$1" what="$2" started=$SECONDS
  shift 2
  until "$@"; do
    if ! running "$dir"; then
      echo "the $what exited while starting; the end of $dir/java.log:" >&2
      tail -n 40 "$dir/java.log" >&2
      return 1
    fi
    if ((SECONDS - started > 300)); then
      echo "the $what was not ready after 300 s; the end of $dir/java.log:" >&2
      tail -n 40 "$dir/java.log" >&2
      return 1
    fi
    sleep 1
  done
}

certificates() { # DIR: a CA and a node certificate for 127.0.0.1 and localhost
  local certs="$1/certs"
  mkdir -p "$certs"
  (
    cd "$certs"
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 30 -subj "/CN=load-control-test-ca" \
      -keyout ca-key.pem -out ca.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=node.load-control.test" \
      -keyout node-key-rsa.pem -out node.csr 2>/dev/null
    openssl pkcs8 -topk8 -nocrypt -in node-key-rsa.pem -out node-key.pem
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >ext
    openssl x509 -req -in node.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -sha256 \
      -days 30 -extfile ext -out node.pem 2>/dev/null
  )
}

secure_ready() {
  [[ -f "$secure/url" ]] && curl -fsS -o /dev/null --cacert "$secure/certs/ca.pem" \
    -u "loadcontrol:$(cat "$secure/password")" "$(cat "$secure/url")/_cluster/health" 2>/dev/null
}

start() {
  # Only the URL goes to stdout (fd 3); everything this function runs writes to stderr.
  exec 3>&1 1>&2
  if running "$cluster" || running "$secure"; then
    echo "already running: $(cat "$cluster/url" 2>/dev/null || echo '(starting)')" >&2
    exit 1
  fi
  build
  rm -rf "$base"
  mkdir -p "$cluster" "$secure"
  local classpath security_jars=() jar name
  classpath="$here/target/classes:$(cat "$here/target/classpath.txt")"
  # The secured node: the plugin's jars that the runner's classpath lacks.
  for jar in "$here"/target/security-plugin/*.jar; do
    name="$(basename "$jar" | sed -E 's/-[0-9][^-]*(-[A-Za-z]+)?\.jar$//')"
    if ! grep -qE "/$name-[0-9][^/:]*\.jar" "$here/target/classpath.txt"; then
      security_jars+=("$jar")
    fi
  done
  certificates "$secure"
  openssl rand -hex 16 >"$secure/password"
  chmod 600 "$secure/password" "$secure/certs/"*key*.pem

  if [[ -n "${LOAD_CLUSTER_CPUS:-}" ]]; then
    make_cpuset || exit 1
  fi
  local started=$SECONDS
  launch "$cluster" 1g "$classpath" "$nodes"
  if [[ "$with_secure" != 0 ]]; then
    launch "$secure" 512m "$classpath:$(IFS=:; echo "${security_jars[*]}")" 1 --secure
  fi
  if ! await "$cluster" "cluster" test -f "$cluster/url" ||
    { [[ "$with_secure" != 0 ]] && ! await "$secure" "secured node" secure_ready; }; then
    stop
    exit 1
  fi
  if [[ "$with_secure" != 0 ]]; then
    echo "ready in $((SECONDS - started)) s: cluster $(cat "$cluster/url"), secured node $(cat "$secure/url")" >&2
  else
    echo "ready in $((SECONDS - started)) s: cluster $(cat "$cluster/url") (no secured node)" >&2
  fi
  local url
  url="$(cat "$cluster/url")"
  check_url "$url" || { stop; exit 1; }
  printf '%s\n' "$url" >&3
}

halt() { # DIR
  [[ -f "$1/pid" ]] || return 0
  local pid
  pid="$(cat "$1/pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -CONT "$pid" 2>/dev/null || true # a test may have frozen it
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$1/pid" "$1/url"
}

stop() {
  halt "$cluster"
  halt "$secure"
  remove_cpuset
}

capture() {
  local out="$1" url version
  url="$(cat "$cluster/url")"
  version="$(tr -d '\n' <"$cluster/version")"
  mkdir -p "$out"
  curl -fsS "$url/_nodes/stats/os?filter_path=_nodes,nodes.*.os.cpu.percent" \
    >"$out/os-$version-real-filtered.json"
  curl -fsS "$url/_nodes/stats/os" >"$out/os-$version-real-full.json"
  echo "captured $out/os-$version-real-{filtered,full}.json" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) cat "$cluster/url" ;;
  check-url) check_url "${2-}" ;;
  secure-url) cat "$secure/url" ;;
  capture) capture "${2:?capture needs a directory}" ;;
  *)
    echo "usage: $0 start|stop|url|check-url URL|secure-url|capture DIR" >&2
    exit 2
    ;;
esac

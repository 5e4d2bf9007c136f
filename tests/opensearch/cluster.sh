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
#   tests/opensearch/cluster.sh java          the JAVA_HOME the line runs on (exit 1 when none fits)
#   tests/opensearch/cluster.sh build         build the line's runner (downloads it the first time), start nothing
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
# LOAD_CLUSTER_VERSION picks the OpenSearch line (pom.xml's profiles):
#   2  OpenSearch 2.19.1, the line Fess 14 runs on (the default); Java 17 or the JDK on PATH
#   3  OpenSearch 3.4.0, the line Fess 15 runs on; needs Java 21 or newer, which this script
#      finds: $LOAD_CLUSTER_JAVA_HOME, else $JAVA_HOME, else the newest JDK under
#      /usr/lib/jvm that is 21 or newer (a Temurin 25 on the project's machines)
# Each line builds into tests/opensearch/target/<line>, so both stay built side by side.
#
# The first start of a line downloads OpenSearch and its security plugin from Maven Central
# (about 150 MB into ~/.m2); later starts are offline. State lives in $LOAD_CLUSTER_DIR
# (default: target/opensearch at the root of the checkout), wiped at each start: cluster/ and
# secure/ (with certs/ca.pem and password). Needs Maven, openssl and the JDK above.
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
line="${LOAD_CLUSTER_VERSION:-2}"
built="$here/target/$line"
with_secure="${LOAD_CLUSTER_SECURE:-1}"
java_opts=(-XX:+UseSerialGC -Dlog4j2.formatMsgNoLookups=true)

# The major version of the JDK at $1 (a JAVA_HOME), or nothing.
jdk_major() {
  [[ -x "$1/bin/java" ]] || return 0
  "$1/bin/java" -XshowSettings:properties -version 2>&1 |
    sed -nE 's/^ *java\.specification\.version = ([0-9]+).*/\1/p' | head -n 1
}

# Sets JAVA_HOME (and PATH) to a JDK the line runs on, or says which it needs.
pick_java() {
  case "$line" in
    2) return 0 ;; # Java 17 or the JDK on PATH, as before
    3) ;;
    *)
      printf 'LOAD_CLUSTER_VERSION=%q: 2 (OpenSearch 2.19, Fess 14) or 3 (OpenSearch 3.4, Fess 15)\n' \
        "$line" >&2
      exit 2
      ;;
  esac
  local candidate major best="" best_major=0
  for candidate in "${LOAD_CLUSTER_JAVA_HOME:-}" "${JAVA_HOME:-}"; do
    [[ -n "$candidate" ]] || continue
    major="$(jdk_major "$candidate")"
    if [[ -n "$major" ]] && ((major >= 21)); then
      best="$candidate"
      break
    fi
  done
  if [[ -z "$best" ]]; then
    for candidate in /usr/lib/jvm/*/; do
      candidate="${candidate%/}"
      major="$(jdk_major "$candidate")"
      if [[ -n "$major" ]] && ((major >= 21 && major > best_major)); then
        best="$candidate" best_major="$major"
      fi
    done
  fi
  if [[ -z "$best" ]]; then
    echo "OpenSearch 3.x needs Java 21 or newer: none found (LOAD_CLUSTER_JAVA_HOME, JAVA_HOME," \
      "/usr/lib/jvm/*); install one and set LOAD_CLUSTER_JAVA_HOME" >&2
    exit 1
  fi
  export JAVA_HOME="$best" PATH="$best/bin:$PATH"
}

build() {
  local profile="-Popensearch-$line"
  if ! (cd "$here" && mvn -B -q -o "$profile" package >/dev/null 2>&1); then
    echo "building the OpenSearch $line.x runner (the first time downloads OpenSearch from Maven Central)" >&2
    # Maven writes ANSI codes to stdout when it downloads, even with -B -q.
    (cd "$here" && mvn -B -q "$profile" package) >&2
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
    -Dsecurity.config="$built/security-plugin/config" -cp "$classpath" \
    org.loadcontrol.cluster.Cluster "$dir" "$@" >"$dir/java.log" 2>&1 </dev/null 3>&- &
  echo $! >"$dir/pid"
}

# Waits until CHECK passes. A JVM that exits while starting because a port it was given
# was taken before it bound it (another process's connection, or the other JVM's pick) is
# launched again, with LAUNCH-ARGS, on new ports, twice at most; any other exit is reported.
await() { # DIR WHAT CHECK LAUNCH-ARGS...
  local dir="$1" what="$2" check="$3" started=$SECONDS tries=1
  shift 3
  until "$check"; do
    if ! running "$dir"; then
      if ((tries < 3)) && grep -qE 'BindException|Address already in use' "$dir/java.log"; then
        echo "the $what lost a port before binding it; starting it again on other ports" >&2
        mv "$dir/java.log" "$dir/java.log.$tries"
        rm -rf "$dir/nodes"
        tries=$((tries + 1))
        launch "$@"
        continue
      fi
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

cluster_ready() {
  [[ -f "$cluster/url" ]]
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
  pick_java
  build
  rm -rf "$base"
  mkdir -p "$cluster" "$secure"
  local classpath security_jars=() jar name
  classpath="$built/classes:$(cat "$built/classpath.txt")"
  # The secured node: the plugin's jars that the runner's classpath lacks.
  for jar in "$built"/security-plugin/*.jar; do
    name="$(basename "$jar" | sed -E 's/-[0-9][^-]*(-[A-Za-z]+)?\.jar$//')"
    if ! grep -qE "/$name-[0-9][^/:]*\.jar" "$built/classpath.txt"; then
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
  local cluster_launch=("$cluster" 1g "$classpath" "$nodes")
  local secure_launch=("$secure" 512m "$classpath:$(IFS=:; echo "${security_jars[*]}")" 1 --secure)
  launch "${cluster_launch[@]}"
  if [[ "$with_secure" != 0 ]]; then
    launch "${secure_launch[@]}"
  fi
  if ! await "$cluster" "cluster" cluster_ready "${cluster_launch[@]}" ||
    { [[ "$with_secure" != 0 ]] && ! await "$secure" "secured node" secure_ready "${secure_launch[@]}"; }; then
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

# One answer of the node, as a fixture wrapper {"request", "status", "headers", "body"} (see
# tests/fixtures/opensearch/README.md): the body as JSON when it is JSON, else as text.
capture_answer() { # FILE WHAT CURL-ARGS...
  local file="$1" what="$2" status
  shift 2
  status="$(curl -sS -D "$file.head" -o "$file.body" -w '%{http_code}' "$@")"
  python3 - "$file" "$what" "$status" <<'PY'
import json, sys
file, what, status = sys.argv[1], sys.argv[2], int(sys.argv[3])
headers = {}
for line in open(file + ".head", encoding="latin-1").read().splitlines()[1:]:
    name, _, value = line.partition(":")
    if name.lower() in ("content-type", "www-authenticate"):
        headers[name.lower()] = value.strip()
raw = open(file + ".body", "rb").read().decode("utf-8")
try:
    body = json.loads(raw)
except ValueError:
    body = raw
with open(file, "w", encoding="utf-8") as out:
    json.dump({"request": what, "status": status, "headers": headers, "body": body}, out, indent=2)
    out.write("\n")
PY
  rm -f "$file.head" "$file.body"
}

capture() {
  local out="$1" url version prefix surl ca password
  url="$(cat "$cluster/url")"
  version="$(tr -d '\n' <"$cluster/version")"
  prefix="$out/os-$version-real"
  mkdir -p "$out"
  # What the source asks (load_core::node_stats::NODE_STATS_PATH).
  curl -fsS "$url/_nodes/stats/os,thread_pool,indices/search?filter_path=_nodes,nodes.*.timestamp,nodes.*.os.cpu.percent,nodes.*.thread_pool.search.threads,nodes.*.thread_pool.search.queue,nodes.*.thread_pool.search.active,nodes.*.thread_pool.search.total_wait_time_in_nanos,nodes.*.indices.search.query_time_in_millis,nodes.*.indices.search.fetch_time_in_millis" \
    >"$prefix-filtered.json"
  curl -fsS "$url/_nodes/stats/os" >"$prefix-full.json"
  capture_answer "$prefix-400-unrecognized-metric.json" "GET /_nodes/stats/osx (OpenSearch $version)" \
    "$url/_nodes/stats/osx"
  capture_answer "$prefix-404.json" \
    "GET /nodes/_stats (missing underscore: the stats of an index 'nodes'; OpenSearch $version)" \
    "$url/nodes/_stats"
  if running "$secure" && [[ -f "$secure/url" ]]; then
    surl="$(cat "$secure/url")" ca="$secure/certs/ca.pem" password="$(cat "$secure/password")"
    capture_answer "$prefix-401.json" \
      "GET /_nodes/stats/os without credentials (security plugin, OpenSearch $version)" \
      --cacert "$ca" "$surl/_nodes/stats/os"
    capture_answer "$prefix-401-wrong-password.json" \
      "GET /_nodes/stats/os with a wrong password (security plugin, OpenSearch $version)" \
      --cacert "$ca" -u "loadcontrol:not-$password" "$surl/_nodes/stats/os"
    capture_answer "$prefix-403.json" \
      "GET /_nodes/stats/os as a user without permissions (security plugin, OpenSearch $version)" \
      --cacert "$ca" -u "reader:$password" "$surl/_nodes/stats/os"
  else
    echo "no secured node: the 401 and 403 answers are not captured" >&2
  fi
  echo "captured $prefix-*.json" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) cat "$cluster/url" ;;
  check-url) check_url "${2-}" ;;
  secure-url) cat "$secure/url" ;;
  capture) capture "${2:?capture needs a directory}" ;;
  build)
    # Nothing of Maven's reaches stdout.
    exec 1>&2
    pick_java
    build
    ;;
  java)
    pick_java
    java_bin="$(command -v java)" || { echo "no java on PATH" >&2; exit 1; }
    printf '%s (Java %s)\n' "${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$java_bin")")")}" \
      "$(jdk_major "${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$java_bin")")")}")"
    ;;
  *)
    echo "usage: $0 start|stop|url|check-url URL|secure-url|capture DIR|java|build" >&2
    exit 2
    ;;
esac

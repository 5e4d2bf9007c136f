#!/usr/bin/env bash
# `cluster.sh start` prints exactly one line on stdout, the cluster's URL, whatever Maven
# does: scripts capture it (`url="$(cluster.sh start)"`). Maven writes ANSI reset codes to
# stdout when it downloads, even with -B -q; a stand-in `mvn` on PATH does so every time and
# makes the offline build fail, so that the first-start build runs. And the capture returns
# once the node is up. Starts one node of its own (no secured node) in a directory of its
# own, and stops it whatever happens.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'LOAD_CLUSTER_DIR="$work/state" "$here/cluster.sh" stop; rm -rf "$work"' EXIT

real_mvn="$(command -v mvn)"
mkdir -p "$work/bin"
cat >"$work/bin/mvn" <<SHIM
#!/usr/bin/env bash
for arg; do [[ "\$arg" == -o ]] && exit 1; done
printf '\033[0m\033[0m'
exec "$real_mvn" "\$@"
SHIM
chmod +x "$work/bin/mvn"

# Captured as the scripts capture it: the substitution must end once the node is up, so
# nothing left running (the JVM) may hold cluster.sh's stdout open.
(
  url="$(PATH="$work/bin:$PATH" LOAD_CLUSTER_DIR="$work/state" LOAD_CLUSTER_SECURE=0 \
    LOAD_CLUSTER_NODES=1 "$here/cluster.sh" start)"
  printf '%s\n' "$url" >"$work/stdout"
) &
capture=$!
deadline=$((SECONDS + 600)) # the first start builds and downloads
until [[ -f "$work/state/cluster/url" ]] || ! kill -0 "$capture" 2>/dev/null; do
  if ((SECONDS > deadline)); then
    echo "cluster.sh start: no node after 600 s" >&2
    exit 1
  fi
  sleep 1
done
for _ in $(seq 20); do
  kill -0 "$capture" 2>/dev/null || break
  sleep 1
done
if kill -0 "$capture" 2>/dev/null; then
  echo "\$(cluster.sh start) did not return 20 s after the node was up: something it left" \
    "running holds its stdout open" >&2
  kill "$capture" 2>/dev/null || true
  exit 1
fi
wait "$capture" || { echo "cluster.sh start failed" >&2; exit 1; }
url="$(head -n 1 "$work/stdout")"
if ! printf '%s\n' "$url" | cmp -s - "$work/stdout" ||
  ! [[ "$url" =~ ^http://127\.0\.0\.1:[0-9]{1,5}$ ]]; then
  echo "cluster.sh start printed more than its URL on stdout:" >&2
  od -c "$work/stdout" >&2
  exit 1
fi
echo "cluster.sh start printed exactly one line on stdout, and returned: $url" >&2

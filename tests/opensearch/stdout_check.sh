#!/usr/bin/env bash
# `cluster.sh start` prints exactly one line on stdout, the cluster's URL, whatever Maven
# does: scripts capture it (`url="$(cluster.sh start)"`). Maven writes ANSI reset codes to
# stdout when it downloads, even with -B -q; a stand-in `mvn` on PATH does so every time and
# makes the offline build fail, so that the first-start build runs. Starts one node of its
# own (no secured node) in a directory of its own, and stops it whatever happens.
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

PATH="$work/bin:$PATH" LOAD_CLUSTER_DIR="$work/state" LOAD_CLUSTER_SECURE=0 LOAD_CLUSTER_NODES=1 \
  "$here/cluster.sh" start >"$work/stdout"
url="$(head -n 1 "$work/stdout")"
if ! printf '%s\n' "$url" | cmp -s - "$work/stdout" ||
  ! [[ "$url" =~ ^http://127\.0\.0\.1:[0-9]{1,5}$ ]]; then
  echo "cluster.sh start printed more than its URL on stdout:" >&2
  od -c "$work/stdout" >&2
  exit 1
fi
echo "cluster.sh start printed exactly one line on stdout: $url" >&2

#!/usr/bin/env bash
# Builds load-core's firmware scenarios for a Cortex-M4 (thumbv7em-none-eabihf, QEMU's
# mps2-an386) and a Cortex-M0 (thumbv6m-none-eabi, QEMU's microbit, core atomics through
# portable-atomic), runs each under qemu-system-arm with semihosting, and fails unless every
# case passed within the time limit. Prints the image and symbol sizes.
#
#   bash tests/embedded/run.sh
set -euo pipefail
cd "$(dirname "$0")"

sysroot="$(rustc --print sysroot)"
tools="$sysroot/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin"
# Where cargo puts the images: CARGO_TARGET_DIR or a cargo config may move it.
target_dir="$(../../.ci/target-dir "$PWD/Cargo.toml")"
status=0
for board in "thumbv7em-none-eabihf mps2-an386 cortex-m4" "thumbv6m-none-eabi microbit cortex-m0"; do
  read -r target machine cpu <<<"$board"
  echo "== $target on QEMU $machine ($cpu)"
  cargo build --release -q --target "$target"
  image="$target_dir/$target/release/load-embedded"
  set +e
  output="$(timeout 120 qemu-system-arm -machine "$machine" -cpu "$cpu" -nographic \
    -semihosting-config enable=on,target=native -icount shift=0 -kernel "$image" 2>&1)"
  rc=$?
  set -e
  echo "$output"
  if [[ $rc -ne 0 ]] || ! grep -Eq '^[0-9]+ passed, 0 failed$' <<<"$output"; then
    echo "FAILED on $target (exit $rc)" >&2
    status=1
  fi
  if [[ -x "$tools/llvm-size" ]]; then
    "$tools/llvm-size" "$image"
    echo "largest symbols of the core (bytes of flash):"
    "$tools/llvm-nm" --print-size --size-sort --radix=d --demangle "$image" |
      grep -E 'load_core' | tail -n 8 | awk '{size=$2+0; $1=""; $2=""; $3=""; printf "%8d %s\n", size, $0}'
  fi
done
exit "$status"

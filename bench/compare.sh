#!/usr/bin/env bash
# A criterion bench of two commits, built side by side and run alternately (A B A B ...), so
# that both meet the same moment of this shared, noisy machine. Prints a Markdown table of
# criterion's point estimates per round and the median of after / before; keeps it (and each
# run's output) in OUT. Not run in CI: each commit's bench is a release build.
#
#   bash bench/compare.sh BEFORE [AFTER] [FILTER] [ROUNDS] [OUT]
#
# BEFORE and AFTER are commits (AFTER defaults to the checkout as it is, uncommitted changes
# included); FILTER is criterion's (default `admit/`); ROUNDS runs of each (default 3);
# OUT the results directory (default bench/compare/<before>-<after>). Environment: BENCH
# (default check), WARM_UP and MEASURE (criterion's seconds, default 1 and 3).
set -euo pipefail
cd "$(dirname "$0")/.."
before="${1:?usage: bash bench/compare.sh BEFORE [AFTER] [FILTER] [ROUNDS] [OUT]}"
after="${2:-}"
filter="${3:-admit/}"
rounds="${4:-3}"
bench="${BENCH:-check}"
short() { if [[ -z "$1" ]]; then echo worktree; else git rev-parse --short "$1"; fi; }
out="${5:-bench/compare/$(short "$before")-$(short "$after")}"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Each commit builds in a target directory of its own, kept for the next comparison that
# names it: the same commit, the same sources. Sides once shared one directory, and then each
# side one directory reused across comparisons: cargo took a later build's workspace crates
# for fresh (`git archive` gives their files the commit's time, older than the outputs
# already there) and linked the earlier build's, so that a change to the request path was
# never built (found when a second side's examples failed to compile against another
# commit's load-runtime). The checkout as it is builds in `worktree/`, its files' times
# their own. Each bench binary is copied out.
target="$(.ci/target-dir)/compare"

build() { # SIDE COMMIT -> the binary at $work/SIDE
  local side="$1" commit="$2" dir="$work/src-$1"
  mkdir -p "$dir"
  if [[ -z "$commit" ]]; then
    git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -x -C "$dir"
  else
    git archive "$commit" | tar -x -C "$dir"
  fi
  # Cargo's JSON messages name the bench's executable; its human output goes to stderr.
  local built="$target/worktree"
  [[ -n "$commit" ]] && built="$target/$(git rev-parse "$commit^{commit}")"
  (cd "$dir" && CARGO_TARGET_DIR="$built" cargo bench -q -p load-bench --bench "$bench" \
    --no-run --message-format=json) |
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["bench"]:
        print(m["executable"])' >"$work/$side.path"
  cp "$(tail -n1 "$work/$side.path")" "$work/$side"
}

echo "building $bench at $(short "$before") and $(short "$after"), each in $target/<commit>" >&2
build before "$before"
build after "$after"

for round in $(seq "$rounds"); do
  for side in before after; do
    echo "round $round: $side" >&2
    "$work/$side" --bench "$filter" --noplot --warm-up-time "${WARM_UP:-1}" \
      --measurement-time "${MEASURE:-3}" >"$out/$side-$round.txt" 2>/dev/null
  done
done

python3 - "$out" "$rounds" "$(short "$before")" "$(short "$after")" "$filter" <<'EOF' | tee "$out/table.md"
import re, statistics, sys
out, rounds, before, after, flt = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
unit = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
def estimates(path):
    # criterion: a line with the bench's id, then `time:   [low estimate high]`.
    found, name = {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^(\S+)\s*(time:.*)?$", line.rstrip())
        if m and not line.startswith(" ") and "/" in m.group(1):
            name = m.group(1)
        t = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+)", line)
        if t and name:
            found[name] = float(t.group(1)) * unit[t.group(2)]
            name = None
    return found
runs = {side: [estimates(f"{out}/{side}-{r}.txt") for r in range(1, rounds + 1)] for side in ("before", "after")}
names = [n for n in runs["after"][0] if all(n in r for side in runs.values() for r in side)]
missing = sorted(set(runs["after"][0]) - set(names))
head = " | ".join(f"{s} {r}" for r in range(1, rounds + 1) for s in ("before", "after"))
print(f"`{flt}` of {before} (before) and {after} (after), run alternately {rounds} times each;")
print("criterion's point estimate in ns; the ratio is the median of the rounds' after / before.\n")
print(f"| bench | {head} | after / before |")
print("|---|" + "---|" * (2 * rounds + 1))
for n in names:
    cells = " | ".join(f"{runs[s][r][n]:.1f}" for r in range(rounds) for s in ("before", "after"))
    ratio = statistics.median(runs["after"][r][n] / runs["before"][r][n] for r in range(rounds))
    print(f"| `{n}` | {cells} | {ratio:.2f} |")
if missing:
    print(f"\nOnly after (no row before): {', '.join(f'`{n}`' for n in missing)}")
EOF

"""Plots of the closed-loop experiment (bench/closed_loop.sh): admitted latency and goodput
against the offered load, the 0.5x -> 2x step test over time, and the cluster's CPU over
the whole run with the threshold."""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = {
    "fess": ("Fess's rule (threshold 70)", "tab:blue", "o"),
    "ewma": ("Fess's rule on an EWMA (tau 3 s)", "tab:green", "s"),
    "limit": ("load.control.admission=limit", "tab:red", "^"),
    "vegas": ("peer: congestion-limiter's Vegas", "tab:purple", "D"),
}


def note(results) -> str:
    isolation = results.get("isolation")
    fleet = (
        f"{results.get('front_ends', 1)} front end(s), {results.get('workload', 'uniform')} "
        f"workload; "
    )
    if isolation:
        return (
            f"{fleet}one OpenSearch node on a CPU of its own (cpuset); servers and generator "
            f"on CPU {isolation['front_cpus']}; 1x = {results['rate_1x_per_s']:.0f} searches/s"
        )
    return f"{fleet}cluster not isolated; 1x = {results['rate_1x_per_s']:.0f} searches/s"


def finish(fig, ax, results, path, legend=8, grid="major", bottom=0.03, loc="best") -> None:
    """The parts every figure shares: grid, legend, the setup note, layout, the file."""
    if grid:
        ax.grid(True, which=grid, alpha=0.3)
    ax.legend(fontsize=legend, loc=loc)
    fig.text(0.01, 0.01, note(results), fontsize=7)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.savefig(path, dpi=110)


def series(steps, mode, key):
    rows = sorted((s for s in steps if s["mode"] == mode), key=lambda s: s["factor"])
    return [s["factor"] for s in rows], [s[key] for s in rows]


def main(results_path: str, out_dir: str) -> None:
    results = json.loads(Path(results_path).read_text())
    out = Path(out_dir)
    steps = results["steps"]
    modes = {m: style for m, style in MODES.items() if any(s["mode"] == m for s in steps)}

    fig, ax = plt.subplots(figsize=(8, 4.8))
    for mode, (label, colour, marker) in modes.items():
        x, p99 = series(steps, mode, "p99_ms")
        _, p999 = series(steps, mode, "p999_ms")
        ax.plot(x, p99, marker=marker, color=colour, label=f"{label}: p99")
        ax.plot(x, p999, marker=marker, color=colour, linestyle=":", alpha=0.6,
                label=f"{label}: p99.9")
    ax.set_yscale("log")
    ax.set_xlabel("offered load (x the rate at which the cluster's CPU first reaches 90 %)")
    ax.set_ylabel("admitted search latency (ms, log)")
    ax.set_title("Latency of the searches answered 200")
    finish(fig, ax, results, out / "latency.png", legend=7, grid="both")

    fig, ax = plt.subplots(figsize=(8, 4.8))
    offered_x, offered = series(steps, next(iter(modes)), "offered_per_s")
    ax.plot(offered_x, offered, color="grey", linestyle="--", label="offered")
    for mode, (label, colour, marker) in modes.items():
        x, goodput = series(steps, mode, "goodput_per_s")
        ax.plot(x, goodput, marker=marker, color=colour, label=label)
    ax.set_xlabel("offered load (x the 1x rate)")
    ax.set_ylabel(f"goodput (200 within {results['slo_ms']:.0f} ms) per second")
    ax.set_title("Goodput: searches answered within 10x the light-load p50")
    finish(fig, ax, results, out / "goodput.png")

    fig, ax = plt.subplots(figsize=(8, 4.8))
    for test in results["step_tests"]:
        label, colour, marker = MODES[test["mode"]]
        points = [(w[0], w[1]) for w in test["windows"] if w[1] is not None]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker, markersize=3,
                color=colour, label=f"{label} (back under {test['recovery_s']} s after)"
                if test["recovery_s"] is not None else f"{label} (not back under)")
        if test["base_p99_ms"]:
            ax.axhline(3 * test["base_p99_ms"], color=colour, linestyle=":", alpha=0.5)
    ax.axvline(results["step_tests"][0]["step_at_s"], color="black", linestyle="--", alpha=0.6)
    ax.set_yscale("log")
    ax.set_xlabel("seconds (0.5x, then 2x from the dashed line)")
    ax.set_ylabel("admitted p99 over 1 s windows (ms, log)")
    ax.set_title("Step test: 0.5x to 2x; dotted: 3x each mode's 0.5x p99")
    finish(fig, ax, results, out / "step.png", grid="both")

    fig, ax = plt.subplots(figsize=(11, 4))
    cpu = results["cpu"]
    ax.plot([c[0] for c in cpu], [c[1] for c in cpu], color="black", linewidth=0.6)
    ax.axhline(results["threshold"], color="tab:red", linestyle="--", label="web threshold")
    for step in steps:
        _, colour, _ = MODES[step["mode"]]
        start = step["started_at_s"]
        ax.axvspan(start, start + step["seconds"] + 3, color=colour, alpha=0.12)
    for mode, (label, colour, _) in modes.items():
        ax.axvspan(0, 0, color=colour, alpha=0.12, label=label)
    ax.set_xlabel("seconds since the start of the run (shaded: steps, by mode)")
    ax.set_ylabel("cluster CPU % (node stats)")
    ax.set_ylim(0, 105)
    finish(fig, ax, results, out / "cpu.png", grid=None, bottom=0.05, loc="lower right")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

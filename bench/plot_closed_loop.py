"""Plots of the closed-loop experiment (bench/closed_loop.sh): latency and goodput against
the offered rate, and the cluster's CPU over the whole run with the threshold."""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NOTE = "2 cores shared by the 3-node cluster (one JVM), search-server and the load generator"


def main(results_path: str, out_dir: str) -> None:
    results = json.loads(Path(results_path).read_text())
    out = Path(out_dir)
    steps = results["steps"]
    threshold = results["threshold"]
    runs = {
        "off": ("control off (100)", "tab:red"),
        "on": (f"control on ({threshold}, as Fess)", "tab:blue"),
        "on+ewma": (f"control on ({threshold}) + EWMA smoothing (tau 3 s)", "tab:green"),
    }
    runs = {mode: style for mode, style in runs.items() if any(s["mode"] == mode for s in steps)}

    def series(mode, key):
        rows = sorted((s for s in steps if s["mode"] == mode), key=lambda s: s["offered_per_s"])
        return [s["offered_per_s"] for s in rows], [s[key] for s in rows]

    fig, ax = plt.subplots(figsize=(8, 5))
    for mode, (label, colour) in runs.items():
        x, p99 = series(mode, "p99_ms")
        _, p50 = series(mode, "p50_ms")
        ax.plot(x, p99, "o-", color=colour, label=f"{label}: p99")
        ax.plot(x, p50, "s--", color=colour, alpha=0.6, label=f"{label}: p50")
    ax.set_yscale("log")
    ax.set_xlabel("offered searches/s")
    ax.set_ylabel("latency of admitted searches (ms, log)")
    ax.set_title("Latency of admitted searches vs offered load")
    ax.axvline(results["r90_per_s"], color="grey", linestyle=":", label="90 % CPU rate")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.text(0.01, 0.01, NOTE, fontsize=7, color="grey")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(out / "latency.png", dpi=110)

    fig, ax = plt.subplots(figsize=(8, 5))
    for mode, (label, colour) in runs.items():
        x, goodput = series(mode, "goodput_per_s")
        _, within = series(mode, "goodput_within_slo_per_s")
        ax.plot(x, goodput, "o-", color=colour, label=f"{label}: served (200)")
        ax.plot(x, within, "s--", color=colour, alpha=0.6, label=f"{label}: served within 1 s")
    top = max(s["offered_per_s"] for s in steps)
    ax.plot([0, top], [0, top], color="grey", linestyle=":", label="offered")
    ax.axvline(results["r90_per_s"], color="grey", linestyle="--", alpha=0.5, label="90 % CPU rate")
    ax.set_xlabel("offered searches/s")
    ax.set_ylabel("served searches/s")
    ax.set_title("Goodput vs offered load")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.text(0.01, 0.01, NOTE, fontsize=7, color="grey")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(out / "goodput.png", dpi=110)

    fig, ax = plt.subplots(figsize=(11, 4.5))
    t = [p[0] for p in results["cpu"]]
    cpu = [p[1] for p in results["cpu"]]
    for s in steps:
        colour = runs[s["mode"]][1]
        ax.axvspan(s["started_at_s"], s["started_at_s"] + 15, color=colour, alpha=0.12)
        ax.text(s["started_at_s"] + 7.5, 102, f'{s["factor"]:g}x', ha="center", fontsize=7)
    ax.plot(t, cpu, color="black", linewidth=1, label="cluster CPU (busiest node, node stats)")
    ax.axhline(threshold, color="tab:blue", linestyle="--", label=f"web.load.control = {threshold}")
    ax.set_ylim(0, 108)
    ax.set_xlabel("seconds since the start of the run")
    ax.set_ylabel("CPU %")
    ax.set_title("Cluster CPU over the run (steps shaded: red = off, blue = on, green = on + EWMA)")
    ax.legend(fontsize=8, loc="lower right")
    fig.text(0.01, 0.01, NOTE, fontsize=7, color="grey")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(out / "cpu.png", dpi=110)
    print(f"plots: {out / 'latency.png'}, {out / 'goodput.png'}, {out / 'cpu.png'}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

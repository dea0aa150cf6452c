"""The value-calibration report: the measurement of ``calibration.measure`` as rich tables
(scores by phase; the search's root value and the fitted temperature; by colour to move; the
reliability bins), as a JSON file, and as reliability curves (PNG, when matplotlib is there)."""

from __future__ import annotations

import io
import json

from ..atomicio import write_atomic
from .calibration import BINS


def _f(x, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def render(result: dict, console) -> None:
    """The measurement as four rich tables (see the module docstring), then what was skipped."""
    from rich import box
    from rich.table import Table

    who = f", {' or '.join(result['players'])} to move" if result.get("players") else ""
    t = Table(title=f"Value calibration: {result['model']}, {result['games']:,} games, "
                    f"{result['positions']:,} positions ({result['size']}x{result['size']}{who})",
              box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0, 0, 2))
    # "pred" is the mean prediction: over all positions, then over the games won / lost.
    for col in ("empty points", "n", "pred", "won", "pred if won", "pred if lost", "Brier",
                "log loss", "ECE"):
        t.add_column(col, justify="left" if col == "empty points" else "right")
    for ph in result["phases"]:
        t.add_row(ph["name"], f"{ph['count']:,}", _f(ph["mean_predicted"]), _f(ph["win_rate"]),
                  _f(ph["mean_predicted_won"]), _f(ph["mean_predicted_lost"]), _f(ph["brier"]),
                  _f(ph["log_loss"]), _f(ph["ece"]))
    console.print(t)
    f = Table(title="Search root value; a temperature fitted per phase on half the games, "
                    "scored on the other half", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0, 0, 2))
    for col in ("empty points", "root Brier", "root ECE", "T", "log loss held out",
                "with T", "ECE held out", "with T"):
        f.add_column(col, justify="left" if col == "empty points" else "right")
    for ph in result["phases"]:
        root, temp = ph.get("root"), ph.get("temperature")
        before, after = (temp["held_out_before"], temp["held_out_after"]) if temp else ({}, {})
        f.add_row(ph["name"], _f(root and root["brier"]), _f(root and root["ece"]),
                  _f(temp and temp["T"], ".2f"), _f(before.get("log_loss")),
                  _f(after.get("log_loss")), _f(before.get("ece")), _f(after.get("ece")))
    console.print(f)
    c = Table(title="By colour to move", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0, 0, 2))
    for col in ("empty points", "black n", "pred", "won", "ECE", "white n", "pred", "won",
                "ECE"):
        c.add_column(col, justify="left" if col == "empty points" else "right")
    for ph in result["phases"]:
        row = [ph["name"]]
        for s in (ph["black_to_move"], ph["white_to_move"]):
            row += [f"{s['count']:,}", _f(s.get("mean_predicted")), _f(s.get("win_rate")),
                    _f(s.get("ece"))]
        c.add_row(*row)
    console.print(c)
    r = Table(title="Reliability: observed win rate (positions) per predicted-probability bin",
              box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0, 0, 2))
    r.add_column("predicted")
    for ph in result["phases"]:
        r.add_column(ph["name"], justify="right")
    for b in range(BINS):
        row = [f"{b / BINS:.1f}-{(b + 1) / BINS:.1f}"]
        for ph in result["phases"]:
            cell = ph["bins"][b]
            row.append("" if not cell["count"] else f"{cell['win_rate']:.2f} ({cell['count']:,})")
        r.add_row(*row)
    console.print(r)
    for why, n in result["skipped"].items():
        console.print(f"skipped {n:,} games: {why} (first: {result['skipped_examples'][why]})")


def write_json(result: dict, path) -> None:
    write_atomic(path, json.dumps(result, indent=1) + "\n")


def plot(result: dict, path) -> str | None:
    """Reliability curves per phase as PNG (atomic write); returns a one-line message instead
    when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ("--plot needs matplotlib, which is not installed (pip install matplotlib, or "
                "the train extra); the table and --json are unaffected")
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.plot([0, 1], [0, 1], color="grey", lw=1, ls="--", label="perfect")
    for ph in result["phases"]:
        pts = [(b["mean_predicted"], b["win_rate"], b["count"]) for b in ph["bins"] if b["count"]]
        if not pts:
            continue
        x, y, n = zip(*pts)
        style = dict(color="black", lw=2) if ph["name"] == "all" else {}
        line, = ax.plot(x, y, marker="o", ms=3,
                        label=f"{ph['name']} empty (ECE {ph['ece']:.3f}, n={ph['count']:,})",
                        **style)
        ax.scatter(x, y, s=[max(4.0, 200 * c / ph["count"]) for c in n], color=line.get_color(),
                   alpha=0.4)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="predicted win probability (side to move)",
           ylabel="observed win rate", title=f"Value calibration: {result['model']}")
    ax.legend(loc="upper left", fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return None

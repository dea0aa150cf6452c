"""The value-calibration report: the measurement of ``calibration.measure`` as rich tables
(scores by phase; against a baseline net with ``--baseline``; the search's root value where
shards hold it; the fitted fixes, held out and from ``--fit-from``; by colour to move; the
reliability bins), as a JSON file, and as reliability curves (PNG, when matplotlib is there)."""

from __future__ import annotations

import io
import json

from ..core.atomicio import write_atomic
from .calibration import BINS


def _f(x, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def _table(title: str, columns, rows, pad: int = 2):
    """A compact rich table (80 columns hold nine of these number columns two spaces apart, ten
    one space apart)."""
    from rich import box
    from rich.table import Table

    t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0, 0, pad))
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        t.add_row(*row)
    return t


def _fix_row(name: str, params: dict, before: dict, with_t: dict, with_colour: dict) -> list:
    """One phase's fixes: T, the colour offset, and log loss and ECE as is / with each fix."""
    return [name, _f(params["T"], ".2f"), _f(params["colour"][1], "+.2f"),
            *(_f(d.get(k)) for k in ("log_loss", "ece") for d in (before, with_t, with_colour))]


FIX_COLUMNS = ("empty points", "T", "black offset", "log loss", "with T", "with colour", "ECE",
               "with T", "with colour")


def render(result: dict, console) -> None:
    """The measurement as rich tables (see the module docstring), then what was skipped."""
    phases = result["phases"]
    who = f", {' or '.join(result['players'])} to move" if result.get("players") else ""
    # "pred" is the mean prediction: over all positions, then over the games won / lost.
    console.print(_table(
        f"Value calibration: {result['model']}, {result['games']:,} games, "
        f"{result['positions']:,} positions ({result['size']}x{result['size']}{who})",
        ("empty points", "n", "pred", "won", "pred if won", "pred if lost", "AUC", "Brier",
         "log loss", "ECE"),
        [[ph["name"], f"{ph['count']:,}", *(_f(ph.get(k)) for k in (
            "mean_predicted", "win_rate", "mean_predicted_won", "mean_predicted_lost", "auc",
            "brier", "log_loss", "ece"))] for ph in phases], pad=1))
    if "baseline" in result:
        _render_baseline(result, console)
    if any("root" in ph for ph in phases):
        console.print(_table(
            "The search's root value (recorded in the shards) on the same positions",
            ("empty points", "n", "root Brier", "root log loss", "root ECE", "net Brier",
             "net ECE"),
            [[ph["name"], f"{ph['root']['count']:,}", _f(ph["root"]["brier"]),
              _f(ph["root"]["log_loss"]), _f(ph["root"]["ece"]), _f(ph["root"]["net"]["brier"]),
              _f(ph["root"]["net"]["ece"])] for ph in phases if "root" in ph]))
    console.print(_table(
        "Fixes fitted on a random half of the games, scored on the other half",
        FIX_COLUMNS, [_fix_row(ph["name"], ph["fit"], ph["fit"]["held_out"],
                               ph["fit"]["held_out_T"], ph["fit"]["held_out_colour"])
                      for ph in phases if "fit" in ph]))
    if any("transfer" in ph for ph in phases):
        console.print(_table(
            f"Fixes fitted on {result['fit_from']}, scored on all of these positions",
            FIX_COLUMNS, [_fix_row(ph["name"], ph["transfer"], ph, ph["transfer"]["with_T"],
                                   ph["transfer"]["with_colour"])
                          for ph in phases if "transfer" in ph]))
    console.print(_table(
        "By colour to move", ("empty points", "black n", "pred", "won", "ECE", "white n", "pred",
                              "won", "ECE"),
        [[ph["name"], *(v for s in (ph["black_to_move"], ph["white_to_move"]) for v in (
            f"{s['count']:,}", _f(s.get("mean_predicted")), _f(s.get("win_rate")),
            _f(s.get("ece"))))] for ph in phases]))
    console.print(_table(
        "Reliability: observed win rate (positions) per predicted-probability bin",
        ("predicted", *(ph["name"] for ph in phases)),
        [[f"{b / BINS:.1f}-{(b + 1) / BINS:.1f}", *(
            "" if not ph["bins"][b]["count"] else
            f"{ph['bins'][b]['win_rate']:.2f} ({ph['bins'][b]['count']})" for ph in phases)]
         for b in range(BINS)]))
    for why, n in result["skipped"].items():
        console.print(f"skipped {n:,} games: {why} (first: {result['skipped_examples'][why]})")


def _diff(ph: dict, key: str) -> tuple[str, str]:
    """A difference and its 95% interval, e.g. ``+0.012`` and ``+.004..+.020`` (narrow)."""
    if ph.get(f"diff_{key}") is None:
        return "-", ""
    lo, hi = ph.get(f"diff_{key}_95") or (None, None)
    bound = [_f(x, "+.3f").replace("0.", ".", 1) for x in (lo, hi)]
    return f"{ph[f'diff_{key}']:+.3f}", "..".join(bound)


def _render_baseline(result: dict, console) -> None:
    """The net against the baseline on the same positions (``calibration_compare.compare``)."""
    base = result["baseline"]
    table = _table(
        f"Against {base['model']} on the same positions: {result['model']} minus it, 95% "
        f"intervals from {base['resamples']:,} resamples of the games (a higher AUC and a "
        "lower log loss are better)",
        ("empty", "AUC", "base", "diff", "95%", "log loss", "diff", "95%"),
        [[ph["name"], _f(ph.get("auc")), _f(ph.get("baseline_auc")), *_diff(ph, "auc"),
          _f(ph["log_loss"]), *_diff(ph, "log_loss")] for ph in base["phases"]], pad=1)
    for col in (4, 7):  # an interval is read whole or not at all
        table.columns[col].min_width = 12
    console.print(table)


def write_json(result: dict, path) -> None:
    write_atomic(path, json.dumps(result, indent=1) + "\n")


def plot(result: dict, path) -> str | None:
    """Reliability curves per phase (bins of 10 positions or more, dots sized by count) as PNG,
    written atomically; returns a one-line message instead when matplotlib is missing."""
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
        # A bin of a handful of positions would draw a spike that means nothing.
        pts = [(b["mean_predicted"], b["win_rate"], b["count"]) for b in ph["bins"]
               if b["count"] >= 10]
        if not pts:
            continue
        x, y, n = zip(*pts)
        style = dict(color="black", lw=2) if ph["name"] == "all" else {}
        line, = ax.plot(x, y, marker="o", ms=3,
                        label=f"{ph['name'] if ph['name'] == 'all' else ph['name'] + ' empty'}"
                              f" (ECE {ph['ece']:.3f}, n={ph['count']:,})",
                        **style)
        ax.scatter(x, y, s=[max(4.0, 200 * c / ph["count"]) for c in n], color=line.get_color(),
                   alpha=0.4)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="predicted win probability (side to move)",
           ylabel="observed win rate",
           title=f"Value calibration: {result['model']}, {result['games']:,} games"
                 + (f" ({' or '.join(result['players'])} to move)" if result.get("players")
                    else ""))
    ax.legend(loc="upper left", fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return None

"""The picture of a `nogobot review`: Black's win rate along the game with the biggest
mistakes labelled and, beneath it, the seconds each side spent per move (``plot``). The review
itself (the judgement of each move, the annotated SGF, the summary) is review.py's.
matplotlib loads on first use; ``check_plotting`` says in one line how to install it.
"""

from __future__ import annotations

import io
from pathlib import Path

from ..core.atomicio import write_atomic
from ..game.coords import BLACK, WHITE
from .review import LETTER, NAME, GameReview

LABELLED = 5  # mistakes labelled on the graph


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("the win-rate graph needs matplotlib: pip install matplotlib (it "
                           "comes with the train extra), or pass --no-png") from None
    return plt


def check_plotting() -> None:
    """Raise RuntimeError (one line: how to install) when matplotlib is missing."""
    _pyplot()


def plot(review: GameReview, out: str | Path) -> Path:
    """Black's win rate per move with the biggest mistakes labelled; beneath it, the seconds
    per move of each side when known. Writes a PNG."""
    plt = _pyplot()
    r = review
    timed = any(m.seconds is not None for m in r.moves)
    if timed:
        fig, (ax, axt) = plt.subplots(2, 1, figsize=(10, 6), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1.3]})
    else:
        fig, ax = plt.subplots(figsize=(10, 4.2))
        axt = None
    turns = list(range(len(r.black_winrate)))
    wr = [100 * x for x in r.black_winrate]
    ax.axhline(50, color="0.6", lw=0.8, ls="--")
    ax.fill_between(turns, 50, wr, where=[w >= 50 for w in wr], color="0.25", alpha=0.25,
                    interpolate=True, lw=0)
    ax.fill_between(turns, 50, wr, where=[w < 50 for w in wr], color="tab:orange",
                    alpha=0.25, interpolate=True, lw=0)
    ax.plot(turns, wr, color="k", lw=1.6, label="Black's win rate")
    style = {"blunder": ("tab:red", 60), "mistake": ("darkorange", 40),
             "inaccuracy": ("gold", 25)}
    for label, (colour, s) in style.items():
        pts = [m for m in r.moves if m.label == label]
        if pts:
            ax.scatter([m.number for m in pts], [wr[m.number] for m in pts], s=s, color=colour,
                       edgecolor="k", lw=0.5, zorder=3, label=f"{label} ({len(pts)})")
    worst = sorted((m for m in r.moves if m.label), key=lambda m: -m.loss)[:LABELLED]
    placed: list[tuple[float, float]] = []
    near = 0.12 * max(len(turns) - 1, 1)  # labels closer than this in x must not share a height
    for m in sorted(worst, key=lambda m: m.number):
        y = wr[m.number]
        offsets = (22, -22, 40, -40, 58, -58) if y <= 50 else (-22, 22, -40, 40, -58, 58)
        spots = [min(max(y + d, 6), 94) for d in offsets]
        ty = next((t for t in spots if all(abs(m.number - x) > near or abs(t - u) > 14
                                           for x, u in placed)), spots[0])
        placed.append((m.number, ty))
        ax.annotate(f"{m.number}. {LETTER[m.colour]} {m.move}\n-{100 * m.loss:.0f}% "
                    f"(better {m.best})", (m.number, y), xytext=(m.number, ty), ha="center",
                    va="center", fontsize=8, arrowprops=dict(arrowstyle="-", color="0.4", lw=0.7),
                    bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="0.6", lw=0.5))
    ax.set_ylim(0, 100)
    ax.set_xlim(0, max(len(turns) - 1, 1))
    ax.set_ylabel("Black's win rate (%)")
    ax.set_title(f"{r.black} (B) vs {r.white} (W), {r.result}: nogobot review at "
                 f"{r.visits} visits per position", fontsize=10)
    ax.grid(alpha=0.25)
    ax.legend(fontsize=8, loc="upper left" if wr[-1] < 50 else "lower left")
    if axt is not None:
        for colour, c in ((BLACK, "k"), (WHITE, "tab:orange")):
            mine = [m for m in r.moves if m.colour == colour and m.seconds is not None]
            if mine:
                axt.bar([m.number for m in mine], [m.seconds for m in mine], width=0.8,
                        color=c, label=f"{r.player(colour)} ({NAME[colour]}): "
                                       f"{sum(m.seconds for m in mine):.1f} s")
        axt.set_ylabel("seconds")
        axt.legend(fontsize=8, loc="upper right")
        axt.grid(alpha=0.25, axis="y")
        axt.set_xlabel("move")
    else:
        ax.set_xlabel("move")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, dpi=100, format="png")
    plt.close(fig)
    out = Path(out)
    write_atomic(out, buf.getvalue())
    return out

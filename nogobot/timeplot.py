"""`nogobot timeplot`: time used per move, drawn as a PNG, from a game record or an engine log.

Inputs understood:

* a tournament SGF (``nogobot tournament`` writes the seconds each move took as the move's
  comment, ``1.234 s; clock 898.8s``);
* a ``nogobot gtp`` stderr log, whose per-move lines read
  ``time: black move 12 E5: planned 9.81s max 19.62s used 9.90s left 812.3s main``
  (the planned budget is drawn too);
* a tournament results folder (its ``sgf/*.sgf``): the mean seconds per move number of each
  engine over all its games, one line per engine.

The parsing is separate from the drawing so it is testable without matplotlib.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from .atomicio import write_atomic

LOG_LINE = re.compile(r"time: (black|white) move (\d+) \S+: planned ([\d.]+)s max ([\d.]+)s "
                      r"used ([\d.]+)s")
SGF_TIME = re.compile(r"^\s*([\d.]+) s\b")


@dataclass
class TimeSeries:
    """Seconds per move of each colour, in move order (move numbers count both colours)."""

    source: str
    moves: dict[str, list[int]] = field(default_factory=lambda: {"black": [], "white": []})
    used: dict[str, list[float]] = field(default_factory=lambda: {"black": [], "white": []})
    planned: dict[str, list[float]] = field(default_factory=lambda: {"black": [], "white": []})

    players: dict[str, str] = field(default_factory=lambda: {"black": "black",
                                                             "white": "white"})

    def total(self, colour: str) -> float:
        return sum(self.used[colour])


def aggregate(folder: str | Path) -> TimeSeries:
    """Mean seconds per move number of each engine over a tournament's SGFs ("colours" of the
    result are the engine names)."""
    folder = Path(folder)
    files = sorted((folder / "sgf").glob("*.sgf")) or sorted(folder.glob("*.sgf"))
    if not files:
        raise ValueError(f"{folder}: no SGF files (expected a tournament results folder)")
    sums: dict[str, dict[int, list[float]]] = {}
    for f in files:
        ts = parse_sgf(f.read_bytes(), str(f))
        for colour in ("black", "white"):
            per = sums.setdefault(ts.players[colour], {})
            for k, secs in enumerate(ts.used[colour]):
                per.setdefault(k + 1, []).append(secs)  # k+1 = the engine's own move number
    out = TimeSeries(f"{folder} ({len(files)} games, mean per own move)")
    out.moves, out.used, out.planned = {}, {}, {}
    for name, per in sorted(sums.items()):
        out.moves[name] = sorted(per)
        out.used[name] = [sum(per[k]) / len(per[k]) for k in out.moves[name]]
        out.planned[name] = []
    out.players = {name: name for name in sums}
    return out


def parse_log(text: str, source: str = "log") -> TimeSeries:
    ts = TimeSeries(source)
    for m in LOG_LINE.finditer(text):
        colour = m.group(1)
        ts.moves[colour].append(int(m.group(2)))
        ts.planned[colour].append(float(m.group(3)))
        ts.used[colour].append(float(m.group(5)))
    return ts


def parse_sgf(data: bytes, source: str = "sgf") -> TimeSeries:
    from sgfmill import sgf

    game = sgf.Sgf_game.from_bytes(data)
    ts = TimeSeries(source)
    root = game.get_root()
    ts.players = {c: root.get(p) if root.has_property(p) else c
                  for c, p in (("black", "PB"), ("white", "PW"))}
    for number, node in enumerate(game.get_main_sequence()[1:], start=1):
        colour, _ = node.get_move()
        if colour is None or not node.has_property("C"):
            continue
        m = SGF_TIME.match(node.get("C"))
        if m:
            name = "black" if colour == "b" else "white"
            ts.moves[name].append(number)
            ts.used[name].append(float(m.group(1)))
    return ts


def load(path: str | Path) -> TimeSeries:
    """Parse an SGF or a log file; ValueError (naming the file) when it holds no move times."""
    path = Path(path)
    if path.is_dir():
        return aggregate(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror}") from None
    if data.lstrip().startswith(b"("):
        try:
            ts = parse_sgf(data, str(path))
        except ValueError as e:
            raise ValueError(f"{path}: not a readable SGF: {e}") from None
    else:
        ts = parse_log(data.decode("utf-8", "replace"), str(path))
    if not any(ts.used.values()):
        raise ValueError(f"{path}: no per-move times found (expected a nogobot tournament SGF "
                         "or a nogobot gtp log with 'time: ...' lines)")
    return ts


def plot(series: list[TimeSeries], out: str | Path) -> Path:
    """Draw seconds per move (and the planned budget where known) for each input; write PNG."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("drawing needs matplotlib: pip install matplotlib "
                           "(it comes with the train extra)") from None
    fig, axes = plt.subplots(len(series), 1, figsize=(9, 3.2 * len(series)), squeeze=False)
    for ax, ts in zip(axes[:, 0], series):
        for i, colour in enumerate(ts.used):
            style = {"black": "k", "white": "tab:orange"}.get(colour, f"C{i}")
            if ts.used[colour]:
                ax.plot(ts.moves[colour], ts.used[colour], marker="o", ms=3, color=style,
                        label=f"{ts.players.get(colour, colour)}: used "
                              f"({ts.total(colour):.1f} s in all)")
            if ts.planned.get(colour):
                ax.plot(ts.moves[colour], ts.planned[colour], ls="--", color=style, alpha=0.6,
                        label=f"{colour}: planned")
        ax.set_title(Path(ts.source).name if Path(ts.source).exists() else ts.source)
        ax.set_xlabel("move number")
        ax.set_ylabel("seconds")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(out)
    buf = io.BytesIO()
    fig.savefig(buf, dpi=110, format="png")
    plt.close(fig)
    write_atomic(out, buf.getvalue())
    return out

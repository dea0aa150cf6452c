"""`nogobot timeplot`: time used per move, drawn as a PNG, from a game record or an engine log.

Inputs understood:

* a tournament SGF (``nogobot tournament`` writes the seconds each move took as the move's
  comment, ``1.234 s; clock 898.8s``);
* a ``nogobot gtp`` stderr log, whose per-move lines read
  ``time: black move 12 E5: planned 9.81s max 19.62s used 9.90s left 812.3s main``
  (the planned budget is drawn too);
* a tournament results folder (its ``games.sgf``, or ``sgf/*.sgf`` in older folders): the
  mean seconds per move number of each engine over all its games, one line per engine.

The parsing is separate from the drawing so it is testable without matplotlib.

``--clock`` prints, instead of drawing, how a sudden-death clock was spent (``clock_use``): in
all, and while the game was undecided, i.e. before the engine's first move that was a proof of
the endgame solver or read a win rate outside [0.02, 0.98]; time spent after that point cannot
change the result. It also gives the clock left when the engine's solver first proved the game
lost: time that was never spent on the game. For a tournament folder it reads each game's
engine logs (``logs.tar.gz``, or ``logs/``).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..core.atomicio import write_atomic

# A move's line in a ``nogobot gtp`` log; the clock left and its kind ("main" for main time)
# follow (groups 6 and 7).
LOG_LINE = re.compile(r"time: (black|white) move (\d+) \S+: planned ([\d.]+)s max ([\d.]+)s "
                      r"used ([\d.]+)s(?: left ([\d.]+)s (\w+))?")
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
    from ..tournament.folder import read_games  # games.sgf, or the older sgf/*.sgf

    folder = Path(folder)
    files = read_games(folder)
    if not files:
        raise ValueError(f"{folder}: no SGF files (expected a tournament results folder)")
    sums: dict[str, dict[int, list[float]]] = {}
    for name, data in files:
        ts = parse_sgf(data, name)
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


SEARCH_LINE = re.compile(r"(?:mcts|rave): \S+ winrate ([\d.]+)")  # the engine's, rave's
DECIDED = (0.02, 0.98)  # a win rate outside this range counts as a decided game


@dataclass
class ClockUse:
    """How one game's sudden-death clock was spent by one engine (seconds; shares of ``main``).

    ``undecided`` is the clock spent before the engine's first decided move (a solver proof, or
    a win rate outside ``DECIDED``), counted at that move's start; the whole game when none."""

    source: str
    main: float
    used: float
    undecided: float
    decided_at: int | None  # the move number of the first decided move
    proof: str | None  # "win" or "loss": the first proof's verdict
    least_left: float
    longest: float
    rated: bool  # the log gave win rates (``mcts:``/``rave:`` lines): "undecided" means something
    lost_left: float | None = None  # the clock left at the start of the first proven loss

    @property
    def undecided_share(self) -> float:
        return self.undecided / self.main

    @property
    def used_share(self) -> float:
        return self.used / self.main

    @property
    def lost_left_share(self) -> float | None:
        return None if self.lost_left is None else self.lost_left / self.main


def clock_use(text: str, source: str = "log") -> list[ClockUse]:
    """The sudden-death games of a ``nogobot gtp`` log, one ``ClockUse`` each (a new game starts
    where the move number goes down). The engine logs a move's ``mcts:`` line before its
    ``time:`` line, so what a move's search says waits for that line (``pending``, ``rated``)."""
    games: list[ClockUse] = []
    game: dict | None = None
    pending: str | None = None  # "win"/"loss" (a proof) or "" (a decided win rate)
    rated = False  # the move being read logged a win rate
    for line in text.splitlines():
        m = LOG_LINE.match(line)
        if m and m.group(7) == "main":  # a sudden-death clock (main time) only
            move, used, left = int(m.group(2)), float(m.group(5)), float(m.group(6))
            if game is None or move <= game["move"]:
                if game is not None:
                    games.append(_finished(game, source))
                game = {"main": used + left, "left": used + left, "undecided": None,
                        "decided_at": None, "proof": None, "least": left, "longest": 0.0,
                        "rated": False, "lost_left": None}
            if pending is not None:
                if game["decided_at"] is None:  # the clock at this move's start
                    game["decided_at"], game["undecided"] = move, game["main"] - game["left"]
                if pending and game["proof"] is None:
                    game["proof"] = pending
                if pending == "loss" and game["lost_left"] is None:  # at this move's start
                    game["lost_left"] = game["left"]
                pending = None
            game.update(move=move, left=left, least=min(game["least"], left),
                        longest=max(game["longest"], used), rated=game["rated"] or rated)
            rated = False
            continue
        m = SEARCH_LINE.match(line)
        if m:
            rated = True
            proof = re.search(r"stop: solver: (win|loss)", line)
            if proof or not DECIDED[0] <= float(m.group(1)) <= DECIDED[1]:
                pending = proof.group(1) if proof else (pending or "")
    if game is not None:
        games.append(_finished(game, source))
    return games


def _finished(game: dict, source: str) -> ClockUse:
    used = game["main"] - game["left"]
    undecided = used if game["undecided"] is None else game["undecided"]
    return ClockUse(source, game["main"], used, undecided, game["decided_at"], game["proof"],
                    game["least"], game["longest"], game["rated"], game["lost_left"])


def clock_report(path: str | Path) -> list[tuple[str, ClockUse]]:
    """``(engine, ClockUse)`` for every sudden-death game in a log file, or in a tournament
    folder's engine logs (``logs/ID-B.log``, ``logs/ID-W.log``, named by ``results.jsonl``).
    ValueError (naming the path) when there is none."""
    import json

    from ..tournament.folder import read_log

    path = Path(path)
    found: list[tuple[str, ClockUse]] = []
    if path.is_dir():
        # Read directly, not with tournament.results.ResultsLog.load: that one truncates a torn
        # last line, and a report must not write to a running tournament's file.
        results = path / "results.jsonl"
        try:
            lines = results.read_text().splitlines()
        except OSError as e:
            raise ValueError(f"{results}: cannot read: {e.strerror}") from None
        for line in lines:
            try:
                game = json.loads(line)
                ids = [(game["black"], "B"), (game["white"], "W")]
                stem = game["id"]
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line of a killed run
            for engine, side in ids:
                # logs/ID-B.log, or the same name inside logs.tar.gz (a packed folder)
                text = read_log(path, f"{stem}-{side}.log")
                if text is not None:
                    log = path / "logs" / f"{stem}-{side}.log"
                    found += [(engine, use) for use in clock_use(text, str(log))]
    else:
        try:
            text = path.read_text(errors="replace")
        except OSError as e:
            raise ValueError(f"{path}: cannot read: {e.strerror}") from None
        found = [(path.name, use) for use in clock_use(text, str(path))]
    if not found:
        raise ValueError(f"{path}: no sudden-death clock lines found (expected a nogobot gtp log, "
                         "or a tournament folder with logs/, played at sudden death)")
    return found


def clock_table(found: list[tuple[str, ClockUse]]) -> str:
    """Each engine's clock use over its games: medians, the lowest tenth, the extremes."""
    import statistics

    def pct(xs: list[float], q: float) -> float:
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    rows = []
    for engine in sorted({e for e, _ in found}):
        uses = [u for e, u in found if e == engine]
        und = [u.undecided_share for u in uses if u.rated]
        undecided = (f"median {statistics.median(und):.1%} (lowest tenth {pct(und, 0.1):.1%}, "
                     f"range {min(und):.1%}-{max(und):.1%}) over {len(und)}" if und
                     else "not known (its logs give no win rates)")
        proofs = sum(u.proof is not None for u in uses)
        lost = [u.lost_left_share for u in uses if u.lost_left is not None]
        at_loss = (f"median {statistics.median(lost):.1%} (highest tenth "
                   f"{pct(lost, 0.9):.1%}) over {len(lost)}" if lost else "no proven loss")
        games = f"{len(uses)} game{'s' if len(uses) > 1 else ''}"
        rows.append(
            f"{engine}: {games} at {statistics.median(u.main for u in uses):.0f} s; "
            f"clock spent while undecided: {undecided}; in all: median "
            f"{statistics.median(u.used_share for u in uses):.1%}; least left "
            f"{min(u.least_left for u in uses):.1f} s; longest move "
            f"{max(u.longest for u in uses):.1f} s; games with a solver proof: {proofs}; "
            f"clock left at the first proven loss: {at_loss}")
    return "\n".join(rows)


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

"""`nogobot review`: where was the game lost? A KaTrain-style review built on the analysis engine.

Every position of every game is searched by ``analysis.AnalysisEngine`` in this process (all
games' positions at once, sharing network calls). For each move it reports the mover's win rate
before and after the move, the engine's preferred move and the loss (before − after, at least 0).
A move the engine did not prefer is an *inaccuracy* from a 5% loss, a *mistake* from 10% and a
*blunder* from 20% (the engine's own choice is never labelled, whatever the noise of two
searches says). Per game, in the output folder:

* ``STEM.review.sgf``: the game with, on each move, the review as a comment (after the move's
  own comment, so ``nogobot timeplot`` still reads a tournament's times), the preferred move
  marked with a triangle (``TR``), mistakes and blunders crossed on the stone (``MA``) and
  annotated ``BM``/``DO``, the engine's line as a variation beside each mistake, and the summary
  in the root comment. GoGui and Sabaki show all of these.
* ``STEM.png`` (drawn by the ``draw`` the caller passes: ``review_graph.plot`` for
  ``nogobot review``; the graph imports this module, never the other way round): Black's win
  rate along the game, the biggest mistakes labelled, and beneath it the seconds each side
  spent per move when the SGF records times
  (``nogobot tournament`` writes them as the move comment ``1.234 s; clock 898.8s`` and as
  ``BL``/``WL``; other files' ``BL``/``WL`` time-left values are differenced).
* ``STEM.txt`` (the summary: each side's worst moves and where the game turned) and
  ``STEM.json`` (the per-move table).

Comments are plain ASCII: an SGF without ``CA`` is read as Latin-1 by some viewers.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from ..core.atomicio import write_atomic
from ..game import coords, sgf
from ..game.coords import BLACK, WHITE

NAME = {BLACK: "Black", WHITE: "White"}
LETTER = {BLACK: "B", WHITE: "W"}
LEVELS = ((0.20, "blunder"), (0.10, "mistake"), (0.05, "inaccuracy"))
DEFAULT_VISITS = 200
WORST = 3  # worst moves per side in the summary
PV_IN_SGF = 8  # moves of the engine's line added as a variation

_TIME_COMMENT = re.compile(r"^\s*([\d.]+) s\b")  # nogobot tournament's move comments


class ReviewError(ValueError):
    """An input that cannot be reviewed (the message names it)."""


@dataclass
class MoveReview:
    number: int  # 1-based move number
    colour: int
    move: str  # GTP vertex
    before: float  # the mover's win rate before the move
    after: float  # ... and after it
    loss: float  # max(0, before - after)
    best: str | None  # the engine's preferred move
    best_winrate: float | None  # its win rate for the mover
    best_visits: int = 0
    pv: list[str] = field(default_factory=list)
    label: str = ""  # inaccuracy / mistake / blunder, or "" (also for the preferred move)
    seconds: float | None = None  # time the mover spent, when the SGF records it


@dataclass
class GameReview:
    path: str
    size: int
    black: str
    white: str
    result: str
    visits: int
    black_winrate: list[float]  # per turn 0..n (after n moves)
    moves: list[MoveReview]

    def player(self, colour: int) -> str:
        return self.black if colour == BLACK else self.white


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CollectedGame:
    """One game of an SGF collection (a tournament's ``games.sgf``), standing in for a file
    path: it has the ``stem``, ``read_bytes`` and ``str`` that reviewing a file uses."""

    name: str  # "FOLDER/games.sgf#GAME-ID"
    data: bytes

    @property
    def stem(self) -> str:
        return self.name.rsplit("#", 1)[-1]

    def read_bytes(self) -> bytes:
        return self.data

    def __str__(self) -> str:
        return self.name


def collect(inputs: list[str]) -> list[Path | CollectedGame]:
    """Games from the arguments: files as given (each game of a collection on its own); a
    folder contributes its ``games.sgf`` (a ``nogobot tournament`` results folder), its
    ``sgf/*.sgf`` (older results folders) or else its ``*.sgf``."""
    from ..game.sgf import split_collection
    from ..tournament.folder import read_games

    out: list[Path | CollectedGame] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            try:
                found = [CollectedGame(n, d) if "#" in n else Path(n)
                         for n, d in read_games(path)]
            except ValueError as e:
                raise ReviewError(str(e)) from None
            if not found:
                raise ReviewError(f"{path}: no SGF files (expected a tournament results folder "
                                  "with games.sgf or sgf/, or a folder of .sgf files)")
            out += found
        elif path.is_file():
            try:
                games = split_collection(path.read_bytes())
            except (OSError, ValueError):
                games = []  # review_games reports what is wrong with it
            if len(games) > 1:
                out += [CollectedGame(f"{path}#{gn or k + 1}", d)
                        for k, (gn, d) in enumerate(games)]
            else:
                out.append(path)
        else:
            raise ReviewError(f"{path}: no such file or folder")
    return out


def move_times(data: bytes) -> list[float | None]:
    """Seconds spent on each move of the main line: the tournament's move comment, else the
    drop of the mover's ``BL``/``WL`` time left since their previous move (from ``TM`` for
    the first); None where neither says."""
    from sgfmill import sgf as sgfmill

    game = sgfmill.Sgf_game.from_bytes(data)
    root = game.get_root()
    main = root.get("TM") if root.has_property("TM") else None
    left: dict[str, float | None] = {"b": main, "w": main}
    out: list[float | None] = []
    for node in game.get_main_sequence()[1:]:
        colour, _ = node.get_move()
        if colour is None:
            continue
        secs = None
        m = _TIME_COMMENT.match(node.get("C")) if node.has_property("C") else None
        if m:
            secs = float(m.group(1))
        prop = "BL" if colour == "b" else "WL"
        if node.has_property(prop):
            now = float(node.get(prop))
            if secs is None and left[colour] is not None and left[colour] - now >= 0:
                secs = round(left[colour] - now, 3)
            left[colour] = now
        out.append(secs)
    return out


def query_of(rec: sgf.GameRecord, qid: str, visits: int) -> dict:
    """The analysis query for every position of ``rec`` (turns 0..n)."""
    size = rec.size
    q = {"id": qid, "boardXSize": size, "rules": "nogo", "maxVisits": visits,
         "moves": [[LETTER[c], coords.to_gtp(p, size)] for c, p in rec.moves],
         "analyzeTurns": list(range(len(rec.moves) + 1)), "analysisPVLen": PV_IN_SGF - 1}
    if rec.setup:
        q["initialStones"] = [[LETTER[c], coords.to_gtp(p, size)] for c, p in rec.setup]
    if rec.first_to_move is not None:
        q["initialPlayer"] = LETTER[rec.first_to_move]
    return q


# --------------------------------------------------------------------------------------------
# The review of one game
# --------------------------------------------------------------------------------------------


def build(path: str, rec: sgf.GameRecord, answers: dict[int, dict], visits: int,
          times: list[float | None] | None = None) -> GameReview:
    """Per-move review from the analysis answers of turns 0..n (``report_as`` black)."""
    n = len(rec.moves)
    black = [float(answers[t]["rootInfo"]["winrate"]) for t in range(n + 1)]
    moves = []
    for i, (colour, p) in enumerate(rec.moves):
        def mine(x: float) -> float:
            return x if colour == BLACK else 1.0 - x

        before, after = mine(black[i]), mine(black[i + 1])
        infos = answers[i].get("moveInfos") or []
        top = infos[0] if infos else None
        played = coords.to_gtp(p, rec.size)
        mr = MoveReview(i + 1, colour, played, round(before, 4), round(after, 4),
                        round(max(0.0, before - after), 4),
                        top["move"] if top else None,
                        round(mine(top["winrate"]), 4) if top else None,
                        int(top["visits"]) if top else 0, list(top["pv"]) if top else [])
        if top is not None and top["move"] != played:
            mr.label = next((name for limit, name in LEVELS if mr.loss >= limit), "")
        if times is not None and i < len(times):
            mr.seconds = times[i]
        moves.append(mr)
    return GameReview(str(path), rec.size, rec.black or "Black", rec.white or "White",
                      rec.result or "?", visits, [round(x, 4) for x in black], moves)


def turning_point(review: GameReview) -> tuple[int, MoveReview] | None:
    """(loser, the move after which the loser's win rate stayed below 50% to the end)."""
    wr = review.black_winrate
    if not review.moves:
        return None
    res = review.result.upper()
    loser = (WHITE if res.startswith("B+") else BLACK if res.startswith("W+")
             else (BLACK if wr[-1] < 0.5 else WHITE))

    def theirs(t: int) -> float:
        return wr[t] if loser == BLACK else 1.0 - wr[t]

    t = len(wr) - 1
    while t > 0 and theirs(t - 1) < 0.5:
        t -= 1
    if t == 0 or theirs(len(wr) - 1) >= 0.5:
        return None  # behind from the start, or never clearly behind
    return loser, review.moves[t - 1]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def summary(review: GameReview) -> str:
    """A few lines: each side's loss statistics and worst moves, and where the game turned."""
    r = review
    head = (f"{Path(r.path).name}: {r.black} (B) vs {r.white} (W), {r.result}, "
            f"{len(r.moves)} moves, {r.visits} visits per position")
    lines = [head]
    for colour in (BLACK, WHITE):
        mine = [m for m in r.moves if m.colour == colour]
        if not mine:
            continue
        counts = {name: sum(m.label == name for m in mine) for _, name in LEVELS}
        avg = sum(m.loss for m in mine) / len(mine)
        worst = sorted((m for m in mine if m.label), key=lambda m: -m.loss)[:WORST]
        text = ", ".join(f"{m.number} {m.move} -{_pct(m.loss)} (better {m.best})"
                         for m in worst) or "none"
        plural = {"blunder": "blunders", "mistake": "mistakes", "inaccuracy": "inaccuracies"}
        tally = ", ".join(f"{counts[name]} {name if counts[name] == 1 else plural[name]}"
                          for name in ("blunder", "mistake", "inaccuracy"))
        lines.append(f"  {NAME[colour]} {r.player(colour)}: average loss {_pct(avg)}; "
                     f"{tally}; worst: {text}")
        secs = [m.seconds for m in mine if m.seconds is not None]
        if secs:
            lines[-1] += f"; {sum(secs):.1f} s used"
    tp = turning_point(r)
    if tp is not None:
        loser, m = tp
        who = "its own" if m.colour == loser else f"{NAME[m.colour]}'s"
        lines.append(f"  The game turned at move {m.number} ({LETTER[m.colour]} {m.move}, "
                     f"{who} move): {NAME[loser]}'s win rate stayed below 50% from there on.")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Annotated SGF
# --------------------------------------------------------------------------------------------


def annotate(data: bytes, review: GameReview) -> str:
    """The original SGF with the review added (see the module docstring)."""
    from sgfmill import sgf as sgfmill

    game = sgfmill.Sgf_game.from_bytes(data)
    size = review.size
    root = game.get_root()
    nodes = [nd for nd in game.get_main_sequence()[1:] if nd.get_move()[0] is not None]

    def point(vertex: str):
        return sgf.from_flat(coords.from_gtp(vertex, size), size)

    for node, m in zip(nodes, review.moves):
        lines = [f"nogobot review ({review.visits} visits): {NAME[m.colour]} {m.move}, "
                 f"win rate {_pct(m.before)} -> {_pct(m.after)}"
                 + (f" (-{_pct(m.loss)})" if m.loss >= 0.0005 else "")
                 + (f": {m.label}" if m.label else "")]
        if m.best is not None:
            if m.best == m.move:
                lines.append(f"The engine's choice too ({m.best_visits} visits).")
            else:
                lines.append(f"Preferred: {m.best} ({_pct(m.best_winrate)}, {m.best_visits} "
                             f"visits); line {' '.join(m.pv)}")
                node.set("TR", [point(m.best)])
        old = node.get("C") if node.has_property("C") else ""
        node.set("C", (old.rstrip() + "\n\n" if old.strip() else "") + "\n".join(lines))
        if m.label in ("mistake", "blunder"):
            node.set("BM", 2 if m.label == "blunder" else 1)
            node.set("MA", [point(m.move)])
            _add_variation(node, m, size)
        elif m.label == "inaccuracy":
            node.set("DO", True)
    old = root.get("C") if root.has_property("C") else ""
    root.set("C", (old.rstrip() + "\n\n" if old.strip() else "") + summary(review))
    return game.serialise().decode("utf-8")


def _add_variation(node, m: MoveReview, size: int) -> None:
    """The engine's line as a sibling variation of the mistake (after the game's own move)."""
    parent = node.parent
    if parent is None or not m.pv:
        return
    colour = m.colour
    child = parent.new_child()  # appended: the game stays the main line
    for k, vertex in enumerate(m.pv):
        if k:
            child = child.new_child()
        child.set_move("b" if colour == BLACK else "w",
                       sgf.from_flat(coords.from_gtp(vertex, size), size))
        if k == 0:
            child.set("C", f"nogobot's line instead of {m.move}: win rate "
                           f"{_pct(m.best_winrate)} for {NAME[m.colour]}")
        colour = 3 - colour


# --------------------------------------------------------------------------------------------
# Reviewing many games
# --------------------------------------------------------------------------------------------


def _stems(paths: list[Path]) -> list[str]:
    """Output names: the file stems, made unique."""
    seen: dict[str, int] = {}
    out = []
    for p in paths:
        k = seen.get(p.stem, 0)
        seen[p.stem] = k + 1
        out.append(p.stem if k == 0 else f"{p.stem}-{k + 1}")
    return out


def review_games(paths: list[Path], engine, out_dir: str | Path, *, visits: int,
                 draw: Callable[[GameReview, Path], object] | None = None,
                 on_position: Callable[[], None] | None = None,
                 on_game: Callable[[GameReview, str], None] | None = None,
                 log: Callable[[str], None] = lambda msg: None,
                 total_positions: Callable[[int], None] | None = None) -> list[GameReview]:
    """Review every game with ``engine`` (an ``AnalysisEngine`` reporting as black); all
    positions of all games are searched together. Outputs are written as each game completes,
    the picture by ``draw(review, STEM.png)`` when given (``review_graph.plot``);
    ``on_position`` is called per answered position, ``on_game(review, summary)`` per game.
    Unreadable games are skipped with a message on ``log``."""
    from .engine import analyse

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    games: dict[str, tuple] = {}
    queries = []
    for path, stem in zip(paths, _stems(paths)):
        try:
            data = path.read_bytes()
            rec = sgf.parse(data)
        except (OSError, sgf.SgfError) as e:
            log(f"review: skipping {path}: {e}")
            continue
        if not rec.moves:
            log(f"review: skipping {path}: no moves")
            continue
        qid = str(len(queries))
        games[qid] = (path, stem, data, rec, {})
        queries.append(query_of(rec, qid, visits))
    reviews: list[GameReview] = []
    if total_positions is not None:
        total_positions(sum(len(q["analyzeTurns"]) for q in queries))

    def answered(obj: dict) -> None:
        if "turnNumber" not in obj or obj.get("id") not in games:
            if "error" in obj or "warning" in obj:
                log(f"review: analysis said {json.dumps(obj)}")
            return
        path, stem, data, rec, answers = games[obj["id"]]
        if "error" in obj:
            log(f"review: {path} turn {obj['turnNumber']}: {obj['error']}")
            answers[obj["turnNumber"]] = None
        else:
            answers[obj["turnNumber"]] = obj
        if len(answers) == len(rec.moves) + 1:
            if any(a is None for a in answers.values()):
                log(f"review: {path}: not reviewed (analysis failed)")
            else:
                try:
                    times = move_times(data)
                except ValueError:
                    times = None
                rv = build(str(path), rec, answers, visits, times)
                write_outputs(rv, data, out_dir / stem, draw=draw)
                reviews.append(rv)
                if on_game is not None:
                    on_game(rv, summary(rv))
        if on_position is not None:
            on_position()

    analyse(engine, queries, answered)
    return reviews


def write_outputs(rv: GameReview, data: bytes, stem: Path,
                  draw: Callable[[GameReview, Path], object] | None = None) -> None:
    def named(suffix: str) -> Path:
        return stem.parent / (stem.name + suffix)

    write_atomic(named(".review.sgf"), annotate(data, rv))
    write_atomic(named(".txt"), summary(rv) + "\n")
    write_atomic(named(".json"), json.dumps(asdict(rv), indent=1) + "\n")
    if draw is not None:
        draw(rv, named(".png"))


class ProgressBar:
    """Positions and games done, as a rich bar on stderr (a plain line every 30 s when stderr
    is not a terminal). ``print`` writes a message above the bar."""

    def __init__(self, games: int):
        import sys
        import time

        self.games, self.games_done, self.done, self.total = games, 0, 0, 0
        self._time = time.perf_counter
        self._t0 = self._last = self._time()
        self._bar = None
        self._stderr = sys.stderr
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
        except ImportError:
            return
        console = Console(stderr=True)
        if console.is_terminal:
            self._bar = Progress(TextColumn("[bold]review"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("positions, {task.fields[games]}"),
                                 TimeElapsedColumn(), TimeRemainingColumn(), console=console,
                                 transient=True, redirect_stdout=False, redirect_stderr=False)
            self._task = self._bar.add_task("review", total=None, games=self._games_text())
            self._bar.start()

    def _games_text(self) -> str:
        return f"{self.games_done}/{self.games} games"

    def set_positions(self, n: int) -> None:
        self.total = n
        if self._bar is not None:
            self._bar.update(self._task, total=n)

    def position(self) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1)
        elif self._time() - self._last >= 30 or self.done == self.total:
            self._last = self._time()
            self.print(f"review: {self.done}/{self.total} positions, {self._games_text()} "
                       f"({self._time() - self._t0:.0f} s)")

    def game(self) -> None:
        self.games_done += 1
        if self._bar is not None:
            self._bar.update(self._task, games=self._games_text())

    def print(self, text: str) -> None:
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self._stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()

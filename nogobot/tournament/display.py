"""What the tournament harness shows: the summary tables (standings, pairings, the two-engine
match with its pairs, Elo interval and SPRT), the live view while games run, the standings plot,
and ``tournament report`` (a results folder's tables without its spec). The numbers come from
results.py; this module only lays them out (rich tables, one console width for files).
"""

from __future__ import annotations

import io
import json
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from .results import (
    PAIRING_HEADER,
    STANDINGS_HEADER,
    MatchStats,
    Standings,
    compute_standings,
    loss_reasons_text,
    pairing_rows,
    standings_rows,
    two_engine_stats,
)
from .spec import TournamentSpec


class ReportError(Exception):
    """A folder that cannot be reported (the message is for the user)."""


def _table(title: str, header: list[str], rows: list[list[str]]) -> Table:
    t = Table(title=title, title_justify="left", show_lines=False)
    for h in header:
        t.add_column(h, justify="left" if h in ("engine", PAIRING_HEADER[0]) else "right",
                     no_wrap=True)
    for r in rows:
        t.add_row(*r)
    return t


def render_summary(spec: TournamentSpec, st: Standings, ms: MatchStats | None = None,
                   time_text: str | None = None) -> Group:
    parts = []
    head = (f"{spec.name}: {st.total} games, {spec.board_size}x{spec.board_size}, "
            f"{time_text or spec.describe_time()}; black won {st.black_wins}/{st.total}, "
            f"mean {st.mean_plies:.1f} plies")
    parts.append(Text(head, style="bold"))
    parts.append(_table("Standings (Elo: Bradley-Terry MLE, anchored on "
                        f"{spec.anchor} = {spec.anchor_elo:g})", STANDINGS_HEADER,
                        standings_rows(st)))
    if st.ratings is not None and st.ratings.prior:
        parts.append(Text(f"note: some records are perfect, so each pairing got "
                          f"{st.ratings.prior:g} virtual draw(s) to keep ratings finite",
                          style="yellow"))
    parts.append(_table("Pairings", PAIRING_HEADER, pairing_rows(st)))
    reasons = ", ".join(f"{r} {c}" for r, c in st.reasons.most_common())
    parts.append(Text(f"game ends: {reasons or '-'}"))
    parts.append(Text(f"losses other than no_legal_move: {loss_reasons_text(st) or 'none'}"))
    if ms is not None and ms.games:
        start = (f"opening suite {Path(spec.openings_path).name}" if spec.openings_path
                 else "from the empty board")
        parts.append(_table(f"Match ({start}; a pair is games 2j and 2j+1, colours swapped)",
                            MATCH_HEADER, match_rows(ms)))
        if ms.sprt is not None:
            parts.append(Text(sprt_text(ms), style="bold"))
    return Group(*parts)


MATCH_HEADER = ["engine", "vs", "games", "W-L", "won as B", "won as W", "pairs LL/WL/WW",
                "Elo [95%]", "nElo"]


def match_rows(ms: MatchStats) -> list[list[str]]:
    e = ms.elo
    return [[ms.test, ms.base, str(ms.games), f"{ms.wins}-{ms.losses}",
             f"{ms.as_black[0]}/{ms.as_black[1]}", f"{ms.as_white[0]}/{ms.as_white[1]}",
             f"{ms.penta[0]}/{ms.penta[2]}/{ms.penta[4]}",
             (e.text() + (" pairs" if e.paired else " games")) if e is not None else "-",
             f"{e.nelo:+.0f}" if e is not None and e.nelo == e.nelo else "-"]]


def sprt_text(ms: MatchStats) -> str:
    """One line: the test, the LLR against its bounds, and the verdict."""
    c = ms.sprt
    if ms.verdict is not None:
        state = f"{ms.verdict} accepted at game {ms.decided_at} (" + (
            f"{ms.test} is stronger by at least {c.elo1:g})" if ms.verdict == "H1" else
            f"{ms.test} is not stronger by {c.elo1:g}; at most {c.elo0:g})")
    else:
        state = "undecided"
    return (f"{c.describe()}: LLR {ms.llr:.2f} after {ms.games} games ({ms.pairs} pairs) - "
            f"{state}")


def summary_text(spec: TournamentSpec, st: Standings, ms: MatchStats | None = None) -> str:
    buf = io.StringIO()
    Console(file=buf, width=160, color_system=None, force_terminal=False).print(
        render_summary(spec, st, ms))
    return buf.getvalue()


def plot_standings(spec: TournamentSpec, st: Standings, path: Path) -> str | None:
    """standings.png; returns an error message instead if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ("--plot needs matplotlib, which is not installed "
                "(pip install matplotlib, or the train extra); the tables are unaffected")
    if st.ratings is None:
        return "no finished games to plot"
    order = [n for n in st.order() if st.ratings.elo[n] == st.ratings.elo[n]][::-1]
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(order) + 1.5))
    ax.errorbar([st.ratings.elo[n] for n in order], range(len(order)),
                xerr=[st.ratings.ci95[n] for n in order], fmt="o", capsize=4)
    ax.set_yticks(range(len(order)), order)
    ax.set_xlabel(f"Elo (95% interval), anchor {spec.anchor} = {spec.anchor_elo:g}")
    ax.set_title(f"{spec.name}: {st.total} games")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


class LiveView:
    """What a terminal shows while games run: progress, running games, current score."""

    def __init__(self, spec: TournamentSpec, total: int, done: int):
        self.spec = spec
        self.total, self.done = total, done
        self.running: dict[str, dict] = {}
        self.score: dict[str, list[int]] = {n: [0, 0] for n in spec.engines}
        self.lock = threading.Lock()
        self.t0 = time.monotonic()
        self.started_done = done
        self.sprt: MatchStats | None = None  # two engines: the match line (and the SPRT)

    def count(self, records: list[dict]) -> None:
        """Add the score of games recorded before this run."""
        with self.lock:
            for r in records:
                if r["black"] in self.score and r["white"] in self.score:
                    win, lose = ((r["black"], r["white"]) if r["winner"] == "B"
                                 else (r["white"], r["black"]))
                    self.score[win][0] += 1
                    self.score[lose][1] += 1

    def started(self, game_id: str, black: str, white: str) -> None:
        with self.lock:
            self.running[game_id] = {"black": black, "white": white, "ply": 0,
                                     "clocks": ("-", "-")}

    def moved(self, game_id: str, plies: int, clocks: dict) -> None:
        """A game's ply and clocks (``clocks[1]`` black's, ``clocks[2]`` white's)."""
        with self.lock:
            if game_id in self.running:
                self.running[game_id]["ply"] = plies
                self.running[game_id]["clocks"] = (clocks[1], clocks[2])

    def ended(self, game_id: str) -> None:
        with self.lock:
            self.running.pop(game_id, None)

    def finished(self, winner: str, loser: str, stats: MatchStats | None) -> int:
        """Count a recorded game; returns how many are done."""
        with self.lock:
            self.done += 1
            self.score[winner][0] += 1
            self.score[loser][1] += 1
            self.sprt = stats
            return self.done

    def __rich__(self):
        with self.lock:
            elapsed = time.monotonic() - self.t0
            played = self.done - self.started_done
            eta = ""
            if played:
                left = (self.total - self.done) * elapsed / played
                eta = f", about {left / 60:.1f} min left"
            head = Text(f"{self.spec.name}: {self.done}/{self.total} games done, "
                        f"{len(self.running)} running, {elapsed:.0f} s{eta}", style="bold")
            t = Table(show_header=True, header_style="dim", box=None)
            for h in ("game", "black", "white", "ply", "B clock", "W clock"):
                t.add_column(h)
            for gid, r in sorted(self.running.items()):
                t.add_row(gid, r["black"], r["white"], str(r["ply"]), r["clocks"][0],
                          r["clocks"][1])
            score = "  ".join(f"{n} {w}-{l}" for n, (w, l) in self.score.items())
            parts = [head, t, Text(f"score: {score}", style="dim")]
            if self.sprt is not None and self.sprt.games:
                parts.append(Text(self.sprt.summary_line(), style="dim"))
            return Group(*parts)


@contextmanager
def shown(view: LiveView, console: Console):
    """Show ``view`` live while the block runs, on a terminal (a log file gets the lines)."""
    live = Live(view, console=console, refresh_per_second=4, transient=True) \
        if console.is_terminal else None
    if live is not None:
        live.start()
    try:
        yield
    finally:
        if live is not None:
            live.stop()


def game_line(n: int, total: int, game_id: str, res, stats: MatchStats | None) -> str:
    """The line printed when a game is recorded (``res``: referee.GameResult)."""
    line = (f"[{n}/{total}] {game_id}: {res.black} (B) vs {res.white} (W) -> "
            f"{res.result} {res.winner_name} ({res.reason}; {len(res.moves)} plies, "
            f"{res.duration:.1f} s)" + (f" - {res.detail}" if res.reason not in
                                        ("no_legal_move",) else ""))
    if stats is not None and stats.sprt is not None:
        line += (f"; {stats.wins}-{stats.losses}, Elo {stats.elo.text()}, LLR {stats.llr:.2f} "
                 f"[{stats.sprt.lower:.2f}, {stats.sprt.upper:.2f}]")
    return line


def report_folder(folder: str | Path, console: Console | None = None) -> None:
    """Print a results folder's tables without its spec and without writing anything: the
    engines, anchor and SPRT come from summary.json when it has them, else from the records
    (engines in order of appearance, the first the anchor; no SPRT)."""
    from .folder import read_records
    from .spec import EngineSpec
    from .sprt import SprtConfig

    folder = Path(folder)
    if not (folder / "results.jsonl").is_file():
        raise ReportError(f"{folder}: no results.jsonl (not a tournament results folder)")
    records = read_records(folder)
    if not records:
        raise ReportError(f"{folder}/results.jsonl: no finished games")
    try:
        summary = json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError):
        summary = {}
    info = summary.get("spec", {})
    names = list(info.get("engines") or [])
    for r in records:
        for n in (r["black"], r["white"]):
            if n not in names:
                names.append(n)
    anchor = info.get("anchor") or summary.get("anchor") or names[0]
    sprt = None
    match = summary.get("match") or {}
    if match.get("sprt"):
        c = match["sprt"]
        sprt = SprtConfig(c["elo0"], c["elo1"], c["alpha"], c["beta"], c["model"])
    engines = {n: EngineSpec(n, "", []) for n in names}
    spec = TournamentSpec(name=info.get("name") or folder.name, path=str(folder),
                          engines=engines, board_size=records[0].get("size", 9),
                          anchor=anchor, anchor_elo=info.get("anchor_elo", 0.0), sprt=sprt,
                          openings_path=info.get("openings"))
    if match.get("test") in names and match.get("base") in names:
        spec.format, spec.gauntlet = "gauntlet", match["test"]
    st = compute_standings(records, names, anchor, spec.anchor_elo)
    ms = two_engine_stats(spec, records)
    tcs = sorted({r.get("time_control", "") for r in records} - {""})
    if console is None:
        console = Console(width=None if Console().is_terminal else 140)
    console.print(render_summary(spec, st, ms, time_text=info.get("time") or
                                 "; ".join(tcs) or "time control not recorded"))

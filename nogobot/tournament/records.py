"""Each finished game's SGF, written with nogobot.game.sgf plus the tournament's extra properties (a
match keeps them all in one collection, ``games.sgf``: folder.py).

Root: players (PB/PW), result (RE, e.g. ``W+Time``), event (EV), game name (GN = game id), date
(DT), rules (RU NoGo), time control (TM main time, OT overtime; under time odds, where SGF has no
per-player property, the comment states each side's) and a comment (C) saying why the game
ended, and the opening, if the game started from a suite's position. Each move node: the time it
took and the mover's clock afterwards, as a comment (``1.234 s; clock 898.8s``) and as the
standard BL/WL time-left property; an opening move's comment says ``opening`` instead (no clock
ran). A move that lost the game (illegal, pass, garbage...) is not in the tree (it was never
played); the root comment quotes it.
"""

from __future__ import annotations

from sgfmill import sgf as sgfmill

from ..game import coords, sgf
from ..game.board import BLACK, WHITE
from .clock import RefereeTimeControl
from .referee import GameResult


def game_sgf(res: GameResult, *, event: str, game_id: str, tc: RefereeTimeControl,
             white_tc: RefereeTimeControl | None = None, opening: str | None = None) -> str:
    """The game as SGF text; ``tc`` is the game's clock, or black's when ``white_tc`` differs;
    ``opening`` names the suite position it started from."""
    moves = []
    comments = {}
    for i, (vertex, secs) in enumerate(zip(res.moves, res.times)):
        colour = BLACK if i % 2 == 0 else WHITE
        moves.append((colour, coords.from_gtp(vertex, res.size)))
        left = res.clock_left[i] if i < len(res.clock_left) else "-"
        if i < res.opening_plies:
            comments[i] = "opening"
            continue
        comments[i] = f"{secs:.3f} s" + (f"; clock {left}" if left != "-" else "")
    rec = sgf.GameRecord(size=res.size, moves=moves, black=res.black, white=res.white,
                         result=res.result, comments=comments)
    game = sgfmill.Sgf_game.from_string(sgf.serialise(rec))
    root = game.get_root()
    root.set("EV", event)
    root.set("GN", game_id)
    root.set("RU", "NoGo")
    if res.started:
        root.set("DT", res.started[:10])
    comment = f"{res.result}: {res.reason}. {res.detail}".strip()
    if opening:
        comment += f"\nOpening: {opening} ({res.opening_plies} plies, played by the referee)."
    if white_tc is not None and white_tc != tc:
        comment += f"\nTime odds: black {tc.describe()}, white {white_tc.describe()}."
        root.set("GC", f"time odds: black {tc.describe()}, white {white_tc.describe()}")
    else:
        root.set("GC", f"time control: {tc.describe()}")
    if (white_tc is None or white_tc == tc) and tc.kind != "none":
        root.set("TM", float(tc.main))
        if tc.sgf_overtime():
            root.set("OT", tc.sgf_overtime())
    root.set("C", comment)
    for i, node in enumerate(game.get_main_sequence()[1:]):
        left = res.clock_left[i] if i < len(res.clock_left) else "-"
        if left != "-":
            try:
                node.set("BL" if i % 2 == 0 else "WL", float(left.rstrip("s").split("s/")[0]))
            except ValueError:
                pass
    return game.serialise().decode("utf-8")

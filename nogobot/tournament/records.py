"""One SGF file per finished game, written with nogobot.sgf plus the tournament's extra properties.

Root: players (PB/PW), result (RE, e.g. ``W+Time``), event (EV), game name (GN = game id), date
(DT), rules (RU NoGo), time control (TM main time, OT overtime; under time odds, where SGF has no
per-player property, the comment states each side's) and a comment (C) saying why the game
ended. Each move node: the time it took and the mover's clock afterwards, as a comment
(``1.234 s; clock 898.8s``) and as the standard BL/WL time-left property. A move that lost the
game (illegal, pass, garbage...) is not in the tree (it was never played); the root comment
quotes it.
"""

from __future__ import annotations

from sgfmill import sgf as sgfmill

from .. import coords, sgf
from ..board import BLACK, WHITE
from .clock import RefereeTimeControl
from .referee import GameResult


def game_sgf(res: GameResult, *, event: str, game_id: str, tc: RefereeTimeControl,
             white_tc: RefereeTimeControl | None = None) -> str:
    """The game as SGF text; ``tc`` is the game's clock, or black's when ``white_tc`` differs."""
    moves = []
    comments = {}
    for i, (vertex, secs) in enumerate(zip(res.moves, res.times)):
        colour = BLACK if i % 2 == 0 else WHITE
        moves.append((colour, coords.from_gtp(vertex, res.size)))
        left = res.clock_left[i] if i < len(res.clock_left) else "-"
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
    if white_tc is not None and white_tc != tc:
        comment += f"\nTime odds: black {tc.describe()}, white {white_tc.describe()}."
    elif tc.kind != "none":
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

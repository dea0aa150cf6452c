"""The root's moves as analysis shows them, read from a finished search.

``tree_candidates`` turns a ``search.Searcher``'s tree (or an exact solve's verdicts) into
``Candidate``s, best first, and ``shown`` picks those worth showing. The GTP analysis commands
(``gtp.views``, ``gtp.live``) and the JSON analysis engine (``analysis.protocol``) both read
them; values are for the side to move at the root. Imports only the standard library at
start-up (GoGui's referee copy of the engine never searches).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

PV_LENGTH = 20  # moves of a candidate's line, its own first


@dataclass
class Candidate:
    """One root move as analysis tools show it (values for the root's side to move)."""

    move: int
    visits: int
    winrate: float  # [0, 1]
    prior: float
    lcb: float  # lower confidence bound of the winrate, [0, 1]
    proof: int  # +1 proven win, -1 proven loss, 0 unknown
    pv: list[int] = field(default_factory=list)


def tree_candidates(searcher, result) -> list[Candidate]:
    """The root's moves from the search tree (or from the result after an exact solve, which
    leaves no tree), best first: proven wins, then by visits, then by prior; proven losses last.
    Includes moves without visits; callers pick what to show."""
    t = searcher.tree
    kids = t.children(0)
    out: list[Candidate] = []
    if result.visits == 0 or len(kids) == 0:
        for c in result.children:  # the solver's verdicts (or nothing)
            wr = 1.0 if c.proof > 0 else 0.0 if c.proof < 0 else 0.5 * (c.q + 1.0)
            out.append(Candidate(c.move, c.visits, wr, c.prior, wr if c.proof else 0.0,
                                 c.proof, [c.move]))
    else:
        root_wr = result.winrate
        for k in range(len(kids)):
            visits = int(kids.N[k])
            proof = -int(kids.proof[k])
            if proof:
                wr = lcb = 1.0 if proof > 0 else 0.0
            elif visits:
                q = float(kids.W[k]) / visits
                wr = 0.5 * (q + 1.0)
                var = max(float(kids.W2[k]) / visits - q * q, 0.0) / 4.0  # winrate scale
                lcb = max(wr - 1.96 * math.sqrt(var / visits), 0.0) if visits > 1 else 0.0
            else:
                wr, lcb = root_wr, 0.0
            move = int(kids.move[k])
            pv = [move] + (_pv_after(t, int(kids.node[k])) if kids.node[k] >= 0 else [])
            out.append(Candidate(move, visits, min(max(wr, 0.0), 1.0),
                                 float(kids.prior[k]), min(lcb, 1.0), proof, pv))
    out.sort(key=lambda c: (-(c.proof + 1), -c.visits, -c.prior))
    return out


def _pv_after(t, node: int) -> list[int]:
    """The line after ``node``'s move (``mcts.principal_variation``), at most PV_LENGTH - 1."""
    from ..engine.mcts import (
        principal_variation,  # not at start-up: the referee copy never needs it
    )

    return principal_variation(t, node, PV_LENGTH - 1)


def shown(cands: list[Candidate], minmoves: int = 0, maxmoves: int = 0) -> list[Candidate]:
    """What analysis shows: searched or proven moves, at least ``minmoves``, at most
    ``maxmoves`` (0: no cap)."""
    picked = [c for c in cands if c.visits > 0 or c.proof != 0]
    if len(picked) < minmoves:
        taken = {id(c) for c in picked}
        rest = sorted((c for c in cands if id(c) not in taken), key=lambda c: -c.prior)
        picked += rest[:minmoves - len(picked)]
    return picked[:maxmoves] if maxmoves > 0 else picked

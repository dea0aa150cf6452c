"""In-process matches for gating and quick evaluation: two players, a referee board, Elo.

Why in-process and not ``nogobot tournament``: the tournament harness talks to engines through
GTP subprocesses, and ``nogobot gtp`` cannot load a chosen network yet; gating also runs every
generation on a shared 2-core machine, where two single-threaded searches in one process cost
no start-up at all. The referee is ``nogobot.board`` (the only owner of the rules): a player
whose move is illegal loses the game at once.

Players: ``NetPlayer`` (the batched MCTS with a fixed playout count, no noise; the first
``temperature_moves`` plies sampled ∝ visits so that games differ) and ``AgentPlayer`` (any
baseline from ``nogobot.agents``). Colours alternate (game k: A is black when k is even).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..board import BLACK, WHITE, Board


class NetPlayer:
    """MCTS on an ONNX model at a fixed playout count per move."""

    def __init__(self, model: str, size: int, playouts: int, temperature_moves: int = 0,
                 seed: int = 0, device: str = "cpu", threads: int = 1, name: str | None = None,
                 use_solver: bool = True):
        from ..inference import OnnxEvaluator
        from ..mcts import SearchConfig
        from ..player import Searcher

        dev = "cpu" if device == "cpu" else "auto"
        self.evaluator = OnnxEvaluator(model, device=dev, threads=threads)
        self.searcher = Searcher(self.evaluator, size,
                                 SearchConfig(batch_size=8, max_nodes=300_000,
                                              cache_entries=1 << 14, use_solver=use_solver),
                                 seed=seed)
        self.playouts = playouts
        self.temperature_moves = temperature_moves
        self.name = name or str(model)

    def move(self, board: Board) -> int:
        from ..player import SearchLimits

        res = self.searcher.search(board, SearchLimits(playouts=self.playouts))
        if board.ply < self.temperature_moves and res.children and \
                not res.reason.startswith("solver"):
            return self.searcher.pick(board, res, 1.0)
        return res.move


class AgentPlayer:
    """A baseline agent (``random``, ``greedy``, ``rollout``, ``alphabeta``) by name."""

    def __init__(self, name: str, seed: int = 0, **options):
        from ..agents.registry import make_agent

        self.agent = make_agent(name, seed=seed, **options)
        self.name = name

    def move(self, board: Board) -> int:
        return int(self.agent.select_move(board.copy(), None))


@dataclass
class MatchResult:
    a: str
    b: str
    wins: int = 0  # games won by A
    losses: int = 0
    a_black_wins: int = 0
    a_white_wins: int = 0
    plies: list[int] = field(default_factory=list)
    outcomes: list[bool] = field(default_factory=list)  # per game in order: did A win
    illegal: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.losses

    @property
    def score(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def elo_diff(self) -> float:
        """Elo of A minus B implied by the score (±800 cap for perfect records)."""
        s = min(max(self.score, 1e-3), 1 - 1e-3)
        return max(-800.0, min(800.0, -400.0 * math.log10(1.0 / s - 1.0)))

    def ci95(self) -> tuple[float, float]:
        """Wilson 95% interval of A's score."""
        n = self.games
        if n == 0:
            return (0.0, 1.0)
        z, p = 1.96, self.score
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return (max(0.0, centre - half), min(1.0, centre + half))

    def summary(self) -> str:
        lo, hi = self.ci95()
        return (f"{self.a} vs {self.b}: {self.wins}-{self.losses} ({100 * self.score:.1f}%, "
                f"95% CI {100 * lo:.0f}-{100 * hi:.0f}%; as black {self.a_black_wins}, as white "
                f"{self.a_white_wins}; mean {np.mean(self.plies or [0]):.1f} plies)")


def play_game(black, white, size: int, max_plies: int | None = None) -> tuple[int, Board, bool]:
    """One refereed game; returns (winner colour, final board, ended by an illegal move)."""
    board = Board(size)
    limit = max_plies or 2 * size * size
    while not board.is_terminal() and board.ply < limit:
        player = black if board.to_move == BLACK else white
        p = player.move(board)
        if not board.is_legal(p):
            return 3 - board.to_move, board, True
        board.play(p)
    return board.winner(), board, False


def play_match(a, b, games: int, size: int, progress=None) -> MatchResult:
    """``games`` games between players a and b, colours alternating (a is black in game 0)."""
    res = MatchResult(getattr(a, "name", "A"), getattr(b, "name", "B"))
    for g in range(games):
        a_black = g % 2 == 0
        winner, board, illegal = play_game(a, b, size) if a_black else play_game(b, a, size)
        a_won = winner == (BLACK if a_black else WHITE)
        res.wins += a_won
        res.losses += not a_won
        if a_won:
            if a_black:
                res.a_black_wins += 1
            else:
                res.a_white_wins += 1
        res.plies.append(board.ply)
        res.outcomes.append(bool(a_won))
        res.illegal += illegal
        if progress is not None:
            progress(res)
    return res


def elo_update(r_a: float, r_b: float, a_wins: int, b_wins: int, k: float = 16.0,
               order: list[bool] | None = None) -> tuple[float, float]:
    """Sequential K-factor Elo updates (NoGoZero+: K = 16) over a match's games.

    ``order`` lists the games as True (A won) / False; by default A's wins come first."""
    games = order if order is not None else [True] * a_wins + [False] * b_wins
    for a_won in games:
        e = 1.0 / (1.0 + 10.0 ** ((r_b - r_a) / 400.0))
        d = k * ((1.0 if a_won else 0.0) - e)
        r_a, r_b = r_a + d, r_b - d
    return r_a, r_b


def make_player(spec: str, size: int, playouts: int, temperature_moves: int, seed: int,
                use_solver: bool = True):
    """A player from a command-line spec: an .onnx path (MCTS) or a baseline agent name with
    optional options, e.g. ``alphabeta:seconds=0.5`` or ``rollout:playouts=2000``."""
    if spec.endswith(".onnx"):
        from pathlib import Path

        return NetPlayer(spec, size, playouts, temperature_moves, seed, name=Path(spec).stem,
                         use_solver=use_solver)
    name, _, opts = spec.partition(":")
    options = {}
    for item in filter(None, opts.split(",")):
        k, _, v = item.partition("=")
        options[k] = float(v) if "." in v else int(v)
    player = AgentPlayer(name, seed=seed, **options)
    player.name = spec
    return player

"""In-process matches for gating and quick evaluation: two players, a referee board, Elo.

Why in-process and not ``nogobot tournament``: the tournament harness talks to engines through
GTP subprocesses and clocks; gating runs every generation on a shared 2-core machine, where two
single-threaded searches at fixed playouts in one process cost no start-up at all and do not
depend on the machine's load. ``run_ladder`` (``nogobot train ladder``) plays a round robin of
several players this way, spread over worker processes, and fits Bradley–Terry Elo
(``nogobot.tournament.elo``): the ablation table of docs/results.md comes from it;
``merge_ladders`` (``train ladder-merge``) adds several ladders' results and refits, so a ladder
extended by later runs keeps one scale.
``play_match`` spreads one match's games over worker processes (a run's gating), each game seeded
on its own by ``match_jobs``, so the games do not depend on the number of workers. The referee is
``nogobot.game.board`` (the only owner of the rules): a player whose move is illegal loses the game
at once.

Players: ``NetPlayer`` (the batched MCTS with a fixed playout count, no noise; the first
``temperature_moves`` plies sampled ∝ visits so that games differ) and ``AgentPlayer`` (any
baseline from ``nogobot.agents``). Colours alternate (game k: A is black when k is even).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..game.board import BLACK, WHITE, Board


def match_search_config(use_solver: bool = True):
    """The search a ``NetPlayer`` runs (gating, ladders); equal-compute timing uses it too."""
    from ..engine.mcts import SearchConfig

    return SearchConfig(batch_size=8, max_tree_mb=16, cache_entries=1 << 14,
                        use_solver=use_solver, rollout_weight=0.0)  # the nets, not rollouts


class NetPlayer:
    """MCTS on an ONNX model at a fixed playout count per move."""

    def __init__(self, model: str, size: int, playouts: int, temperature_moves: int = 0,
                 seed: int = 0, device: str = "cpu", threads: int = 1, name: str | None = None,
                 use_solver: bool = True):
        from ..engine.search import Searcher
        from ..net.inference import OnnxEvaluator

        dev = "cpu" if device == "cpu" else "auto"
        self.evaluator = OnnxEvaluator(model, device=dev, threads=threads)
        self.searcher = Searcher(self.evaluator, size, match_search_config(use_solver),
                                 seed=seed)
        self.playouts = playouts
        self.temperature_moves = temperature_moves
        self.name = name or str(model)

    def move(self, board: Board) -> int:
        from ..engine.search import SearchLimits

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

    def add(self, game: int, winner: int, plies: int, illegal: bool) -> None:
        """Record game number ``game`` (A is black in even games) won by colour ``winner``."""
        a_black = game % 2 == 0
        a_won = winner == (BLACK if a_black else WHITE)
        self.wins += a_won
        self.losses += not a_won
        if a_won:
            if a_black:
                self.a_black_wins += 1
            else:
                self.a_white_wins += 1
        self.plies.append(plies)
        self.outcomes.append(bool(a_won))
        self.illegal += illegal

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


def play_agent_game(black, white, size: int,
                    max_plies: int | None = None) -> tuple[int, Board, bool]:
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


def play_agent_match(a, b, games: int, size: int, progress=None) -> MatchResult:
    """``games`` games between players a and b, colours alternating (a is black in game 0)."""
    res = MatchResult(getattr(a, "name", "A"), getattr(b, "name", "B"))
    for g in range(games):
        black, white = (a, b) if g % 2 == 0 else (b, a)
        winner, board, illegal = play_agent_game(black, white, size)
        res.add(g, winner, board.ply, illegal)
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


def match_jobs(size: int, a: tuple, b: tuple, games: int, seed: int, temperature_moves: int,
               use_solver: bool) -> list:
    """Jobs (k, (size, black, white)) of A vs B, players (spec, playouts): A is black in even
    games, and each player gets a seed of its own per game, so a game's moves do not depend on
    where or in what order it is played (gating here or on Ray actors)."""
    jobs = []
    for k in range(games):
        pa = (a[0], a[1], temperature_moves, seed + 7919 * k, use_solver)
        pb = (b[0], b[1], temperature_moves, seed + 7919 * k + 1, use_solver)
        jobs.append((k, (size, pa, pb) if k % 2 == 0 else (size, pb, pa)))
    return jobs


def match_result(a: str, b: str, games: dict[int, tuple]) -> MatchResult:
    """A ``MatchResult`` of A vs B from {game k: (winner colour, plies, illegal)}, in game
    order; A is black in even games (as ``play_agent_match``)."""
    res = MatchResult(a, b)
    for k in sorted(games):
        res.add(k, *games[k])
    return res


def play_match_job(job) -> tuple[int, int, int, bool]:
    """One game of ``match_jobs``: (k, winner colour, plies, illegal). Players are built here,
    so it runs as well in a worker process; a player spec is as for ``make_player``."""
    k, (size, black, white) = job
    players = [make_player(spec, size, playouts, temperature_moves, seed, use_solver=use_solver)
               for spec, playouts, temperature_moves, seed, use_solver in (black, white)]
    winner, board, illegal = play_agent_game(players[0], players[1], size)
    return k, int(winner), int(board.ply), bool(illegal)


def run_jobs(fn, jobs: list, workers: int = 1):
    """``fn(job)`` for every job, yielded as each finishes: in this process in job order when
    ``workers`` is 1, else in that many ``spawn`` worker processes (``fn`` builds its players
    there)."""
    if workers <= 1:
        yield from map(fn, jobs)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as pool:
        for fut in as_completed([pool.submit(fn, job) for job in jobs]):
            yield fut.result()


def play_match(a: tuple, b: tuple, games: int, size: int, seed: int, temperature_moves: int,
               use_solver: bool = True, workers: int = 1, progress=None) -> MatchResult:
    """A vs B, players (spec, playouts), ``games`` games in ``workers`` processes (one: in
    this process), colours alternating; ``progress(1)`` as each game ends. The result is the
    same for any number of workers (``match_jobs`` seeds each game)."""
    from pathlib import Path

    jobs = match_jobs(size, a, b, games, seed, temperature_moves, use_solver)
    done: dict[int, tuple] = {}
    for k, *outcome in run_jobs(play_match_job, jobs, min(workers, games)):
        done[k] = tuple(outcome)
        if progress is not None:
            progress(1)
    name = (lambda spec: Path(spec).stem if str(spec).endswith(".onnx") else str(spec))
    return match_result(name(a[0]), name(b[0]), done)


@dataclass
class LadderResult:
    labels: list[str]
    specs: list[str]
    wins: np.ndarray  # wins[i, j] = games i won against j
    matches: list  # MatchResult each; dicts when read back from JSON by merge_ladders
    ratings: object  # nogobot.tournament.elo.Ratings, anchored on the first player

    def table(self) -> str:
        """A Markdown table: player, games, score, Elo relative to the first player ± 95%."""
        r = self.ratings
        rows = ["| player | spec | games | score | Elo (vs first) |", "|---|---|---|---|---|"]
        order = sorted(range(len(self.labels)), key=lambda i: -r.elo[self.labels[i]])
        for i in order:
            name = self.labels[i]
            won, played = self.wins[i].sum(), (self.wins[i] + self.wins[:, i]).sum()
            ci = f" ± {r.ci95[name]:.0f}" if i else " (anchor)"
            spec = f"`{self.specs[i]}`" if self.specs[i] else "—"  # merged: maybe not known
            rows.append(f"| {name} | {spec} | {int(played)} | {int(won)}-"
                        f"{int(played - won)} ({100 * won / max(played, 1):.0f}%) | "
                        f"{r.elo[name]:+.0f}{ci} |")
        return "\n".join(rows)


def _ladder_job(job) -> MatchResult:
    """One pairing of a ladder, in a worker process (players are built there)."""
    i, j, spec_i, spec_j, games, size, playouts, temperature_moves, seed = job
    a = make_player(spec_i, size, playouts, temperature_moves, seed)
    b = make_player(spec_j, size, playouts, temperature_moves, seed + 1)
    res = play_agent_match(a, b, games, size)
    res.a, res.b = str(i), str(j)
    return res


def run_ladder(entries: list[tuple[str, str]], games: int, size: int = 9, playouts: int = 200,
               temperature_moves: int = 4, seed: int = 0, workers: int = 1,
               progress=None, executor=None) -> LadderResult:
    """Round robin: every pair of ``entries`` ((label, player spec) as for ``make_player``)
    plays ``games`` games, colours alternating; pairings run in ``workers`` processes, or
    through ``executor(jobs)`` (``nogobot.cluster``: games across a Ray cluster), which yields
    each pairing job's ``MatchResult`` (``a``, ``b`` = the players' indices) as it finishes."""
    from ..tournament.elo import bradley_terry

    labels = [label for label, _ in entries]
    specs = [spec for _, spec in entries]
    if len(set(labels)) != len(labels) or len(labels) < 2:
        raise ValueError("a ladder needs at least two players with distinct labels")
    jobs = [(i, j, specs[i], specs[j], games, size, playouts, temperature_moves,
             seed + 1000 * (i * len(specs) + j))
            for i in range(len(specs)) for j in range(i + 1, len(specs))]
    wins = np.zeros((len(specs), len(specs)))
    matches = []

    def record(res: MatchResult) -> None:
        i, j = int(res.a), int(res.b)
        wins[i, j] += res.wins
        wins[j, i] += res.losses
        res.a, res.b = labels[i], labels[j]
        matches.append(res)
        if progress is not None:
            progress(res)

    if executor is not None:
        for res in executor(jobs):
            record(res)
    else:
        for res in run_jobs(_ladder_job, jobs, workers):
            record(res)
    ratings = bradley_terry(labels, wins, anchor=labels[0])
    return LadderResult(labels, specs, wins, matches, ratings)


def ladder_document(res: LadderResult, **extra) -> dict:
    """The JSON form of a ladder (``train ladder --json``, ``train ladder-merge``): players
    (label → spec), the wins matrix in their order, Elo and 95% half-widths, the pairings."""
    return {"players": dict(zip(res.labels, res.specs)), **extra,
            "wins": res.wins.astype(int).tolist(),
            "elo": res.ratings.elo, "ci95": res.ratings.ci95,
            "matches": [m if isinstance(m, dict) else
                        {"a": m.a, "b": m.b, "wins": m.wins, "losses": m.losses,
                         "mean_plies": sum(m.plies) / max(len(m.plies), 1)}
                        for m in res.matches]}


def merge_ladders(documents: list[tuple[str, dict]], same: dict[str, str] | None = None,
                  anchor: str | None = None) -> LadderResult:
    """Add the wins matrices of several ladders' JSON documents ((name, document) pairs) by
    player label and refit Bradley–Terry Elo on the sum, anchored on ``anchor`` (default: the
    first document's first player), so a ladder extended by later runs is rated as one.

    ``same`` renames labels first (``{"gen82": "sp5"}``: a player labelled gen82 in one run and
    sp5 in another). A document is read as ``train ladder --json`` writes it (``players``: label →
    spec) or as a bare ``names`` list; anything else raises ValueError naming the document."""
    from ..tournament.elo import bradley_terry

    same = same or {}
    labels: list[str] = []
    specs: dict[str, str] = {}
    pair_wins: dict[tuple[str, str], int] = {}
    matches: list[dict] = []
    for name, doc in documents:
        try:
            players = doc["players"] if "players" in doc else {n: "" for n in doc["names"]}
            own = [same.get(str(p), str(p)) for p in players]
            wins = np.asarray(doc["wins"], dtype=float)
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{name}: not a ladder (needs 'players' or 'names', and 'wins')") \
                from None
        if wins.shape != (len(own), len(own)) or (wins < 0).any():
            raise ValueError(f"{name}: 'wins' is not a {len(own)}x{len(own)} matrix of counts")
        if len(set(own)) != len(own):
            raise ValueError(f"{name}: two players share a label after renaming")
        for label, spec in zip(own, players.values()):
            if label not in specs:
                labels.append(label)
            specs[label] = specs.get(label) or spec  # the first spec a ladder gives
        for i, a in enumerate(own):
            for j, b in enumerate(own):
                pair_wins[a, b] = pair_wins.get((a, b), 0) + int(wins[i, j])
        for m in doc.get("matches", []):
            matches.append({**m, "a": same.get(m["a"], m["a"]), "b": same.get(m["b"], m["b"]),
                            "from": name})
    if len(labels) < 2:
        raise ValueError("a merged ladder needs at least two players")
    anchor = same.get(anchor, anchor) if anchor else labels[0]
    if anchor not in labels:
        raise ValueError(f"anchor {anchor!r} is not a player of these ladders")
    wins = np.array([[pair_wins.get((a, b), 0) for b in labels] for a in labels], dtype=float)
    ratings = bradley_terry(labels, wins, anchor=anchor)
    return LadderResult(labels, [specs[label] for label in labels], wins, matches, ratings)

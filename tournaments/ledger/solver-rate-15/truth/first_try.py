"""The engine's first solver try at 60 s, with the nominal rate and without it: the position at
28 empty points of each of the first N games of gen18-vs-sp7-60, searched once by sp8 in the
default engine (a fresh tree, one thread) within SECONDS, the median maximum a move at 28 empty
points had in those games. One JSON line per position and setting to OUT. Run from the
repository root, nothing else running:

    python tournaments/ledger/solver-rate-15/truth/first_try.py OUT.jsonl [N] [SECONDS]
"""
import json
import sys

from nogobot.engine.mcts import SearchConfig
from nogobot.engine.search import Searcher, SearchLimits
from nogobot.game.board import Board
from nogobot.game import coords
from nogobot.net.inference import OnnxEvaluator

GAMES = "tournaments/ledger/gen18-vs-sp7-60/gen18-vs-sp7-60/results.jsonl"
EMPTY = 28


def positions(n: int) -> list[tuple[str, Board]]:
    out = []
    with open(GAMES) as f:
        for g in map(json.loads, f):
            if len(g["moves"]) <= 81 - EMPTY:
                continue
            b = Board(9)
            for m in g["moves"][:81 - EMPTY]:
                b.play(coords.from_gtp(m, 9))
            out.append((g["id"], b))
            if len(out) == n:
                break
    return out


def main(out_path: str, n: int, seconds: float) -> None:
    evaluator = OnnxEvaluator("models/nogobot-b6c32-sp8.onnx", device="cpu", threads=1)
    with open(out_path, "w") as out:
        for game, board in positions(n):
            for rate in (None, 0):
                s = Searcher(evaluator, 9, SearchConfig(solver_rate=rate), seed=1)
                tries = []
                solve = s.solver.solve
                s.solver.solve = lambda *a, **kw: tries.append(solve(*a, **kw)) or tries[-1]
                r = s.search(board.copy(), SearchLimits(seconds=seconds))
                t = tries[0] if tries else None
                rec = {"game": game, "rate": rate, "reason": r.reason, "seconds": r.seconds,
                       "winrate": r.winrate, "solver_result": t and t.result,
                       "solver_nodes": t and t.nodes, "solver_seconds": t and t.seconds}
                out.write(json.dumps(rec) + "\n")
                out.flush()
                print(rec, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40,
         float(sys.argv[3]) if len(sys.argv) > 3 else 5.72)

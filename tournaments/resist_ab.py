"""Which move to play once the endgame solver proves the game lost: an A/B from real games.

From every position where the engine first proved a loss in a tournament's logs, the engine's
side plays on with the solver against ``rave`` at a fixed number of simulations a move, once
with the move whose refutation took the most nodes ("stubborn", the old rule) and once with
``Solver.resist`` (the smallest share of winning replies), for each of rave's seeds. Fixed
simulations keep rave's strength independent of the machine's load, but not its games: its
batches follow the clock and its random numbers follow the batches, so a rerun is another
sample. Usage (SEEDS: a count, or FIRST:END):

    python tournaments/resist_ab.py SEEDS SIMULATIONS RESULTS_DIR... > out.txt

Prints one line a game (directory, game, rule, seed, WON/lost) and the totals.
"""
import glob
import json
import re
import sys
import time
from multiprocessing import Pool

from nogobot import coords
from nogobot.agents.rave import RaveAgent
from nogobot.board import Board
from nogobot.solver import LOSS, Solver


def positions(d):
    """(directory/game, moves before it) for each game of a results directory whose engine log
    shows a proven loss before any proven win."""
    out = []
    with open(f"{d}/results.jsonl") as f:
        games = {g["id"]: g for g in map(json.loads, f)}
    for path in sorted(glob.glob(f"{d}/logs/*.log")):
        with open(path) as f:
            lines = f.read().splitlines()
        if not any(line.startswith("mcts:") for line in lines):
            continue  # the other engine's log
        for i, line in enumerate(lines):
            if line.startswith("time:") and "solver: loss" in lines[i - 1]:
                ply = int(re.search(r"move (\d+)", line)[1])
                gid = path.split("/")[-1][:-6]
                name = f"{d.rstrip('/').split('/')[-1]}/{gid}"
                out.append((name, games[gid]["moves"][: ply - 1]))
                break
            if line.startswith("time:") and "solver: win" in lines[i - 1]:
                break
    return out

def play(args):
    """Play one position out with one rule; True when the engine's side won."""
    gid, moves, mode, seed, sims, nodes = args
    b = Board(9)
    for m in moves:
        b.play(coords.from_gtp(m, 9))
    me = b.to_move
    solver = Solver(1 << 20)
    rave = RaveAgent(playouts=sims, seed=seed, warmup=False)
    while b.num_legal() > 0:
        if b.to_move == me:
            r = solver.solve(b, 2_000_000)
            move = r.move
            if r.result == LOSS and mode == "resist":
                c = solver.resist(b, r.move_nodes, nodes)
                if c is not None:
                    move = c[0]
            if move < 0:
                move = int(b.legal_moves()[0])
        else:
            move = int(rave.select_move(b))
        b.play(move)
    return gid, mode, seed, b.to_move != me  # the side to move with no legal move loses


if __name__ == "__main__":
    first, _, end = sys.argv[1].rpartition(":")
    seeds = range(int(first or 0), int(end))
    sims, dirs = int(sys.argv[2]), sys.argv[3:]
    pos = [p for d in dirs for p in positions(d)]
    print(len(pos), "proven-loss positions", flush=True)
    jobs = [(g, m, mode, s, sims, 2_000_000) for g, m in pos for s in seeds
            for mode in ("stubborn", "resist")]
    t = time.time()
    won = {}
    with Pool(2) as p:
        for gid, mode, seed, w in p.imap_unordered(play, jobs):
            won[gid, seed, mode] = w
            print(gid, mode, seed, "WON" if w else "lost", flush=True)
    games = len(pos) * len(seeds)
    rules = ("stubborn", "resist")
    wins = {mode: sum(w for k, w in won.items() if k[2] == mode) for mode in rules}
    only = {mode: sum(won[g, s, mode] and not won[g, s, other]
                      for g, _ in pos for s in seeds)
            for mode, other in zip(rules, rules[::-1])}
    print(f"won of {games} each: {wins}; won by one rule only: {only}; {time.time() - t:.0f} s")

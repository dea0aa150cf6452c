"""`nogobot bench rules`: speed of the rules core beside a naive reference, in one run.

Figures are medians of several timed windows (the machines we run on are shared and noisy); the
ratio to the naive flood-fill reference measured in the same process is what to compare.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable

from ..core.machine import machine, search_cores


def _rate(run: Callable[[int], object], seconds: float, repeats: int) -> tuple[float, list[float]]:
    """Median calls/s of ``run(n)`` over ``repeats`` windows of about ``seconds`` each."""
    run(1)  # compile / warm caches outside the timed windows
    n = 1
    while True:  # calibrate a batch that takes ~seconds
        t0 = time.perf_counter()
        run(n)
        dt = time.perf_counter() - t0
        if dt >= seconds / 4 or n >= 1 << 24:
            break
        n *= 4
    n = max(1, int(n * seconds / max(dt, 1e-9)))
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run(n)
        rates.append(n / (time.perf_counter() - t0))
    return statistics.median(rates), rates


def machine_line() -> str:
    """The benchmark header's machine: the CPU's model name, its cores, Python's version."""
    return f"{machine()}, Python {platform.python_version()}"


def bench_rules(size: int = 9, seconds: float = 3.0, repeats: int = 5) -> dict:
    """Print and return random playouts/s: incremental kernels vs naive flood-fill scans."""
    import numba

    from ..game.board import Board, random_playouts
    from ..game.naive_rules import naive_random_playouts

    numba.set_num_threads(1)
    board = Board(size)
    g = board.geo
    seed = [0]

    def fast(n: int) -> None:
        seed[0] += 1
        random_playouts(*board.arrays(), g.nbr, g.zobrist, n, seed[0])

    def naive(n: int) -> None:
        seed[0] += 1
        naive_random_playouts(board.stones, g.nbr, board.to_move, n, seed[0])

    print(f"nogobot bench rules: uniformly random playouts from the empty {size}x{size} board, "
          f"one core ({machine_line()})")
    fast_rate, fast_all = _rate(fast, seconds, repeats)
    naive_rate, naive_all = _rate(naive, seconds / 2, max(3, repeats // 2))
    print(f"  incremental kernels (board.py)   {fast_rate:12,.0f} playouts/s   "
          f"(runs: {', '.join(f'{r:,.0f}' for r in fast_all)})")
    print(f"  naive flood-fill full-board scan {naive_rate:12,.0f} playouts/s   "
          f"(runs: {', '.join(f'{r:,.0f}' for r in naive_all)})")
    print(f"  speed-up {fast_rate / naive_rate:.1f}x; target >= 20,000 playouts/s on 9x9: "
          f"{'met' if fast_rate >= 20000 or size != 9 else 'NOT met'}")
    return {"playouts_per_s": fast_rate, "naive_playouts_per_s": naive_rate}


def _rave_game_rate(size: int, move_seconds: float, seed: int) -> tuple[float, int]:
    """rave's simulations/s over one self-play game at ``move_seconds`` a move, as its log
    counts them in play: every simulation of the moves it searched over their time (the moves
    the solver or a win at once answered run none). Returns (rate, plies)."""
    from ..agents.rave import RaveAgent
    from ..game.board import Board

    agent = RaveAgent(seconds=move_seconds, seed=seed, warmup=False)
    board = Board(size)
    sims, spent = 0, 0.0
    while board.num_legal() > 0:
        board.play(int(agent.select_move(board)))
        result = agent.last_result
        if result.simulations > 0:
            sims += result.simulations
            spent += result.seconds
    return sims / max(spent, 1e-9), board.ply


def bench_rave(size: int = 9, seconds: float = 2.0, repeats: int = 5,
               game_seconds: float = 0.4, games: int = 1) -> dict:
    """Print and return the rave agent's simulations/s from the empty board (fresh tree, one
    thread) and over whole self-play games (``games`` of them, ``game_seconds`` a move: the
    rate a game's log shows), the bare policy rollouts/s, and the rollout agent's uniformly
    random UCT playouts/s, all measured in this run, one core."""
    import statistics

    import numba

    from ..agents.rave import RaveAgent
    from ..agents.rollout import RolloutAgent
    from ..engine.playout import rollout_scratch, rollout_value
    from ..game.board import Board

    numba.set_num_threads(1)
    board = Board(size)
    scratch = rollout_scratch(size)
    seed = [0]

    def agent_run(agent):
        def run(n: int) -> None:
            agent.playouts = n
            if hasattr(agent, "forget"):
                agent.forget()  # a fresh tree: the empty board's search, not a reused one
            agent.select_move(board)
        return run

    def rollouts(n: int) -> None:
        seed[0] += 1
        rollout_value(board, n, seed[0], scratch=scratch)

    rave = RaveAgent(playouts=1, seed=1)
    uct = RolloutAgent(playouts=1, seed=1)
    print(f"nogobot bench rave: simulations/s on {size}x{size}, one thread, one core "
          f"({machine_line()})")
    rave_rate, rave_all = _rate(agent_run(rave), seconds, repeats)
    roll_rate, roll_all = _rate(rollouts, seconds / 2, max(3, repeats // 2))
    uct_rate, uct_all = _rate(agent_run(uct), seconds / 2, max(3, repeats // 2))
    played = [_rave_game_rate(size, game_seconds, 1000 + g) for g in range(max(games, 1))]
    game_all = [r for r, _ in played]
    game_rate = statistics.median(game_all)
    for label, rate, runs in (
            (f"rave in play: {len(played)} game(s), {game_seconds:g} s a move", game_rate,
             game_all),
            ("rave at the empty board (fresh tree)", rave_rate, rave_all),
            ("policy rollouts alone (playout.py)", roll_rate, roll_all),
            ("rollout: UCT, uniformly random", uct_rate, uct_all)):
        print(f"  {label:42s}{rate:10,.0f} /s   (runs: {', '.join(f'{r:,.0f}' for r in runs)})")
    print(f"  rave / rollout at the empty board {rave_rate / uct_rate:.2f}x; in play / empty board "
          f"{game_rate / rave_rate:.2f}x (rollouts shorten as the board fills)")
    print(f"  targets on 9x9: >= 80,000 in play: "
          f"{'met' if game_rate >= 80000 or size != 9 else 'NOT met'}; >= 50,000 at the empty "
          f"board: {'met' if rave_rate >= 50000 or size != 9 else 'NOT met'}")
    return {"rave_per_s": rave_rate, "rave_in_play_per_s": game_rate,
            "policy_rollouts_per_s": roll_rate, "rollout_per_s": uct_rate}


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def bench_search(model: str | None = None, device: str = "auto", threads: int | None = None,
                 batch: int = 16, seconds: float = 5.0, size: int = 9,
                 max_tree_mb: int | None = None) -> dict:
    """Search playouts/s beside the raw network evaluations/s at the same batch size."""
    import numpy as np

    from ..engine.mcts import SearchConfig, Tree
    from ..engine.search import Searcher, SearchLimits
    from ..net.features import boards_planes
    from ..net.inference import load_evaluator

    evaluator = load_evaluator(model, device=device, threads=threads)
    from ..game.positions import sample_positions

    positions = sample_positions(size)
    print(f"nogobot bench search: {evaluator.describe()}, batch {batch}, {size}x{size}, "
          f"{seconds:g} s per position ({machine_line()})")

    # Raw network throughput on real positions at the same batch size.
    planes = boards_planes([positions[i % len(positions)] for i in range(batch)])
    evaluator.evaluate(planes)
    raw = []
    for _ in range(5):
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < min(1.0, seconds / 2):
            evaluator.evaluate(planes)
            n += batch
        raw.append(n / (time.perf_counter() - t0))
    raw_rate = statistics.median(raw)

    # The network search's own overhead: no rollouts (they would measure playout.py instead).
    cfg = SearchConfig(batch_size=batch, use_solver=False, rollout_weight=0.0)
    if max_tree_mb:
        cfg.max_tree_mb = max_tree_mb
    searcher = Searcher(evaluator, size, cfg, seed=0)
    searcher.search(positions[0], SearchLimits(playouts=batch * 4))  # compile, warm up
    rates, evals_rates, used, per_playout = [], [], [], []
    for board in positions:
        searcher.reset()
        r = searcher.search(board, SearchLimits(seconds=seconds))
        rates.append(r.playouts / r.seconds)
        evals_rates.append(r.nn_evals / r.seconds)
        tree = searcher.tree
        used.append(tree.used_bytes())
        per_playout.append(tree.used_bytes() / max(r.playouts, 1))
        print(f"  position at ply {board.ply:3d}: {r.playouts / r.seconds:10,.0f} playouts/s "
              f"({r.nn_evals / r.seconds:,.0f} network evals/s, {r.playouts:,} playouts, "
              f"{tree.nodes:,} nodes, {tree.edges:,} edges, stop: {r.reason})")
    rate = statistics.median(rates)
    ratio = rate / raw_rate
    target = 0.8 if "CPU" in evaluator.describe().upper() else 0.5
    print(f"  search (median)          {rate:12,.0f} playouts/s")
    print(f"  raw network, batch {batch:<4d} {raw_rate:12,.0f} evaluations/s "
          f"(runs: {', '.join(f'{x:,.0f}' for x in raw)})")
    evals_ratio = statistics.median(evals_rates) / raw_rate
    print(f"  ratio search/raw          {ratio:12.2f}   (target >= {target})")
    print(f"  network evals in search   {evals_ratio:12.2f} of raw (the other playouts were "
          f"served by the cache, terminal positions or proofs)")
    print(f"  playouts per 20 s move    {rate * 20:12,.0f}   (NoGoZero+ at CCGC 2020: 1,400-1,800)")
    cache_mb = searcher.cache.nbytes() / 2**20
    bpp = statistics.median(per_playout)
    bound = cfg.max_tree_mb << 20
    print(f"  tree: {bpp:,.0f} bytes/playout (median; {Tree.NODE_BYTES} B per visited node + "
          f"{Tree.EDGE_BYTES} B per legal move of an expanded one); largest tree here "
          f"{max(used) / 2**20:,.0f} MB after {seconds:g} s")
    print(f"  memory bound: trees <= 2 x {cfg.max_tree_mb:,} MB (the reused subtree is copied "
          f"each move) + cache {cache_mb:,.0f} MB: room for ~{bound / bpp:,.0f} playouts, "
          f"~{bound / bpp / rate:,.0f} s of search at this rate; storage grows on demand")
    print(f"  peak RSS of this process {_peak_rss_mb():,.0f} MB")
    return {"playouts_per_s": rate, "raw_evals_per_s": raw_rate, "ratio": ratio,
            "evals_ratio": evals_ratio, "bytes_per_playout": bpp}


def bench_lanes(model: str | None = None, threads: int | None = None, seconds: float = 3.0,
                rounds: int = 2, size: int = 9, batches: tuple[int, ...] = ()) -> dict:
    """Search playouts/s as in play (hybrid rollouts on, solver off) with two lanes, the network
    on one core fewer, beside one lane with the network on every core, alternated position by
    position so that the machine's load falls on all alike. ``batches``: the two-lane searches'
    batch sizes, each a search of its own (default: the engine's); one lane keeps the engine's."""
    from ..engine.mcts import SearchConfig
    from ..engine.search import Searcher, SearchLimits
    from ..game.positions import sample_positions
    from ..net.inference import load_evaluator

    cores = search_cores(threads, lanes=2)
    default = SearchConfig().batch_size
    batches = tuple(dict.fromkeys(batches or (default,)))
    positions = sample_positions(size)
    arms = [(1, default)] + [(2, b) for b in batches]
    # one network per thread count: the two-lane searches share theirs (they run in turn)
    evaluators = {n: load_evaluator(model, device="cpu", threads=n) for n in (cores, cores - 1)}
    searchers = {}
    for lanes, batch in arms:
        cfg = SearchConfig(use_solver=False, lanes=lanes, batch_size=batch)
        s = Searcher(evaluators[cores if lanes == 1 else cores - 1], size, cfg, seed=0)
        s.search(positions[0], SearchLimits(playouts=64))  # compile, warm up
        searchers[lanes, batch] = s
    print(f"nogobot bench lanes: {searchers[arms[0]].evaluator.describe()} (one lane) against "
          f"{searchers[arms[1]].evaluator.describe()} (two lanes), rollouts as in play, "
          f"{size}x{size}, {seconds:g} s per position, {rounds} rounds ({machine_line()})")
    rates: dict[tuple[int, int], list[float]] = {arm: [] for arm in arms}
    for _ in range(rounds):
        for board in positions:
            for arm, s in searchers.items():
                s.reset()
                r = s.search(board, SearchLimits(seconds=seconds))
                rates[arm].append(r.playouts / r.seconds)
    median = {arm: statistics.median(rs) for arm, rs in rates.items()}
    one = median[arms[0]]
    for (lanes, batch), rate in median.items():
        label = f"{lanes} lane{'s' if lanes > 1 else ''}, batch {batch}".ljust(20)
        ratio = "" if lanes == 1 else f"  {rate / one:5.2f}x one lane"
        print(f"  {label} (median) {rate:12,.0f} playouts/s{ratio}  "
              f"(runs: {', '.join(f'{x:,.0f}' for x in rates[lanes, batch])})")
    two = median[arms[1]]
    print(f"  two lanes / one          {two / one:12.2f}"
          + (f"  (batch {batches[0]})" if len(batches) > 1 else ""))
    return {"one_lane": one, "two_lanes": two, "ratio": two / one,
            "two_lanes_by_batch": {b: median[2, b] for b in batches}}


def bench_time(main: float = 20.0, per_move: float | None = None, games: int = 2,
               opponent: str = "greedy", model: str | None = None, threads: int = 1,
               log_dir: str | None = None, quiet: bool = False) -> dict:
    """Real-clock games of ``nogobot gtp`` against a baseline, timed by the tournament referee
    (outside the engine, zero tolerance): share of the clock used and the least time left."""
    from pathlib import Path

    from ..game.board import BLACK, WHITE
    from ..tournament.clock import RefereeTimeControl
    from ..tournament.referee import EngineConfig, Referee
    from ..tournament.spec import resolve_argv

    tc = (RefereeTimeControl.per_move(per_move, tolerance=0.0) if per_move
          else RefereeTimeControl.sudden_death(main, tolerance=0.0))
    engine = ["nogobot", "gtp", "--threads", str(threads)] + (["--model", model] if model else [])
    ours = EngineConfig("nogobot", resolve_argv(engine))
    theirs = EngineConfig(opponent, resolve_argv(["nogobot", "agent", opponent]))
    if not quiet:
        print(f"nogobot bench time: {games} game(s) of nogobot gtp vs {opponent}, "
              f"{tc.describe()}, referee clock with zero tolerance ({machine_line()})")
    rows = []
    for g in range(games):
        black, white = (ours, theirs) if g % 2 == 0 else (theirs, ours)
        mine = BLACK if g % 2 == 0 else WHITE
        ref = Referee(black, white, size=9, time=tc, game_id=f"bench-time-{g}",
                      log_dir=Path(log_dir) if log_dir else None)
        res = ref.play()
        times = res.times[0 if mine == BLACK else 1::2]
        used = sum(times)
        row = {"game": g, "colour": "B" if mine == BLACK else "W", "result": res.result,
               "reason": res.reason, "lost_on_time": res.reason == "time" and res.winner != mine,
               "moves": len(times), "used": used, "max_move": max(times, default=0.0),
               "won": res.winner == mine}
        if per_move:
            row["share"] = used / (per_move * max(len(times), 1))
            row["min_left"] = per_move - row["max_move"]
        else:
            row["share"] = used / main
            row["min_left"] = main - used
        rows.append(row)
        if not quiet:
            print(f"  game {g + 1}: nogobot {row['colour']} {res.result} ({res.reason}), "
                  f"{row['moves']} moves, used {used:.1f} s = {100 * row['share']:.0f}% of "
                  f"the clock, longest move {row['max_move']:.2f} s, least left "
                  f"{row['min_left']:.2f} s")
    if not quiet:
        shares = [r["share"] for r in rows]
        print(f"  median share of the clock used {100 * statistics.median(shares):.0f}%; "
              f"least time left {min(r['min_left'] for r in rows):.2f} s; "
              f"time losses {sum(r['lost_on_time'] for r in rows)}")
    return {"games": rows}


def _analysis_positions(size: int, count: int, seed: int) -> list[list[tuple[int, int]]]:
    """``count`` move lists, each a seeded random game cut at a random ply in the first 60% of
    the board (openings and middle games, no finished game): independent positions, so
    neither engine gets a reused tree or a cache of a previous position."""
    import numpy as np

    from ..game.board import Board

    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        board = Board(size)
        stop = int(rng.integers(0, int(0.6 * size * size) + 1))
        while board.ply < stop and not board.is_terminal():
            board.play(int(rng.choice(board.legal_moves())))
        if not board.is_terminal():
            out.append(list(board.moves))
    return out


def bench_analysis(positions: int = 200, visits: int = 100, model: str | None = None,
                   threads: int | None = None, batch: int = 16, concurrency: int = 16,
                   size: int = 9, seed: int = 20261123, rounds: int = 4,
                   quiet: bool = False) -> dict:
    """Positions/s of the same positions through ``nogobot analysis`` (a round's queries
    written at once) and through ``nogobot gtp`` one after another (``clear_board``, the moves,
    ``reg_genmove``), each at ``visits`` playouts per position on a fresh tree, same network,
    batch and threads. Both engines are started and warmed up (kernels, network) first; then
    the positions are split into ``rounds`` and each round goes through gtp, then analysis,
    so that a shared machine's changing load falls on both alike."""
    import json
    import subprocess
    import sys

    from ..game import coords
    from ..tournament.gtp_client import GtpProcess

    games = _analysis_positions(size, positions, seed)
    common = (["--model", model] if model else []) + \
        (["--threads", str(threads)] if threads else []) + ["--batch", str(batch)]
    py = [sys.executable, "-m", "nogobot"]
    letter = {1: "B", 2: "W"}

    def say(text: str) -> None:
        if not quiet:
            print(text, flush=True)

    load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    say(f"nogobot bench analysis: {positions} positions ({size}x{size}, random games cut in "
        f"the first 60% of the board), {visits} visits each, batch {batch}, network threads "
        f"{threads or 'all cores'}, {rounds} alternating rounds ({machine_line()}; load "
        f"average {load0:.1f})")
    gtp = GtpProcess(py + ["gtp", "--quiet", "--playouts", str(visits)] + common, name="gtp")
    import tempfile

    log = tempfile.TemporaryFile("w+")  # the engine's stderr: its network call statistics
    proc = subprocess.Popen(py + ["analysis", "--visits", str(visits),
                                  "--concurrency", str(concurrency)] + common,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                            text=True, bufsize=1)
    gtp_moves: list[str | None] = []
    answers: dict[str, dict] = {}
    gtp_seconds = an_seconds = 0.0
    try:
        for cmd in (f"boardsize {size}", "genmove b", "clear_board"):  # warm up
            ok, text, _ = gtp.command(cmd, 600)
            if not ok:
                raise RuntimeError(f"nogobot gtp refused {cmd!r}: {text}")
        proc.stdin.write(json.dumps({"id": "warm-up", "boardXSize": size, "moves": []}) + "\n")
        proc.stdin.flush()
        first = proc.stdout.readline()
        if '"error"' in first or not first:
            raise RuntimeError(f"nogobot analysis: {first.strip() or 'no answer'}")
        per = -(-positions // rounds)
        for start in range(0, positions, per):
            chunk = list(enumerate(games))[start:start + per]
            t0 = time.perf_counter()
            for _, moves in chunk:  # gtp: one position after another
                gtp.command("clear_board", 60)
                for colour, p in moves:
                    gtp.command(f"play {letter[colour]} {coords.to_gtp(p, size)}", 60)
                to_move = 3 - moves[-1][0] if moves else 1
                ok, text, _ = gtp.command(f"reg_genmove {letter[to_move]}", 600)
                gtp_moves.append(text.upper() if ok else None)
            gtp_seconds += time.perf_counter() - t0
            queries = "".join(json.dumps({"id": str(k), "boardXSize": size, "moves": [
                [letter[c], coords.to_gtp(p, size)] for c, p in moves]}) + "\n"
                for k, moves in chunk)
            t0 = time.perf_counter()  # analysis: the round's queries at once
            proc.stdin.write(queries)
            proc.stdin.flush()
            for _ in chunk:
                line = proc.stdout.readline()
                if not line:
                    raise RuntimeError("nogobot analysis stopped answering")
                obj = json.loads(line)
                if "error" in obj:
                    raise RuntimeError(f"nogobot analysis: {line.strip()}")
                answers[obj["id"]] = obj
            an_seconds += time.perf_counter() - t0
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        gtp.close()
        if proc.poll() is None:
            proc.kill()
    log.seek(0)
    calls = [line.strip() for line in log if "network calls" in line]
    gtp_rate, an_rate = positions / gtp_seconds, positions / an_seconds
    ratio = an_rate / gtp_rate
    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    say(f"  nogobot gtp, one by one        {gtp_rate:8.1f} positions/s  "
        f"({gtp_seconds:.1f} s, {gtp_rate * visits:,.0f} visits/s)")
    say(f"  nogobot analysis, concurrent   {an_rate:8.1f} positions/s  "
        f"({an_seconds:.1f} s, {an_rate * visits:,.0f} visits/s; up to {concurrency} "
        f"positions at once)")
    say(f"  ratio analysis / gtp           {ratio:8.2f}x   (load average at the end "
        f"{load1:.1f})")
    same = sum(1 for k, mv in enumerate(gtp_moves)
               if answers[str(k)]["moveInfos"] and answers[str(k)]["moveInfos"][0]["move"] == mv)
    say(f"  same best move in {same} of {positions} positions")
    if calls:
        say(f"  the analysis engine's log: {calls[-1].removeprefix('analysis: ')} (gtp: at "
            f"most {batch} a call)")
    return {"gtp_positions_per_s": gtp_rate, "analysis_positions_per_s": an_rate,
            "ratio": ratio, "same_move": same}

"""Gating: whether a generation's candidate net replaces the best one. It owns the games the
candidate plays against the best (more of them, and at equal compute, when the candidate is
the next stage's net: ``search_speed_ratio``), the Elo row each gating adds to ``elo.csv``, and
the reuse of that row when a killed run gates the same generation again (``gating_result``).
What an accepted candidate changes in the run's state is the loop's (loop.py)."""

from __future__ import annotations

import time
from pathlib import Path

from .runfiles import append_csv, log, read_csv

ELO_FIELDS = ["generation", "candidate", "stage", "best", "wins", "losses", "score",
              "accepted", "elo_candidate", "elo_best_before", "games_total", "time"]


def search_speed_ratio(best, candidate, size: int, seconds: float = 6.0,
                       per_search: float = 0.25) -> float:
    """The candidate's search playouts per second / the best net's, both ONNX nets searching
    as gating does (batch 8, one thread) on this machine: what "equal compute" must divide.

    Whole searches, not bare network calls: the tree, features and cache cost the same for
    both nets, so a bigger net is slower by less than its FLOPs say. Searches alternate in
    pairs on the benchmark positions, from a fresh tree and cache each time (no cache hits),
    and the median of the pairs' ratios is returned, so that load on a shared machine, which
    shifts both members of a pair alike, cancels."""
    import statistics

    from ..engine.search import Searcher, SearchLimits
    from ..net.inference import OnnxEvaluator
    from ..game.positions import sample_positions
    from .match import match_search_config

    cfg = match_search_config(use_solver=False)  # the solver would time proofs, not the nets
    evs = [OnnxEvaluator(str(best), device="cpu", threads=1),
           OnnxEvaluator(str(candidate), device="cpu", threads=1)]
    positions = sample_positions(size)

    def rate(ev, board, seed: int, limits: SearchLimits) -> float:
        r = Searcher(ev, size, cfg, seed=seed).search(board, limits)
        return r.playouts / max(r.seconds, 1e-9)

    for ev in evs:  # sessions and kernels warmed up outside the timed searches
        rate(ev, positions[0], 0, SearchLimits(playouts=64))
    ratios: list[float] = []
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end or len(ratios) < 4:
        k = len(ratios)
        board, limits = positions[k % len(positions)], SearchLimits(seconds=per_search)
        order = (0, 1) if k % 2 == 0 else (1, 0)  # neither net always searches first
        rates = {i: rate(evs[i], board, k, limits) for i in order}
        ratios.append(rates[1] / rates[0])
    return float(statistics.median(ratios))


def gating_result(run_dir: Path, backend, cfg, st: dict, s: int, cand: Path, g: int,
                  progress) -> tuple[int, int, bool, float]:
    """(wins, losses, accepted, the candidate's Elo) of generation ``g``'s candidate ``cand``
    (stage ``s``) against the best net of the run state ``st``; ``progress(games)`` makes the
    games' progress bar. A result already in ``elo.csv`` is reused, a new one is recorded."""
    from .match import elo_update

    gc = cfg.gating
    done = [r for r in read_csv(run_dir / "elo.csv") if int(r["generation"]) == g]
    if done:  # gated before a kill: reuse the recorded result
        r = done[-1]
        wins, losses = int(r["wins"]), int(r["losses"])
        accepted = r["accepted"] == "True"
        elo_c = float(r["elo_candidate"])
    else:
        games = gc.games
        kw = {}
        if s != st["stage"]:  # a stage switch: more games, and at equal network cost
            games = gc.stage_switch_games or gc.games
            if gc.equal_compute and games > 0:
                ratio = search_speed_ratio(backend.playing_net(run_dir / st["best"]),
                                           backend.playing_net(cand), cfg.board_size)
                kw["candidate_playouts"] = max(1, round(gc.playouts * ratio))
                log(f"gen {g} gating stage {s} at equal compute: it searches "
                    f"{ratio:.2f}x as many playouts per second as the best net, so "
                    f"{kw['candidate_playouts']} playouts against {gc.playouts}")
        if games > 0:
            bar = progress(games)
            res = backend.play_gating(cand, run_dir / st["best"], games,
                                           cfg.board_size, gc, cfg.seed * 7919 + g,
                                           cfg.selfplay.use_solver, progress=bar, **kw)
            bar.close()
            wins, losses, order = res.wins, res.losses, res.outcomes
        else:
            wins, losses, order = 0, 0, []
        score = wins / (wins + losses) if wins + losses else 1.0
        accepted = score >= gc.threshold
        elo_c, _ = elo_update(st["best_elo"], st["best_elo"], wins, losses, gc.elo_k, order)
        append_csv(run_dir / "elo.csv", ELO_FIELDS, [{
            "generation": g, "candidate": cand.stem, "stage": s, "best": Path(st["best"]).stem,
            "wins": wins, "losses": losses, "score": round(score, 3), "accepted": accepted,
            "elo_candidate": round(elo_c, 1), "elo_best_before": round(st["best_elo"], 1),
            "games_total": st["games_total"], "time": time.strftime("%Y-%m-%d %H:%M:%S")}])
    return wins, losses, accepted, elo_c

"""Labelling the endgame truth suite with the exact solver (``engine.solver``), resumably.

Each position gets the solver's verdict for its side to move within a node budget and, in a won
position, as many of its winning moves as a second budget settles (every root move the first
call left open is solved one level down). A position the solver cannot settle stays
``unknown``: it is written, counted and relabelled later, never dropped. After every position
the whole labels file is rewritten atomically, so a kill loses one position's work at most and a
rerun carries on where it stopped (labels are keyed by position id).
"""

from __future__ import annotations

import hashlib
import time
from functools import lru_cache
from pathlib import Path

from ..game import coords
from .endgame import LABELS, LABELS_FORMAT, load_labels, load_positions, write_jsonl

NAMES = {1: "win", -1: "loss", 0: "unknown"}


@lru_cache(maxsize=1)
def solver_version() -> str:
    """Which solver a label came from: a hash of the source of the solver this process loaded
    (its module's file and the ``solver_*.py`` beside it), read once, when it is imported."""
    from ..engine import solver

    path = Path(solver.__file__)
    h = hashlib.sha256()
    for f in [path, *sorted(path.parent.glob("solver_*.py"))]:
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def label_position(pos, nodes: int, move_nodes: int, tt_entries: int = 1 << 22) -> dict:
    """The label of one ``endgame.Position`` (see the suite's README for its fields)."""
    from ..engine.solver import LOSS, UNKNOWN, WIN, Solver

    board = pos.board()
    t0 = time.perf_counter()
    solver = Solver(tt_entries)
    res = solver.solve(board, nodes)
    used = res.nodes
    results = {m: r for m, r in res.move_results.items()}
    for m in board.legal_moves():
        results.setdefault(int(m), UNKNOWN)
    if res.result == WIN:
        # The winning moves beyond the first: each open move solved one level down, the budget
        # shared among those still to do.
        todo = [m for m, r in results.items() if r == UNKNOWN]
        pool = move_nodes
        for i, m in enumerate(todo):
            if pool <= 0:
                break
            share = pool // (len(todo) - i)
            child = board.copy()
            child.play(m)
            r = solver.solve(child, max(share, 1), images_of=board)
            pool -= r.nodes
            used += r.nodes
            results[m] = -r.result
    g = pos.size
    pick = lambda v: sorted(coords.to_gtp(m, g) for m, r in results.items() if r == v)
    result = NAMES[res.result]
    winner = None if res.result == UNKNOWN else \
        ("B" if (pos.to_move == 1) == (res.result == WIN) else "W")
    wins, losses, open_ = pick(WIN), pick(LOSS), pick(UNKNOWN)
    return {"id": pos.id, "depth": pos.depth, "result": result, "winner": winner,
            "wins": wins, "losses": losses, "open": open_,
            "complete": res.result == LOSS or (res.result == WIN and not open_),
            "nodes": int(used), "seconds": round(time.perf_counter() - t0, 2),
            "budget": [nodes, move_nodes], "solver": solver_version()}


def settle_open_moves(pos, label: dict, move_nodes: int, tt_entries: int = 1 << 22) -> dict:
    """``label`` (a won position's) with each of its open moves solved one level down within
    ``move_nodes`` nodes of its own; a move still unsettled stays open. Records the per-move
    budget in ``open_tried`` so a rerun at the same budget skips the label."""
    from ..engine.solver import LOSS, WIN, Solver

    board = pos.board()
    g = pos.size
    t0 = time.perf_counter()
    solver = Solver(tt_entries)
    wins, losses, open_, used = set(label["wins"]), set(label["losses"]), [], 0
    for name in label["open"]:
        child = board.copy()
        child.play(coords.from_gtp(name, g))
        r = solver.solve(child, move_nodes, images_of=board)
        used += r.nodes
        if r.result == LOSS:
            wins.add(name)
        elif r.result == WIN:
            losses.add(name)
        else:
            open_.append(name)
    return {**label, "wins": sorted(wins), "losses": sorted(losses), "open": sorted(open_),
            "complete": not open_, "nodes": int(label["nodes"] + used),
            "seconds": round(label["seconds"] + time.perf_counter() - t0, 2),
            "open_tried": move_nodes}


def label_suite(folder: str | Path, *, nodes: int, move_nodes: int | None = None,
                depths=None, limit: int | None = None, split: str | None = None,
                redo: str = "none", command: str = "", log=None) -> dict:
    """Label the suite in ``folder`` (missing labels first; ``redo`` "unknown" relabels the
    positions left unknown by a smaller budget than ``nodes``, "all" every one, "open" settles
    the open moves of won labels within ``move_nodes`` each), writing ``labels.jsonl`` after
    every position. Returns counts."""
    folder = Path(folder)
    _, positions = load_positions(folder)
    _, labels = load_labels(folder)
    move_nodes = nodes if move_nodes is None else move_nodes
    version = solver_version()
    if depths:
        positions = [p for p in positions if p.depth in depths]
    if split:
        positions = [p for p in positions if p.split == split]
    todo = []
    per_depth: dict[int, int] = {}
    for p in sorted(positions, key=lambda p: (p.depth, p.id)):
        # The first ``limit`` of each depth, as the bench's --limit takes them.
        if limit is not None and per_depth.get(p.depth, 0) >= limit:
            continue
        per_depth[p.depth] = per_depth.get(p.depth, 0) + 1
        old = labels.get(p.id)
        if redo == "open":
            if old is not None and old["result"] == "win" and old["open"] \
                    and old.get("open_tried", 0) < move_nodes:
                todo.append(p)
        elif old is None or redo == "all" or (redo == "unknown" and old["result"] == "unknown"
                                              and old["budget"][0] < nodes):
            todo.append(p)
    header = {"format": LABELS_FORMAT, "version": 1, "budget_nodes": nodes,
              "move_budget_nodes": move_nodes, "solver": version,
              "command": command,
              "note": "result is for the side to move; each label keeps its own budget "
                      "and solver (hash of engine/solver.py)"}
    order = {p.id: (p.depth, p.id) for p in load_positions(folder)[1]}
    done = {"win": 0, "loss": 0, "unknown": 0}
    for i, p in enumerate(todo, start=1):
        if redo == "open":
            lab = settle_open_moves(p, labels[p.id], move_nodes)
        else:
            lab = label_position(p, nodes, move_nodes)
        labels[p.id] = lab
        done[lab["result"]] += 1
        rows = sorted(labels.values(), key=lambda r: order.get(r["id"], (999, r["id"])))
        write_jsonl(folder / LABELS, header, rows)
        if log is not None:
            log(f"[{i}/{len(todo)}] {p.id}: {lab['result']} ({lab['winner'] or '?'}), "
                f"{len(lab['wins'])} winning, {len(lab['open'])} open, {lab['nodes']:,} nodes, "
                f"{lab['seconds']:.1f} s")
    return {"labelled": len(todo), **done, "total": len(labels)}

"""`nogobot bench endgame`: the engine and the exact solver measured against the truth suite.

Per depth, at a budget per move: the share of positions the solver (``engine.solver``) proves
within it, beside the figure recorded for the solver the suite was labelled with
(``baseline.json``); how often the network player's move (what `nogobot gtp` plays at that
budget) is a proven winning move in a position labelled won, and how often its value head and
its search name the labelled winner; the same for the ``rave`` agent. A proof that contradicts
a label is counted apart: one means a wrong proof somewhere.

With ``--seconds`` the solver gets a node budget sized to the time at the rate it measures on
the position (an eighth of the time at the nominal rate first, then the rest at the measured
rate, its table kept), as rave sizes it in play (a loaded machine runs it several times below
the nominal rate); a proof counts when it came within the time (5% grace for the last call's
overrun). A solver whose ``solve`` takes ``max_seconds`` is given the time instead. With ``--nodes`` it gets that many nodes, once:
a figure any machine reproduces.

A player's move that the labels leave open in a won position is settled after the move,
outside every player's time, by the solver one level down within ``settle`` nodes (the same
move of both players once); one it cannot settle stays open and counts as not proven.

It also counts the positions whose empty points split into two or more independent regions
where both colours can play (``Board.independent_regions``): where a solver could solve a sum
of smaller games instead of the whole.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from ..core.machine import machine
from ..game import coords
from .endgame import BASELINE, SuiteError, load_labels, load_positions

GRACE = 1.05  # a proof within this share of the time counts (the last call overruns a little)


def solve_within(board, seconds: float | None, nodes: int | None,
                 threads: int = 1) -> tuple[int, int, float]:
    """(WIN/LOSS/UNKNOWN for the side to move, nodes, seconds) within the budget, the solver
    searching with ``threads`` threads."""
    import inspect

    from ..engine.solver import SOLVER_NODES_PER_SECOND, UNKNOWN, Solver

    solver = Solver(1 << 20, **({"threads": threads} if threads > 1 else {}))
    t0 = time.perf_counter()
    if nodes is not None:
        res = solver.solve(board, nodes)
        return res.result, res.nodes, time.perf_counter() - t0
    if "max_seconds" in inspect.signature(solver.solve).parameters:  # a solver with a clock
        res = solver.solve(board, 1 << 40, max_seconds=seconds)
        dt = time.perf_counter() - t0
        return (res.result if dt <= seconds * GRACE else UNKNOWN), res.nodes, dt
    budget = max(int(SOLVER_NODES_PER_SECOND * seconds / 8), 1000)
    used = 0
    while True:
        t = time.perf_counter()
        res = solver.solve(board, budget)
        used += res.nodes
        now = time.perf_counter()
        left = seconds - (now - t0)
        if res.result != UNKNOWN or left <= 0.02 * seconds:
            break
        budget = int(min(max(res.nodes / max(now - t, 1e-6) * left, 1000), 1 << 40))
    dt = time.perf_counter() - t0
    return (res.result if dt <= seconds * GRACE else UNKNOWN), used, dt


def settle_move(board, move: int, nodes: int) -> str:
    """"win", "loss" or "open": ``move``'s result for the side to move in ``board``, by the
    solver on the position after it within ``nodes``."""
    from ..engine.solver import LOSS, WIN

    after = board.copy()
    after.play(move)
    res, _, _ = solve_within(after, None, nodes)
    return {LOSS: "win", WIN: "loss"}.get(res, "open")


class Players:
    """The network player and rave, built once (kernels and the net load before timing)."""

    def __init__(self, seconds: float, engine: bool, rave: bool, model=None,
                 threads: int | None = None, seed: int = 0, solver_threads: int = 1):
        self.seconds = seconds
        self.engine = self.evaluator = self.rave = None
        if engine:
            from ..engine.mcts import SearchConfig
            from ..engine.player import MCTSAgent
            from ..net.inference import load_evaluator

            # No model: the engine's default net for the CPU, as `nogobot gtp` plays it.
            self.evaluator = load_evaluator(model, device="cpu", threads=threads)
            config = SearchConfig(batch_size=16, solver_threads=solver_threads)
            self.engine = MCTSAgent(self.evaluator, config=config, seconds=seconds, seed=seed,
                                    log=None)
        if rave:
            from ..agents.registry import make_agent

            self.rave = make_agent("rave", seconds=seconds, seed=seed)
            self.rave.log = None

    def warm_up(self, board) -> None:
        """One short search each, so no measured move pays for loading kernels."""
        if self.engine is not None:
            self.engine.select_move(board.copy(), seconds=0.05)
        if self.rave is not None:
            self.rave.select_move(board.copy(), seconds=0.05)

    def measure(self, board) -> dict:
        out = {}
        if self.engine is not None:
            value = float(self.evaluator.evaluate_boards([board]).value[0])
            move = self.engine.select_move(board.copy(), seconds=self.seconds)
            r = self.engine.last_result
            out["engine"] = {"move": int(move), "value_head": round(value, 3),
                             "search": round(float(r.winrate), 3) if r is not None else None}
        if self.rave is not None:
            move = self.rave.select_move(board.copy(), seconds=self.seconds)
            r = self.rave.last_result
            out["rave"] = {"move": int(move),
                           "search": round(float(r.winrate), 3) if r is not None else None}
        return out


def contested_regions(board) -> list[int]:
    """Sizes of the independent regions where both colours have a legal point, largest
    first."""
    legal = board.legal
    return sorted((len(r) for r in board.independent_regions()
                   if legal[1, r].any() and legal[2, r].any()), reverse=True)


def _select(positions, labels, depths, split, limit):
    chosen, count = [], {}
    for p in sorted(positions, key=lambda p: (p.depth, p.id)):
        if (depths and p.depth not in depths) or (split and p.split != split):
            continue
        if limit is not None and count.get(p.depth, 0) >= limit:
            continue
        count[p.depth] = count.get(p.depth, 0) + 1
        chosen.append(p)
    return chosen


def _summary(rows: list[dict]) -> dict:
    """Per-depth counts from the per-position rows."""
    s = {"positions": len(rows), "labelled": 0, "label_unknown": 0, "proven": 0,
         "disagree": 0, "seconds": round(sum(r["solver"]["seconds"] for r in rows), 2),
         "sums": sum(len(r["regions"]) >= 2 for r in rows)}
    for who in ("engine", "rave"):
        if rows and who in rows[0]:
            s[who] = {"won": 0, "winning_move": 0, "open_move": 0, "search_right": 0}
            if who == "engine":
                s[who]["value_right"] = 0
    for r in rows:
        lab = r["label"]
        s["proven"] += r["solver"]["result"] != "unknown"
        if lab in ("win", "loss"):
            s["labelled"] += 1
            s["disagree"] += r["solver"]["result"] not in ("unknown", lab)
        else:
            s["label_unknown"] += 1
        for who in ("engine", "rave"):
            if who not in r or lab not in ("win", "loss"):
                continue
            p, t = r[who], s[who]
            won = lab == "win"
            t["search_right"] += (p["search"] is not None and (p["search"] > 0.5) == won)
            if "value_head" in p:
                t["value_right"] += (p["value_head"] > 0.5) == won
            if won:
                t["won"] += 1
                if p["move_label"] == "win":
                    t["winning_move"] += 1
                elif p["move_label"] == "open":
                    t["open_move"] += 1
    return s


def budget_key(seconds: float, nodes: int | None) -> str:
    return f"nodes={nodes}" if nodes is not None else f"seconds={seconds:g}"


def load_baseline(folder: Path, key: str) -> dict | None:
    """The baseline run at this budget: when, where, and which positions its solver proved
    (None when it has none)."""
    path = folder / BASELINE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        runs = data if isinstance(data, list) else [data]
        for run in runs:
            if run.get("budget_key") == key:
                return {"when": run.get("date", "?"), "machine": run.get("machine", "?"),
                        "proven": {r["id"]: r["solver"]["result"] != "unknown"
                                   for r in run["rows"]}}
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise SuiteError(f"{path}: not a baseline of bench endgame ({e})") from None
    return None


def bench_endgame(suite: str | Path, *, seconds: float = 1.0, nodes: int | None = None,
                  depths=None, limit: int | None = None, split: str | None = None,
                  engine: bool = True, rave: bool = True, model=None, threads=None,
                  echo=print, progress=None, as_json: bool = False,
                  settle: int = 0, solver_threads: int = 1) -> dict:
    """Run the bench on the suite in ``suite`` and print its table (or JSON); returns the
    report. SuiteError for a missing or unreadable suite."""
    folder = Path(suite)
    header, positions = load_positions(folder)
    _, labels = load_labels(folder)
    chosen = _select(positions, labels, set(depths or ()), split, limit)
    if not chosen:
        raise SuiteError(f"{folder}: no position matches the depth, split and limit given")
    boards = {p.id: p.board() for p in chosen}
    players = (Players(seconds, engine, rave, model, threads, solver_threads=solver_threads)
               if (engine or rave) else None)
    solve_within(boards[chosen[0].id], None, 100)  # the solver's kernels load before timing
    if players is not None:
        players.warm_up(boards[chosen[0].id])
    rows = []
    for i, p in enumerate(chosen, start=1):
        board = boards[p.id]
        lab = labels.get(p.id, {"result": "unknown"})
        res, used, dt = solve_within(board, seconds, nodes, solver_threads)
        row = {"id": p.id, "depth": p.depth, "split": p.split, "label": lab["result"],
               "solver": {"result": {1: "win", -1: "loss"}.get(res, "unknown"),
                          "nodes": int(used), "seconds": round(dt, 3)},
               "regions": contested_regions(board)}
        if players is not None:
            settled: dict[int, str] = {}
            for who, played in players.measure(board).items():
                m = played["move"]
                v = coords.to_gtp(m, p.size)
                played["move_label"] = ("win" if v in lab.get("wins", ()) else
                                        "loss" if v in lab.get("losses", ())
                                        or lab["result"] == "loss" else "open")
                if played["move_label"] == "open" and lab["result"] == "win" and settle > 0:
                    if m not in settled:
                        settled[m] = settle_move(board, m, settle)
                    played["move_label"] = settled[m]
                    played["settled"] = True
                played["move"] = v
                row[who] = played
        rows.append(row)
        if progress is not None:
            progress(f"[{i}/{len(chosen)}] {p.id} label {lab['result']}: solver "
                     f"{row['solver']['result']} ({used:,} nodes, {dt:.2f} s)"
                     + "".join(f", {w} {row[w]['move']} ({row[w]['move_label']})"
                               for w in ("engine", "rave") if w in row))
    key = budget_key(seconds, nodes)
    report = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
              "machine": machine(),
              "budget_key": key, "seconds": seconds, "nodes": nodes, "settle_nodes": settle,
              "solver_threads": solver_threads,
              "network": (players.evaluator.describe()
                          if players is not None and players.evaluator is not None else None),
              "suite": {"positions": header.get("positions"), "seed": header.get("seed"),
                        "labels_budget": sorted({labels[p.id]["budget"][0] for p in chosen
                                                 if "budget" in labels.get(p.id, {})})},
              "depths": {str(d): _summary([r for r in rows if r["depth"] == d])
                         for d in sorted({r["depth"] for r in rows})},
              "rows": rows}
    baseline = load_baseline(folder, key)
    if as_json:
        echo(json.dumps(report, indent=1, default=_plain))
    else:
        print_table(report, baseline, echo)
    return report


def _plain(value):
    """numpy scalars as Python numbers, for json."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} {100 * k / n:3.0f}%" if n else "-"


def _moves(t: dict) -> str:
    """Winning moves of the won positions where the labels know the move's result (and how
    many moves the labels leave open)."""
    known = t["won"] - t["open_move"]
    return (_pct(t["winning_move"], known) if known else "-") + \
        (f" +{t['open_move']} open" if t["open_move"] else "")


def print_table(report: dict, baseline: dict | None, echo=print) -> None:
    has = {w: any(w in d for d in report["depths"].values()) for w in ("engine", "rave")}
    players = f", players {report['seconds']:g} s a move" if any(has.values()) else ""
    budget = (f"{report['nodes']:,} solver nodes{players}" if report["nodes"] is not None
              else f"{report['seconds']:g} s a move")
    labels = report["suite"]["labels_budget"]
    within = " or ".join(f"{n:,}" for n in labels)
    echo(f"endgame suite ({report['suite']['positions']} positions; these labelled within "
         f"{within} solver nodes)" if labels else "endgame suite (no labels yet)")
    threads = report.get("solver_threads", 1)
    if threads > 1:
        budget += f" (the solver in {threads} threads)"
    echo(f"budget: {budget}; {report['machine']}; {report['date']}")
    if report.get("network"):
        echo(f"network: {report['network']}")
    base = (f"baseline: the solver of {baseline['when']} ({baseline['machine']})"
            if baseline else "no baseline recorded at this budget")
    echo(base)
    head = (f"{'depth':>5} {'n':>4} {'labelled':>9} {'sums':>9} {'solver proven':>14} "
            f"{'baseline':>14}")
    if has["engine"]:
        head += f" {'net winning mv':>21} {'net value':>14} {'net search':>14}"
    if has["rave"]:
        head += f" {'rave winning mv':>21} {'rave search':>14}"
    echo(head)
    for d, s in report["depths"].items():
        # The baseline on the same positions, where it measured them.
        b = [baseline["proven"][r["id"]] for r in report["rows"]
             if baseline and str(r["depth"]) == d and r["id"] in baseline["proven"]]
        line = (f"{d:>5} {s['positions']:>4} {s['labelled']:>9} {s['sums']:>9} "
                f"{_pct(s['proven'], s['positions']):>14} "
                f"{_pct(sum(b), len(b)) if b else '-':>14}")
        if has["engine"]:
            e = s["engine"]
            line += (f" {_moves(e):>21} "
                     f"{_pct(e['value_right'], s['labelled']):>14} "
                     f"{_pct(e['search_right'], s['labelled']):>14}")
        if has["rave"]:
            r = s["rave"]
            line += (f" {_moves(r):>21} "
                     f"{_pct(r['search_right'], s['labelled']):>14}")
        echo(line)
        if s["disagree"]:
            echo(f"      WRONG: {s['disagree']} proofs at {d} contradict the labels")
    echo("sums: positions that split into two or more independent regions both colours can "
         "play in. winning mv: the move is proven winning, of the positions labelled won "
         "where the labels know the move's result (+ those where they leave it open); "
         "value/search: names the labelled winner, of the labelled positions.")


def run_cli(**kwargs) -> None:
    """The command's body: a suite problem is one line on stderr and exit code 2."""
    try:
        bench_endgame(**kwargs)
    except SuiteError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None

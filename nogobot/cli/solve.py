"""`nogobot solve`: the exact solver on one position, from an SGF file, a list of moves or an
empty board. The work is ``engine.solver``'s; this module reads the position, solves the root
moves one at a time (progress on stderr), and prints or writes JSON. Bad input gets one line on
stderr and exit code 2; Ctrl-C stops the search and prints what is known so far."""

from __future__ import annotations

import json
import re
import signal
import sys
import time

import click

from ..game import coords

COLOUR_WORDS = {1: "black", 2: "white"}
BAD_INPUT = 2
# Seconds of the first slice of a root move's search; each later slice doubles it. Between
# slices the progress line is written; the table keeps what the earlier slices proved.
FIRST_SLICE = 2.0


class BadInput(Exception):
    """The position cannot be read: one line for the user."""


def parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)(?:\s*[xX]\s*(\d+))?\s*", text)
    if not m:
        raise BadInput(f"not a board size: {text!r} (give N, e.g. --size 5)")
    rows, cols = int(m.group(1)), int(m.group(2) or m.group(1))
    if rows != cols:
        raise BadInput(f"board {rows}x{cols}: only square boards are supported")
    if not coords.MIN_SIZE <= rows <= coords.MAX_SIZE:
        raise BadInput(f"board size {rows} outside {coords.MIN_SIZE}..{coords.MAX_SIZE}")
    return rows


def parse_moves(board, text: str) -> None:
    """Play GTP-style moves on ``board``: "B E5 W D4 ..." (colours named) or "E5 D4 ..."
    (colours alternate, the side to move first); commas and semicolons count as spaces."""
    from ..game.board import IllegalMove

    tokens = text.replace(",", " ").replace(";", " ").split()
    colour = None
    for number, tok in enumerate(tokens, start=1):
        low = tok.lower()
        if low in ("b", "black", "w", "white"):
            colour = 1 if low[0] == "b" else 2
            continue
        try:
            p = coords.from_gtp(tok, board.size)
        except ValueError:
            raise BadInput(f"move {tok!r} (token {number}) is not a point on the "
                           f"{board.size}x{board.size} board") from None
        c = colour if colour is not None else board.to_move
        try:
            board.play(p, c)
        except IllegalMove:
            raise BadInput(f"move {tok!r} (token {number}) is illegal for "
                           f"{COLOUR_WORDS[c]}") from None
        colour = None


def read_position(sgf_file: str | None, move_number: int | None, moves: str | None,
                  size: str | None):
    """The position asked for (a ``Board``), or BadInput."""
    from ..game.board import Board

    if sgf_file is not None:
        from ..game import sgf

        try:
            rec = sgf.load(sgf_file)
        except OSError as e:
            raise BadInput(f"cannot read {sgf_file}: {e.strerror or e}") from None
        except (sgf.SgfError, ValueError) as e:
            raise BadInput(f"{sgf_file}: {e}") from None
        if move_number is not None and not 0 <= move_number <= len(rec.moves):
            raise BadInput(f"--move {move_number}: the game has {len(rec.moves)} moves")
        if size is not None and parse_size(size) != rec.size:
            raise BadInput(f"--size {size} but the SGF board is {rec.size}x{rec.size}")
        try:
            board = rec.board(move_number)
        except (sgf.SgfError, ValueError) as e:
            raise BadInput(f"{sgf_file}: {e}") from None
    else:
        if move_number is not None:
            raise BadInput("--move needs an SGF file")
        board = Board(parse_size(size) if size is not None else 9)
    if moves:
        parse_moves(board, moves)
    return board


def _format_nodes(n: int) -> str:
    return f"{n:,}"


def new_solver(tt_mb: float, rules: dict, threads: int = 1):
    """The command's solver, its table written through once: the operating system maps a
    large table's pages on first touch (zeroing them), which would otherwise be paid inside
    the search."""
    from ..engine.solver import Solver

    solver = Solver(1 << 16, tt_mb=tt_mb, threads=threads, **rules)
    solver.clear()
    return solver


def solve_position(board, *, all_moves: bool, max_seconds: float | None,
                   max_nodes: int | None, tt_mb: float, rules: dict, log,
                   solver=None) -> dict:
    """Solve ``board``'s root moves one by one (each symmetric class once), until one wins
    (or every one with ``all_moves``); returns the report as a dict. ``solver``: one made
    beforehand (``new_solver``), else one is made here with ``tt_mb`` and ``rules``."""
    from ..engine.solver import LOSS, UNKNOWN, WIN, root_orbits
    from ..engine.solver_kernels import request_stop

    t0 = time.perf_counter()
    size = board.size
    to_move = board.to_move
    report = {"size": size, "to_move": COLOUR_WORDS[to_move], "stones": int((board.stones > 0)
                                                                                .sum()),
              "result": "unknown", "winner": None, "move": None, "moves": {}, "nodes": 0,
              "seconds": 0.0, "stopped": None}
    legal = board.legal_moves()
    if legal.size == 0:
        report.update(result="loss", winner=COLOUR_WORDS[3 - to_move],
                      stopped="finished: the side to move has no legal move")
        return report
    if solver is None:
        solver = new_solver(tt_mb, rules)
    reps, rep_of = root_orbits(board, legal) if solver.rules.symmetry else (legal, {})
    # Try first the moves the opponent answers with the fewest replies (the solver's order).
    def replies(m):
        after = board.copy()
        after.play(int(m))
        return after.num_legal(), -after.num_legal(to_move)

    reps = sorted((int(m) for m in reps), key=replies)
    results: dict[int, int] = {}
    nodes = 0
    interrupted = False
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum, frame):
        nonlocal interrupted
        interrupted = True
        request_stop()

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        for i, m in enumerate(reps, start=1):
            name = coords.to_gtp(m, size)
            after = board.copy()
            after.play(m)
            first, slice_s, result = True, FIRST_SLICE, UNKNOWN
            started, nodes_before = time.perf_counter(), nodes
            while True:
                left = None if max_seconds is None else max_seconds - (time.perf_counter() - t0)
                left_nodes = None if max_nodes is None else max_nodes - nodes
                if (left is not None and left <= 0) or (left_nodes is not None
                                                         and left_nodes <= 0) or interrupted:
                    break
                limit = slice_s if left is None else min(slice_s, left)
                r = solver.solve(after, 10**15 if left_nodes is None else left_nodes,
                                 max_seconds=limit, same_generation=not first, images_of=board)
                first = False
                nodes += r.nodes
                result = -r.result  # for the side to move at the root
                if result != UNKNOWN or not r.timed_out:
                    break
                log(f"  [{i}/{len(reps)}] {name}: open after {_format_nodes(nodes)} nodes, "
                    f"{time.perf_counter() - t0:.1f} s")
                slice_s *= 2
            results[m] = result
            word = {WIN: "wins", LOSS: "loses", UNKNOWN: "unknown"}[result]
            log(f"[{i}/{len(reps)}] {name} {word} ({_format_nodes(nodes - nodes_before)} nodes, "
                f"{time.perf_counter() - started:.2f} s)")
            if interrupted or (result == UNKNOWN and (
                    (max_seconds is not None and time.perf_counter() - t0 >= max_seconds)
                    or (max_nodes is not None and nodes >= max_nodes))):
                break
            if result == WIN and not all_moves:
                break
    finally:
        signal.signal(signal.SIGINT, previous)
        request_stop(False)
    every = {}
    for m in (int(x) for x in legal):
        r = results.get(rep_of.get(m, m))
        every[coords.to_gtp(m, size)] = {WIN: "win", LOSS: "loss", UNKNOWN: "unknown",
                                          None: "unknown"}[r]
    wins = [m for m in reps if results.get(m) == WIN]
    if wins:
        report.update(result="win", winner=COLOUR_WORDS[to_move],
                      move=coords.to_gtp(wins[0], size))
    elif len(results) == len(reps) and all(r == LOSS for r in results.values()):
        report.update(result="loss", winner=COLOUR_WORDS[3 - to_move])
    report.update(moves=every, nodes=nodes, seconds=round(time.perf_counter() - t0, 3))
    if interrupted:
        report["stopped"] = "interrupted (Ctrl-C)"
    elif report["result"] == "unknown":
        report["stopped"] = "limit reached"
    return report


def print_report(report: dict, all_moves: bool) -> None:
    size, side = report["size"], report["to_move"]
    print(f"position: {size}x{size}, {side} to move, {report['stones']} stones")
    if report["result"] == "unknown":
        print(f"result: unknown ({report['stopped']})")
    else:
        how = "wins" if report["winner"] == side else "loses"
        print(f"result: {report['winner']} wins ({side}, to move, {how})")
    if report["move"]:
        print(f"winning move: {report['move']}")
    if report["stopped"] and report["result"] != "unknown" and report["stopped"] != "limit reached":
        print(f"note: {report['stopped']}")
    if all_moves and report["moves"]:
        for result in ("win", "loss", "unknown"):
            points = [p for p, r in report["moves"].items() if r == result]
            if points:
                print(f"{result}: {' '.join(points)}")
    line = f"nodes: {_format_nodes(report['nodes'])}  seconds: {report['seconds']:.2f}"
    if "startup_seconds" in report:
        line += (f"  (and {report['startup_seconds']:.2f} s before it, loading the solver "
                 f"and its table)")
    print(line)


RULE_NAMES = ("safe", "safe_children", "tt_work", "symmetry", "symmetry_keys")


@click.command("solve")
@click.argument("sgf_file", required=False)
@click.option("--move", "move_number", type=int, default=None,
              help="With an SGF file: the position after this many moves (default: the end).")
@click.option("--moves", default=None,
              help='Moves to play first, GTP style: "B E5 W D4 ..." or "E5 D4 ..." '
                   "(colours alternate).")
@click.option("--size", default=None, help="Board size for an empty board or --moves "
                                           "(default 9).")
@click.option("--all", "all_moves", is_flag=True, help="Solve every move, not only until a win.")
@click.option("--max-seconds", type=float, default=None, help="Stop after this long.")
@click.option("--max-nodes", type=int, default=None, help="Stop after this many nodes.")
@click.option("--tt-mb", type=float, default=256.0, show_default=True,
              help="Transposition table memory.")
@click.option("--off", "off", default="", help=f"Rules to switch off, comma-separated: "
                                               f"{', '.join(RULE_NAMES)}.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--threads", default=1, show_default=True, type=click.IntRange(min=1),
              help="Search the replies to each move with this many threads at once (one table).")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
def solve(sgf_file, move_number, moves, size, all_moves, max_seconds, max_nodes, tt_mb, off,
          as_json, threads, quiet) -> None:
    """Solve a NoGo position exactly: who wins, a winning move, nodes and seconds."""
    def fail(message: str) -> None:
        print(f"nogobot solve: {message}", file=sys.stderr)
        sys.exit(BAD_INPUT)

    rules = {}
    for name in filter(None, (x.strip() for x in off.split(","))):
        if name not in RULE_NAMES:
            fail(f"--off {name}: not a rule ({', '.join(RULE_NAMES)})")
        rules[name] = False
    if max_seconds is not None and max_seconds <= 0:
        fail("--max-seconds must be positive")
    if max_nodes is not None and max_nodes <= 0:
        fail("--max-nodes must be positive")
    if tt_mb <= 0:
        fail("--tt-mb must be positive")
    try:
        board = read_position(sgf_file, move_number, moves, size)
    except BadInput as e:
        fail(str(e))
    log = (lambda m: None) if quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    from ..tools import warmup

    # The compiled kernels are loaded (or compiled, on a first run) and the table is mapped
    # before the search's clock starts; the report gives that time apart.
    t0 = time.perf_counter()
    warmup.load("solver", log)
    solver = new_solver(tt_mb, rules, threads)
    startup = time.perf_counter() - t0
    report = solve_position(board, all_moves=all_moves, max_seconds=max_seconds,
                            max_nodes=max_nodes, tt_mb=tt_mb, rules=rules, log=log,
                            solver=solver)
    report["startup_seconds"] = round(startup, 3)
    if as_json:
        print(json.dumps(report))
    else:
        print_report(report, all_moves)


COMMANDS = [solve]

"""The NoGo rollout policy (playout.py) and the rave agent (agents/rave.py).

Checks: policy rollouts are complete legal games (their moves replayed through Board are legal,
end with the side to move stuck, and give the winner the rollout returned) and leave the state
arrays untouched; ``rollout_value`` on positions with a known winner; the agent plays the only
move that wins at once, avoids the moves that let the opponent win at once, keeps the visits of
the subtree it reuses, leaves the board untouched and answers ``genmove`` through GTP.
"""

import sys
import time

import numpy as np
import pytest
from numba import njit
from test_agents_search import AVOID_POSITION, WIN_POSITIONS

from nogobot.agents.rave import RaveAgent
from nogobot.engine.playout import (
    S_EYEISH,
    S_NEAR_EYE,
    _below,
    policy_rollout,
    rollout_scratch,
    rollout_value,
)
from nogobot.game import coords
from nogobot.game.board import BLACK, WHITE, Board


@njit(cache=True)
def _seeded_rollout(stones, root, nxt, libs, legal, meta, nbr, zob, last_move, scratch, seed):
    np.random.seed(seed)
    return policy_rollout(stones, root, nxt, libs, legal, meta, nbr, zob, last_move, scratch)


def _random_position(size: int, seed: int) -> Board:
    rng = np.random.default_rng(seed)
    board = Board(size)
    for _ in range(int(rng.integers(0, size * size // 2))):
        legal = board.legal_moves()
        if len(legal) == 0:
            break
        board.play(int(rng.choice(legal)))
    return board


@pytest.mark.parametrize("size", [3, 5, 7, 9, 11])
def test_rollouts_are_legal_complete_games(size):
    for seed in range(40):
        board = _random_position(size, seed)
        before = [a.copy() for a in board.arrays()]
        scratch = rollout_scratch(size)
        winner = _seeded_rollout(*board.arrays(), board.geo.nbr, board.geo.zobrist,
                                 board.last_move, scratch, seed)
        assert all(np.array_equal(a, b) for a, b in zip(before, board.arrays()))
        moves = scratch[10][:scratch[7][0]]
        for p in moves:
            board.play(int(p))  # raises IllegalMove on an illegal rollout move
        assert board.is_terminal()
        assert winner == board.winner()
        assert np.array_equal(scratch[0], board.stones)  # the final position, for AMAF
        _assert_eyeish_points_kept(board, scratch)


def _assert_eyeish_points_kept(board: Board, scratch: tuple) -> None:
    """The rollout's incremental eyeish flags and near_eye counts match the final position
    (the local answer skips points with no eyeish neighbour, so a stale count changes play)."""
    eyeish, near_eye = scratch[S_EYEISH], scratch[S_NEAR_EYE]
    nbr = board.geo.nbr
    stones = board.stones
    for q in range(stones.shape[0]):
        sides = [t for t in nbr[q] if t >= 0]
        edges = 4 - len(sides)
        if stones[q] != 0:
            assert eyeish[q] == 0
            continue
        if any(stones[t] == 0 for t in sides):
            enclosed = max(edges + sum(stones[t] == c for t in sides) for c in (1, 2))
            assert eyeish[q] == (enclosed >= 3), q
    for p in range(stones.shape[0]):
        assert near_eye[p] == sum(eyeish[t] for t in nbr[p] if t >= 0), p



def test_a_rollout_follows_the_callers_seed():
    # The rollouts draw their generator's seed from numba's np.random: a caller's seed fixes
    # the game, another seed gives other games.
    board = _random_position(9, 3)
    args = (*board.arrays(), board.geo.nbr, board.geo.zobrist, board.last_move)
    games = []
    for seed in (5, 5, 6, 7, 8):
        scratch = rollout_scratch(9)
        _seeded_rollout(*args, scratch, seed)
        games.append(tuple(scratch[10][:scratch[7][0]]))
    assert games[0] == games[1]
    assert len(set(games[1:])) == 4


@njit(cache=True)
def _draw_counts(n, draws, seed):
    rng = np.full(1, seed, dtype=np.uint64)
    counts = np.zeros(n, dtype=np.int64)
    for _ in range(draws):
        counts[_below(rng, n)] += 1
    return counts


@pytest.mark.parametrize("n", [1, 2, 7, 81, 361])
def test_the_rollout_generator_draws_uniformly(n):
    draws = 2000 * n
    counts = _draw_counts(n, draws, 12345)
    assert counts.sum() == draws
    # Each count is binomial(draws, 1/n): 6 standard deviations is a bound no fair generator
    # crosses, and a biased or stuck one (a value never drawn, one drawn twice as often) does.
    sd = np.sqrt(draws * (1 / n) * (1 - 1 / n))
    assert np.all(np.abs(counts - draws / n) <= 6 * sd + 1e-9)

def test_rollout_value_known_winners():
    # No point is legal for both. Black's block has three liberties, so it can fill two of them;
    # white's has two and can fill one. Whoever moves first, white is stuck first.
    board = Board.from_ascii("""
        . X O . O
        X X O O O
        . X O O O
        X X O O O
        . X O O .
        """, to_move=BLACK)
    assert not np.any(board.legal[BLACK] & board.legal[WHITE])
    assert board.num_legal(BLACK) == 3 and board.num_legal(WHITE) == 2
    assert rollout_value(board, 50, seed=1) == 1.0
    board.to_move = WHITE
    assert rollout_value(board, 50, seed=1) == -1.0
    stuck = Board.from_ascii("""
        . X O
        X X O
        O O .
        """, to_move=WHITE)
    assert stuck.num_legal() == 0 and rollout_value(stuck, 5, seed=2) == -1.0


@pytest.mark.parametrize("text,to_move,answer", WIN_POSITIONS)
def test_plays_the_win_at_once(text, to_move, answer):
    board = Board.from_ascii(text, to_move=to_move)
    agent = RaveAgent(playouts=200, seed=3, warmup=False)
    assert coords.to_gtp(agent.select_move(board), board.size) == answer
    assert agent.last_result.reason == "win-at-once"


def test_avoids_the_immediate_loss():
    text, to_move, answer = AVOID_POSITION
    board = Board.from_ascii(text, to_move=to_move)
    before = board.to_ascii()
    agent = RaveAgent(playouts=2000, seed=5, warmup=False)
    assert coords.to_gtp(agent.select_move(board), board.size) == answer
    assert board.to_ascii() == before


def test_tree_reuse_keeps_visits():
    board = Board(7)
    agent = RaveAgent(playouts=3000, seed=11, warmup=False)
    move = agent.select_move(board)
    tree = agent._trees[0]
    # The opponent's most visited answer to our move, read from the tree.
    move_, first, nchild, _, _, visits = tree.arrays[:6]
    f, k = first[0], nchild[0]
    ours = f + int(np.flatnonzero(move_[f:f + k] == move)[0])
    f2, k2 = first[ours], nchild[ours]
    assert k2 > 0
    reply_node = f2 + int(np.argmax(visits[f2:f2 + k2]))
    kept = int(visits[reply_node])
    board.play(move)
    board.play(int(move_[reply_node]))
    agent.select_move(board)
    assert kept > 1 and agent.last_result.reused == kept
    assert agent.last_result.simulations == 3000


def test_two_threads_and_time_limit():
    board = Board(7)
    agent = RaveAgent(seconds=0.3, threads=2, seed=1, warmup=False)
    p = agent.select_move(board)
    assert board.is_legal(p)
    assert agent.last_result.simulations > 0 and len(agent._trees) == 2


def test_gtp_genmove_through_the_client():
    from nogobot.tournament.gtp_client import GtpProcess

    gtp = GtpProcess([sys.executable, "-m", "nogobot", "agent", "rave", "--playouts", "200",
                      "--seed", "1", "--quiet"], name="rave")
    try:
        for cmd in ("boardsize 7", "clear_board", "play b D4"):
            assert gtp.command(cmd, timeout=120) == (True, "", pytest.approx(0, abs=120))
        ok, answer, _ = gtp.command("genmove w", timeout=120)
        assert ok
        board = Board(7)
        board.play(coords.from_gtp("D4", 7))
        assert board.is_legal(coords.from_gtp(answer, 7))
    finally:
        gtp.close()


def test_gtp_pondering_and_its_option():
    """``nogobot agent rave --ponder`` thinks between its moves and still answers in time; the
    option is refused for agents that cannot ponder."""
    from click.testing import CliRunner

    from nogobot.cli import main
    from nogobot.tournament.gtp_client import GtpProcess

    result = CliRunner().invoke(main, ["agent", "greedy", "--ponder"])
    assert result.exit_code != 0 and "only rave" in result.output
    gtp = GtpProcess([sys.executable, "-m", "nogobot", "agent", "rave", "--seconds", "0.3",
                      "--ponder", "--seed", "1", "--quiet"], name="rave")
    try:
        board = Board(7)
        for cmd in ("boardsize 7", "clear_board"):
            assert gtp.command(cmd, timeout=120)[0]
        for _ in range(3):
            ok, answer, _ = gtp.command("genmove b", timeout=120)
            assert ok
            board.play(coords.from_gtp(answer, 7))
            time.sleep(0.3)  # rave ponders on white's time
            reply = int(board.legal_moves()[0])
            assert gtp.command(f"play w {coords.to_gtp(reply, 7)}", timeout=30)[0]
            board.play(reply)
    finally:
        gtp.close()


@pytest.mark.parametrize("threads", [1, 2])
def test_the_endgame_solver_plays_proven_wins(threads):
    """Within the solver's zone rave answers from the exact solver: whenever the position is
    a win the solver proves within the agent's node budget (two nodes a simulation), its move
    wins: the position after it is proven lost for the opponent. The solver searches in the
    agent's threads."""
    from nogobot.engine.solver import LOSS, WIN, solve

    checked = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        board = Board(7)  # 49 points: 12-20 empty, small enough to solve outright
        while int((board.stones == 0).sum()) > 12 + seed % 9 and board.num_legal() > 0:
            board.play(int(rng.choice(board.legal_moves())))
        if board.num_legal() < 2 or solve(board, 50_000).result != WIN:
            continue
        agent = RaveAgent(playouts=50_000, seed=seed, warmup=False,  # 100,000 solver nodes
                          threads=threads)
        move = agent.select_move(board)
        assert agent.last_result.reason in ("solver: win", "win-at-once")
        if agent.last_result.reason == "solver: win":
            assert agent._solver.threads == threads
        after = board.copy()
        after.play(int(move))
        assert after.num_legal() == 0 or solve(after, 2_000_000).result == LOSS
        checked += 1
    assert checked >= 10


def test_without_the_solver_rave_searches_to_the_end():
    board = _random_position(7, 4)
    while int((board.stones == 0).sum()) > 20 and board.num_legal() > 0:
        board.play(int(board.legal_moves()[0]))
    agent = RaveAgent(playouts=500, seed=1, warmup=False, solver=False)
    assert agent.solver_zones.exact == 0
    agent.select_move(board)
    assert not agent.last_result.reason.startswith("solver")


def test_settings_reach_the_agent_and_bad_ones_are_named():
    from nogobot.agents.rave_kernels import P_C_UCT, P_EXPAND, P_PRIOR_N
    from nogobot.agents.registry import make_agent, parse_rave_settings
    settings = parse_rave_settings(["c_uct=0.1", "p_local=0", "solver=off", "expand_visits=4",
                                    "prior_visits=30"])
    assert settings == {"c_uct": 0.1, "p_local": 0.0, "solver": False, "expand_visits": 4,
                        "prior_visits": 30.0}
    agent = make_agent("rave", playouts=100, seed=1, settings=settings)
    assert agent.params[P_C_UCT] == 0.1 and agent.params[P_EXPAND] == 4
    assert agent.params[P_PRIOR_N] == 30
    assert agent.policy == {"p_local": 0.0} and agent.solver_zones.exact == 0
    clocked = make_agent("rave", playouts=100, seed=1, settings=parse_rave_settings(
        ["try_floor_seconds=1.5", "solver_keep_share=0.25", "reach_floor_seconds=0.8"]))
    p = clocked.time_policy
    assert (p.try_floor_seconds, p.solver_keep_share, p.reach_floor_seconds) == (1.5, 0.25, 0.8)
    assert p.opening_weight == agent.time_policy.opening_weight  # rave's own, kept
    from nogobot.agents.rave import RAVE_CLOCK
    assert all(getattr(agent.time_policy, k) == v for k, v in RAVE_CLOCK.items())  # rave's own
    assert make_agent("rave", playouts=100, seed=1, settings=parse_rave_settings(
        ["reserve=0.03"])).time_policy.reserve == 0.03
    for bad in ("c_uct", "nope=1", "expand_visits=2.5", "solver=maybe", "try_floor_seconds=x"):
        with pytest.raises(ValueError, match="bad rave setting"):
            parse_rave_settings([bad])



def test_the_agent_commands_help_names_every_rave_setting():
    """``nogobot agent --set``'s help names every key the parser takes, and only those."""
    from click.testing import CliRunner

    from nogobot.agents.registry import RAVE_SETTINGS
    from nogobot.cli.engine import agent_cmd

    option = next(p for p in agent_cmd.params if p.name == "settings")
    listed = option.help.split("(repeatable):", 1)[1].replace("(0/1)", "")
    named = {k.strip(" .") for k in listed.split(",")}
    assert named == set(RAVE_SETTINGS)
    shown = CliRunner().invoke(agent_cmd, ["--help"], terminal_width=200).output
    assert all(key in shown for key in RAVE_SETTINGS)

"""The exact endgame solver agrees with a brute-force minimax (no table, no cuts, no ordering)
on thousands of random positions of 4×4 and 5×5 boards, and knows the small solved boards."""

import numpy as np
import pytest
from numba import njit

from nogobot.engine.solver import (
    LOSS,
    UNKNOWN,
    WIN,
    Solver,
    image_perms,
    search_stack,
    solve,
    solve_root,
)
from nogobot.engine.solver_kernels import C_HISTORY, STATS_LEN
from nogobot.game.board import BLACK, TO_MOVE, WHITE, Board, _play


@njit(cache=True)
def brute_force(stones, root, nxt, libs, legal, meta, nbr, zob):
    """+1 if the side to move wins, -1 if it loses; visits every move of every node."""
    c = meta[TO_MOVE]
    best = -1
    for p in range(stones.shape[0]):
        if legal[c, p]:
            s, r, n, l, lg, m = (stones.copy(), root.copy(), nxt.copy(), libs.copy(),
                                 legal.copy(), meta.copy())
            _play(s, r, n, l, lg, m, nbr, zob, p, c)
            v = -brute_force(s, r, n, l, lg, m, nbr, zob)
            best = max(best, v)
    return best


def random_position(size, rng, max_empty_legal):
    """A random game truncated once the side to move has at most max_empty_legal moves."""
    b = Board(size)
    while b.num_legal() > max_empty_legal:
        b.play(int(rng.choice(b.legal_moves())))
    return b


@pytest.mark.slow  # 1,500 brute-forced positions per size: 20-25 s each on a loaded box
@pytest.mark.parametrize("size,count,legal_cap", [(4, 1500, 7), (5, 1500, 7)])
def test_solver_matches_brute_force(size, count, legal_cap):
    rng = np.random.default_rng(size)
    solver = Solver(1 << 16)
    wins = 0
    for _ in range(count):
        b = random_position(size, rng, legal_cap)
        expected = brute_force(*b.arrays(), b.geo.nbr, b.geo.zobrist)
        got = solver.solve(b, 10_000_000)
        assert got.result == expected, f"\n{b}\nto move {b.to_move}"
        if got.result == WIN:
            wins += 1
            # The move it names really wins: after it, the opponent is lost.
            b.play(got.move)
            assert brute_force(*b.arrays(), b.geo.nbr, b.geo.zobrist) == -1
    assert 0 < wins < count  # both outcomes occur, so the comparison means something


def test_small_boards_known_results():
    # 2x2: after any first move and any reply black has a move that leaves white stuck.
    assert solve(Board(2), 10_000).result == WIN
    assert solve(Board(3), 100_000).result == WIN  # 3x3 is a first-player win
    b = Board(3)
    assert brute_force(*b.arrays(), b.geo.nbr, b.geo.zobrist) == WIN


def test_budget_gives_unknown():
    b = Board(9)
    r = Solver(1 << 10).solve(b, 50)
    assert r.result == UNKNOWN and r.move == -1 and r.nodes <= 50 + 1


def lost_positions(solver, seed, tries, legal_cap, min_legal):
    """(board, its SolveResult) for each of ``tries`` random 5x5 positions that ``solver``
    proves lost for the side to move, with at least ``min_legal`` moves."""
    rng = np.random.default_rng(seed)
    for _ in range(tries):
        b = random_position(5, rng, legal_cap)
        r = solver.solve(b, 1_000_000)
        if r.result == LOSS and b.num_legal() >= min_legal:
            yield b, r


def test_lost_position_picks_a_legal_move():
    seen = 0
    for b, r in lost_positions(Solver(1 << 16), 3, 200, 6, 1):
        assert b.is_legal(r.move)
        seen += 1
    assert seen > 0


def test_resist_leaves_the_opponent_the_smallest_share_of_winning_replies():
    """In lost positions, ``resist`` names a losing move whose count of winning replies is
    exact (brute force) and whose share of them is the smallest of all moves."""
    solver = Solver(1 << 16)
    checked = 0
    for b, r in lost_positions(solver, 11, 300, 7, 2):
        shares = {}
        for m in b.legal_moves():
            after = b.copy()
            after.play(int(m))
            wins = 0
            for reply in after.legal_moves():
                position = after.copy()
                position.play(int(reply))
                wins += brute_force(*position.arrays(), position.geo.nbr,
                                    position.geo.zobrist) == -1
            shares[int(m)] = (wins, after.num_legal())
        got = solver.resist(b, r.move_nodes, 10_000_000)
        assert got is not None
        move, wins, replies = got
        assert shares[move] == (wins, replies)
        assert wins / replies == min(w / n for w, n in shares.values())
        checked += 1
    assert checked >= 20


def test_resist_gives_up_within_its_budget():
    b, r = next(lost_positions(Solver(1 << 16), 5, 300, 7, 3))
    assert Solver(1 << 16).resist(b, r.move_nodes, 1) is None


def test_solver_survives_loading_from_numba_cache():
    """Recursive njit functions can segfault when loaded from numba's on-disk cache (numba
    #6061, #6713). Run the solver in two fresh processes: the second loads it from the cache."""
    import subprocess
    import sys

    code = ("import numpy as np\n"
            "from nogobot.game.board import Board\n"
            "from nogobot.engine.solver import solve\n"
            "rng = np.random.default_rng(4)\n"
            "b = Board(9)\n"
            "while 81 - b.ply > 16: b.play(int(rng.choice(b.legal_moves())))\n"
            "print(solve(b, 200_000).result)\n")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                           timeout=300) for _ in range(2)]
    for res in outs:
        assert res.returncode == 0, res.stderr[-2000:]
    assert outs[0].stdout == outs[1].stdout and outs[0].stdout.strip() in ("1", "-1")


def test_root_order_by_priors_agrees_with_the_solvers_own_order():
    """The root's order changes which moves are tried first, never the answer: with priors
    that put the moves in a random order the result, and the truth of the named move, stand."""
    rng = np.random.default_rng(11)
    wins = 0
    for _ in range(150):
        b = random_position(5, rng, 7)
        expected = brute_force(*b.arrays(), b.geo.nbr, b.geo.zobrist)
        priors = rng.random(b.geo.area)
        for got in (Solver(1 << 12).solve(b, 1_000_000),
                    Solver(1 << 12).solve(b, 1_000_000, priors)):
            assert got.result == expected
            if got.result == WIN:
                after = b.copy()
                after.play(got.move)
                assert brute_force(*after.arrays(), after.geo.nbr, after.geo.zobrist) == LOSS
        wins += expected == WIN
    assert 0 < wins < 150


def test_a_move_that_leaves_no_reply_is_found_without_a_search():
    """Where some move leaves the opponent no legal move, the ordering pass sees it: the
    answer is that move, a win, for one node."""
    rng = np.random.default_rng(12)
    found = 0
    while found < 20:
        b = random_position(5, rng, 4)
        finishing = []
        for m in b.legal_moves():
            after = b.copy()
            after.play(int(m))
            if after.num_legal() == 0:
                finishing.append(int(m))
        if not finishing:
            continue
        got = Solver(1 << 10).solve(b, 1_000)
        assert got.result == WIN and got.move in finishing and got.nodes == 1
        found += 1


def test_a_per_move_cap_lets_a_later_cheap_win_be_seen():
    """``solve_root`` with a per-move cap stops a hard first move at its share, so a cheap win
    later in the order is found within a budget that the hard move alone would use up (what
    ``Solver.solve``'s first pass relies on); without the cap the same budget finds nothing."""
    rng = np.random.default_rng(13)
    checked = 0
    for _ in range(300):
        b = random_position(7, rng, 14)
        cost = {}
        for m in b.legal_moves():
            after = b.copy()
            after.play(int(m))
            r = Solver(1 << 14).solve(after, 5_000_000)
            cost[int(m)] = (-r.result, r.nodes)  # the result for b's side to move
        wins = sorted((n, m) for m, (r, n) in cost.items() if r == WIN)
        hard = sorted((n, m) for m, (r, n) in cost.items() if n > 8 * (wins[0][0] + 50)) \
            if wins else []
        if not hard:
            continue
        (win_cost, win), (hard_cost, first) = wins[0], hard[-1]
        moves = np.array([first, win], np.int64)
        g = b.geo
        for per_move, expected in ((2 * win_cost + 100, WIN), (hard_cost // 2, UNKNOWN)):
            s = Solver(1 << 14)
            results, nodes = np.zeros(2, np.int64), np.zeros(2, np.int64)
            budget = np.array([hard_cost // 2], np.int64)
            cfg = s.kernel_config(b)  # sizes s.history for the board
            sym = image_perms(b)
            got = solve_root(*search_stack(b, sym), g.nbr, g.zobrist, s.keys, s.vals, s.work,
                             s.gen, s.pkeys, s.pphi, s.pdelta, moves, budget, per_move, results,
                             nodes, s.history, sym, cfg, 0.0, np.zeros(STATS_LEN, np.int64))
            assert got == expected
            assert results[0] == UNKNOWN and nodes.sum() <= hard_cost // 2 + 2
        checked += 1
        if checked == 3:
            break
    assert checked > 0


def test_a_time_limit_stops_the_search_inside_the_kernel():
    """``max_seconds`` is read inside the search (every ``clock_every`` nodes): an unsolvable
    budget of nodes stops at the time limit, reports UNKNOWN and the nodes it did spend."""
    s = Solver(1 << 16)
    s.solve(random_position(5, np.random.default_rng(1), 6), 1000)  # compiled before timing
    b = Board(7)
    got = s.solve(b, 10**12, max_seconds=0.3)
    assert got.result == UNKNOWN and got.timed_out
    assert 0 < got.nodes < 10**9
    assert got.seconds < 3.0  # a loaded 2-core box: far from a run without the limit
    assert not s.solve(Board(3), 10**6, max_seconds=60).timed_out


def test_table_sized_by_memory_and_kept_by_work():
    """``tt_mb`` bounds the table's bytes; in a full bucket a new entry replaces the one of
    least work, and an entry of an earlier generation before any of this one."""
    from nogobot.engine.solver_kernels import C_GEN, tt_get, tt_put

    s = Solver(tt_mb=1)
    assert s.keys.nbytes + s.vals.nbytes + s.work.nbytes + s.gen.nbytes <= 1 << 20
    s = Solver(tt_mb=1, dfpn=True)
    assert sum(a.nbytes for a in (s.keys, s.vals, s.work, s.gen, s.pkeys, s.pphi,
                                  s.pdelta)) <= 1 << 20
    s = Solver(16)
    cfg = s.kernel_config(Board(3))
    n = s.keys.size
    a, b, c = 2 * n + 4, 4 * n + 4, 6 * n + 4  # one bucket (slots 4 and 5)
    tt_put(s.keys, s.vals, s.work, s.gen, cfg, a, WIN, 10_000)
    tt_put(s.keys, s.vals, s.work, s.gen, cfg, b, LOSS, 10)
    tt_put(s.keys, s.vals, s.work, s.gen, cfg, c, WIN, 100)  # evicts b, the least work
    assert (tt_get(s.keys, s.vals, a), tt_get(s.keys, s.vals, b),
            tt_get(s.keys, s.vals, c)) == (WIN, 0, WIN)
    cfg[C_GEN] += 1  # a later call: the old entries go first, whatever their work
    tt_put(s.keys, s.vals, s.work, s.gen, cfg, b, LOSS, 1)
    assert tt_get(s.keys, s.vals, b) == LOSS
    s.clear()
    assert tt_get(s.keys, s.vals, b) == 0


def test_a_torn_table_slot_reads_as_empty():
    """Threads share the table without locks: a slot whose key one write left and whose value
    another left (a read between the two stores of a write) fails its seal and reads as empty,
    never as the other position's value."""
    from nogobot.engine.solver_kernels import tt_get, tt_put

    s = Solver(16)
    cfg = s.kernel_config(Board(3))
    n = s.keys.size
    a, b = 2 * n + 4, 4 * n + 4  # one bucket
    tt_put(s.keys, s.vals, s.work, s.gen, cfg, a, WIN, 10)
    assert tt_get(s.keys, s.vals, a) == WIN
    slot = int(np.flatnonzero(s.vals)[0])
    s.vals[slot] = LOSS  # b's value written over a's, a's key still there
    assert tt_get(s.keys, s.vals, a) == 0 and tt_get(s.keys, s.vals, b) == 0
    tt_put(s.keys, s.vals, s.work, s.gen, cfg, b, LOSS, 10)
    assert tt_get(s.keys, s.vals, b) == LOSS and tt_get(s.keys, s.vals, a) == 0


def test_threads_share_the_root_moves_and_stop_at_the_first_win():
    """With ``threads`` the root moves are searched at once: the same verdicts and proven
    moves as one thread on 9x9 endgames, the budget kept, and a win stops the other threads;
    df-pn, whose table has locks of none, refuses them."""
    rng = np.random.default_rng(11)
    checked = wins = 0
    while checked < 6:
        b = Board(9)
        while 81 - b.ply > 22 and not b.is_terminal():
            b.play(int(rng.choice(b.legal_moves())))
        if b.is_terminal() or b.num_legal() < 3:
            continue
        one = Solver(1 << 16).solve(b, 2_000_000)
        two = Solver(1 << 16, threads=2).solve(b, 2_000_000)
        assert one.result != UNKNOWN and two.result == one.result
        assert two.nodes <= 2_000_000
        for m, r in two.move_results.items():
            assert r == UNKNOWN or one.move_results.get(m, r) in (r, UNKNOWN)
        if two.result == WIN:
            wins += 1
            assert two.move_results[two.move] == WIN
        else:
            assert all(r == LOSS for r in two.move_results.values())
        checked += 1
    assert 0 < wins < checked
    # The other threads stop through their own flag, read with the clock.
    from nogobot.engine.solver_kernels import halt_thread

    b = Board(9)
    while 81 - b.ply > 40:
        b.play(int(rng.choice(b.legal_moves())))
    halt_thread([True])
    try:
        stopped = Solver(1 << 16).solve(b, 10**9, max_seconds=60)
    finally:
        halt_thread(None)
    assert stopped.result == UNKNOWN and stopped.timed_out and stopped.nodes <= 2048
    with pytest.raises(ValueError, match="df-pn"):
        Solver(16, threads=2, dfpn=True)
    with pytest.raises(ValueError, match="threads"):
        Solver(16, threads=0)


def test_safe_counts_and_move_bounds_on_a_drawn_position():
    """Black's wall with three eyes in one group (two safe moves); white's wall with one eye
    (none: filling it is its last liberty in the end) and a two-point region black may enter
    once, never twice."""
    from nogobot.engine.solver_static import move_bounds, safe_counts

    b = Board.from_ascii("""
        . X . X .
        X X X X X
        X . X . X
        O O O O O
        O . . O .
        """, to_move=BLACK)
    scratch = np.full(4 * b.geo.area + 1, -1, np.int16)
    sb, sw = safe_counts(b.stones, b.root, b.geo.nbr, scratch)
    assert (sb, sw) == (3 - 1, 1 - 1)  # black: A5, C5, E5 in one group; white: E1
    area = b.geo.area  # the parts read before they are written are left as they were found
    assert np.all(scratch[:area] == -1)
    mb, mw = move_bounds(b.stones, b.geo.nbr, b.legal, scratch)
    assert np.all(scratch[:area] == -1) and np.all(scratch[2 * area:3 * area] == -1)
    # Black may play its eyes, B3, D3 and one of B1/C1 (a region touching no black stone);
    # white every point it may play now (each region touches white).
    assert mb == b.num_legal(BLACK) - 1 and mw == b.num_legal(WHITE)


def test_the_rules_reach_the_kernels():
    """Each switch changes the search (else the differential tests would test one rule)."""
    rng = np.random.default_rng(21)
    seen = {"safe": 0, "symmetry": 0}
    for _ in range(60):
        b = random_position(5, rng, 12)
        on, off = Solver(1 << 14).solve(b, 10**6), Solver(1 << 14, safe=False,
                                                           safe_children=False).solve(b, 10**6)
        seen["safe"] += on.safe_cuts > 0 and off.safe_cuts == 0
    sym = Solver(1 << 16, symmetry_keys=False).solve(Board(4), 10**7)
    flat = Solver(1 << 16, symmetry=False, symmetry_keys=False).solve(Board(4), 10**7)
    assert sym.result == flat.result == LOSS and sym.nodes < flat.nodes
    assert set(sym.move_results) == set(range(16)) and all(
        r == LOSS for r in sym.move_results.values())
    # Symmetric positions below the root share entries: fewer nodes again, and the root's
    # symmetric moves are then found in the table.
    keys = Solver(1 << 16).solve(Board(4), 10**7)
    assert keys.result == LOSS and keys.nodes < sym.nodes
    assert Solver(1 << 16, symmetry=False).solve(Board(4), 10**7).nodes <= keys.nodes
    assert seen["safe"] > 0


def test_history_orders_small_boards_and_stays_off_on_9x9():
    """The history heuristic is on by default on boards of at most HISTORY_MAX_POINTS points,
    where it saves nodes (a 4x4 opening here), and off on 9x9, where it costs them."""
    b = Board(4)
    b.play(1)
    auto, on, off = (Solver(1 << 18, **kw).solve(b, 10**7)
                     for kw in ({}, {"history": True}, {"history": False}))
    assert auto.result == on.result == off.result == WIN
    assert auto.nodes == on.nodes < off.nodes
    s = Solver(1 << 14)
    assert s.kernel_config(Board(9))[C_HISTORY] == 0 and s.history.shape == (3, 81)
    assert Solver(1 << 14, history=True).kernel_config(Board(9))[C_HISTORY] == 1
    assert s.kernel_config(Board(5))[C_HISTORY] == 1 and s.history.shape == (3, 25)


def test_image_hash_is_the_hash_of_the_image():
    """The images' hashes the search starts from are the hashes the rules kernels give the
    image positions themselves (so symmetric positions meet in the table)."""
    from solver_reference import board_from_stones, dihedral, random_position

    from nogobot.engine.solver import image_hash

    rng = np.random.default_rng(58)
    for size, empty in ((4, 9), (5, 12), (9, 30)):
        b = random_position(size, rng, empty)
        for to_move in (BLACK, WHITE):
            b.to_move = to_move
            for perm in dihedral(size):
                stones = np.zeros_like(b.stones)
                stones[perm] = b.stones
                image = board_from_stones(stones, size, to_move)
                assert image_hash(b, perm) == int(image.meta[1])


def test_images_follow_each_stone():
    """Along random lines, the kernels' image hashes after each stone are the images' own
    hashes, and a child's key computed without playing it is the key after playing it."""
    from solver_reference import dihedral

    from nogobot.engine.solver import image_hash
    from nogobot.engine.solver_kernels import IMAGES, child_key, node_key, play_images

    rng = np.random.default_rng(59)
    for size in (3, 4, 5, 9):
        sym = np.array(dihedral(size)[1:], np.int64)  # rotations and reflections alike
        for to_move in (BLACK, WHITE):
            b = Board(size)
            b.to_move = to_move
            meta = search_stack(b, sym)[5][0].copy()
            zob = b.geo.zobrist
            while b.num_legal() > 0:
                p, c = int(rng.choice(b.legal_moves())), b.to_move
                expected = child_key(meta, sym, zob, p, c)
                b.play(p)
                meta[:IMAGES] = b.meta
                play_images(meta, sym, zob, p, c)
                images = [image_hash(b, perm) for perm in sym]
                assert list(meta[IMAGES:IMAGES + len(sym)]) == images
                assert expected == node_key(meta, sym) == min(int(b.meta[1]), *images)


def test_eye_counts_follow_each_stone():
    """Along random lines on several sizes, the eyes ``eyes_after`` reads from the position
    before each move (as the search keeps them in a level's meta row) are those counted from
    scratch after it, and the static rule with its cheap bounds first gives what the full rule
    (safe moves against most moves) gives."""
    from nogobot.engine.solver_kernels import EYES, IMAGES, eyes_after
    from nogobot.engine.solver_static import (
        LOSS,
        UNKNOWN,
        WIN,
        eye_counts,
        move_bounds,
        safe_counts,
        static_value,
    )

    rng = np.random.default_rng(61)
    fired = 0
    for size in (3, 4, 5, 7, 9):
        for _ in range(6 if size < 9 else 20):
            b = Board(size)
            sym = np.zeros((0, b.geo.area), np.int64)
            meta = search_stack(b, sym)[5][0].copy()
            scratch = np.full(4 * b.geo.area + 1, -1, np.int16)
            while b.num_legal() > 0:
                p, c = int(rng.choice(b.legal_moves())), b.to_move
                eyes = eyes_after(meta, b.stones, b.geo.nbr, p, c)
                b.play(p)
                meta[:IMAGES] = b.meta
                meta[EYES + c - 1] = eyes
                assert tuple(meta[EYES:EYES + 2]) == eye_counts(b.stones, b.geo.nbr)
                sb, sw = safe_counts(b.stones, b.root, b.geo.nbr, scratch)
                mb, mw = move_bounds(b.stones, b.geo.nbr, b.legal, scratch)
                me, opp = b.to_move, 3 - b.to_move
                s_me, s_opp = (sb, sw) if me == BLACK else (sw, sb)
                m_me, m_opp = (mb, mw) if me == BLACK else (mw, mb)
                full = UNKNOWN if sb == sw == 0 else (
                    WIN if s_me > m_opp else LOSS if s_opp >= m_me else UNKNOWN)
                assert static_value(b.stones, b.root, b.legal, meta, *meta[EYES:EYES + 2],
                                    b.geo.nbr, scratch) == full
                assert m_me >= (b.num_legal(me) + 1) // 2 and m_opp >= (b.num_legal(opp) + 1) // 2
                fired += full != UNKNOWN
    assert fired > 0  # the lines reach positions the rule settles


def test_symmetry_keys_use_the_given_positions_symmetries():
    """Solving a symmetric position's moves one at a time (as `nogobot solve` does), keyed by
    that position's symmetries: the same results in fewer nodes."""
    b = Board(4)
    used = {}
    for images_of in (None, b):
        s = Solver(1 << 16)
        results, nodes = [], 0
        for m in (0, 1, 5):  # A4, B4, B3: one of each kind of opening
            after = b.copy()
            after.play(m)
            r = s.solve(after, 10**7, images_of=images_of)
            results.append(r.result)
            nodes += r.nodes
        assert results == [WIN] * 3  # every opening loses: the reply wins
        used[images_of is None] = nodes
    assert used[False] < used[True]
    with pytest.raises(ValueError, match="images_of"):  # the kernels do not bound-check
        Solver(1 << 10).solve(Board(5), 100, images_of=b)

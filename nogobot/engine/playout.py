"""The fast NoGo rollout policy: finish a game from any position, with NoGo knowledge, in numba.

What this module owns: ``policy_rollout`` (the kernel the rave agent and the network search's
leaf evaluator call), its workspace ``rollout_scratch`` and the test helper ``rollout_value``.

Representation. A rollout starts from ``board.Board``'s state arrays (left untouched) and copies
the block structure (stones, block roots, stone lists, liberty bitsets) into its workspace, adding
block sizes, liberty counts and, per point and colour, how many neighbours are that colour's
stones or the edge. It places stones with its own ``_put`` and never maintains the full legal
masks. NoGo makes that safe: stones are never removed, so a point illegal for a colour stays
illegal while it is empty. Each colour therefore keeps a list of *candidates* (empty points not
yet known to be illegal for it), seeded from the board's exact masks, which can only shrink: a
candidate is tested with ``_legal_both`` (both colours at once, from the liberty counts) when it
is drawn, and dropped for good when the test fails. Any board size the rules support works (one
code path); the liberty bitsets take ceil(N*N/64) words, two on 9×9.

The policy for the colour c to move (o is the opponent). A point is *safe* for c when c may play
it and o may not (an eye-like point, or the last liberty of c's block): c can count on it later,
so filling it now throws a move away. A point legal for both is *contested*.

1. Answer the last move: with probability ``P_LOCAL`` look at the eight points around it and
   play the contested one with the best positive local score (below).
2. Otherwise draw random candidates: illegal ones are dropped, safe ones are skipped (kept for
   later), and the best of the first ``SAMPLES`` contested ones by local score is played, unless
   it scores below ``MIN_SCORE``: then drawing goes on (at most ``MAX_DRAWS`` legal draws) and
   the best one drawn is played.
3. If drawing finds nothing, scan every candidate: a random contested point (best of two by
   score); when none is left, a random safe point; when c has no legal move, c has lost. Once a
   scan finds no contested point none can come back (legality only goes), so from then on each
   side fills random points of its own without scanning.

Local score of a contested point p for c (counted on its four neighbours, no move is played):
+2 for each empty neighbour that p turns into c's eye (all its other neighbours are c's stones
or the edge), +1 for each empty neighbour that would otherwise become o's eye (p spoils it),
-2 for each o block p puts in atari (its last liberty becomes illegal for c, safe for o).
It is the published NoGo programs' advice in a few comparisons: take the opponent's legal points
without giving up your own. Only an *eyeish* neighbour (an empty point that one colour's stones
and the edge enclose on three sides) can make a score positive, so the workspace keeps those
flags and, per point, how many eyeish neighbours it has (``near_eye``), both updated as stones
are placed; the local answer scores only points with one. That made policy rollouts 10% faster
with the same games (the same seed plays the same moves).

Speed. ``_choose`` and ``_put`` are inlined into the move loop: a call to a numba function
passing arrays increments and decrements each array's reference count with atomic
instructions, and with a dozen arrays per call, twice a move, that was a third of a rollout's
time (``perf``; docs/results.md, "Speed"); inlined, numba prunes those pairs.

Randomness: each rollout draws one seed from numba's ``np.random`` (the caller seeds it with
``np.random.seed`` inside a kernel) and runs its own xorshift generator from it, kept in the
workspace: numba's Mersenne Twister cost 11% of a rollout's time (a draw a few times per move).
A rollout is a stochastic policy, never a fixed rule.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..game.board import (
    BLACK,
    EMPTY,
    NLEGAL_B,
    TO_MOVE,
    Board,
    copy_into,
    copy_rows_into,
    geometry,
    join_neighbours_by,
    legal_both_by,
    liberty_count,
    new_block,
)

# The policy's knobs, the defaults of rollout_scratch (a workspace carries its own copy, so two
# searches in one process can compare policies).
P_LOCAL = 0.5  # chance of answering the last move locally before drawing at random
SAMPLES = 1  # contested draws compared by local score (each costs a draw: speed)
# A drawn contested point scoring less is played only if no draw does better. -100 turns the
# filter off: rejecting the atari points (0) played worse.
MIN_SCORE = -100
MAX_DRAWS = 6  # draws (legal for the mover) before falling back to a full scan

# Workspace slots (see rollout_scratch).
S_STONES, S_ROOT, S_NXT, S_LIBS, S_SIZE, S_CAND, S_INDEX, S_COUNT, S_NBR8, S_WORK, S_TRACE, \
    S_AROUND, S_POLICY, S_NLIBS, S_RNG, S_EYEISH, S_NEAR_EYE = range(17)


def rollout_scratch(size: int, p_local: float = P_LOCAL, samples: int = SAMPLES,
                    min_score: int = MIN_SCORE) -> tuple:
    """The workspace of ``policy_rollout`` for one board size (one per thread).

    After a rollout it holds the final position: ``scratch[0]`` the stones (each point played
    at most once in a NoGo game, so this is also the AMAF record of who played where) and
    ``scratch[10]`` the rollout's moves in order, their number in ``scratch[7][0]``."""
    geo = geometry(size)
    P, W = geo.area, geo.words
    nbr8 = np.full((P, 8), -1, dtype=np.int16)
    for p in range(P):
        r, c = divmod(p, size)
        k = 0
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                rr, cc = r + dr, c + dc
                if (dr or dc) and 0 <= rr < size and 0 <= cc < size:
                    nbr8[p, k] = rr * size + cc
                    k += 1
    around = np.zeros((3, P), dtype=np.int8)
    around[0] = (geo.nbr < 0).sum(axis=1)  # off-board sides, copied into rows 1-2 per rollout
    return (
        np.zeros(P, dtype=np.int8),  # stones
        np.zeros(P, dtype=np.int16),  # block roots
        np.zeros(P, dtype=np.int16),  # stone lists
        np.zeros((P, W), dtype=np.uint64),  # liberty bitsets
        np.zeros(P, dtype=np.int16),  # block sizes, valid at roots
        np.zeros((3, P), dtype=np.int16),  # candidate points per colour
        np.zeros((3, P), dtype=np.int16),  # position of each point in its list, -1 if absent
        np.zeros(4, dtype=np.int64),  # [0] moves traced, [1..2] candidates per colour,
        # [3] 1 once no point is legal for both colours (it stays so: legality only goes)
        nbr8,  # the eight points around each point, -1 padded
        np.zeros(P, dtype=np.int16),  # work list
        np.zeros(P, dtype=np.int16),  # trace of the rollout's moves
        around,  # around[c, p]: neighbours of p that are c or edge; around[0]: edges alone
        np.array([p_local, samples, min_score], dtype=np.float64),  # the policy's knobs
        np.zeros(P, dtype=np.int16),  # liberty counts, valid at roots
        np.ones(1, dtype=np.uint64),  # the rollout's xorshift state (never 0)
        np.zeros(P, dtype=np.int8),  # eyeish[q]: empty q enclosed on 3 sides by one colour
        np.zeros(P, dtype=np.int8),  # near_eye[p]: eyeish neighbours of p
    )


@njit(cache=True, inline="always")
def _drop(cand, index, count, c, p):
    """Remove p from colour c's candidate list (swap with the last one)."""
    i = index[c, p]
    if i >= 0:
        n = count[c] - 1
        q = cand[c, n]
        cand[c, i] = q
        index[c, q] = i
        index[c, p] = -1
        count[c] = n


@njit(cache=True, inline="always")
def _two_or_more(nlibs, r, s, p):
    """Block r has a liberty besides p (p is one of its liberties): its count is two or more."""
    return nlibs[r] >= 2


@njit(cache=True, inline="always")
def _legal_both(stones, root, nlibs, nbr, p, c):
    """``board.legal_both_by`` from the liberty counts the rollouts keep."""
    return legal_both_by(_two_or_more, nlibs, stones, root, nbr, p, c, -1, 0)


@njit(cache=True, inline="always")
def _test_candidate(stones, root, nlibs, nbr, cand, index, count, q, c):
    """Legality of candidate q for c and its opponent; q leaves the candidate list of each
    colour that can no longer play it (legal -> illegal is the only change in NoGo)."""
    ok_c, ok_o = _legal_both(stones, root, nlibs, nbr, q, c)
    if not ok_o:
        _drop(cand, index, count, 3 - c, q)
    if not ok_c:
        _drop(cand, index, count, c, q)
    return ok_c, ok_o


@njit(cache=True, inline="always")
def _kept_size(bsize, r):
    return bsize[r]


@njit(cache=True, inline="always")
def _add_size(bsize, big, small):
    bsize[big] += bsize[small]


@njit(cache=True, inline="always")
def _put(stones, root, nxt, libs, bsize, nlibs, nbr, p, c):
    """Place a stone of c on p (legal): merge blocks (relabel the smaller), update liberties.

    Like ``board._place`` (the same ``board.new_block`` and ``board.join_neighbours_by``) but
    with block sizes and liberty counts kept at the roots (no walk to size a block; legality
    reads a count), and no hash."""
    new_block(stones, root, nxt, libs, nbr, p, c)
    bsize[p] = 1
    r = join_neighbours_by(_kept_size, _add_size, bsize, stones, root, nxt, libs, nbr, p, c)
    pw = p >> 6
    pbit = ~(np.uint64(1) << np.uint64(p & 63))
    nlibs[r] = liberty_count(libs, r)
    for k in range(4):
        q = nbr[p, k]
        if q >= 0 and stones[q] == 3 - c:
            rq = root[q]
            libs[rq, pw] &= pbit
            nlibs[rq] = liberty_count(libs, rq)


@njit(cache=True, _nrt=False)
def _libs_besides_at_most_one(libs, r, p):
    """True when block r has exactly one liberty other than p (p itself is a liberty)."""
    pw = p >> 6
    pbit = np.uint64(1) << np.uint64(p & 63)
    seen = 0
    for w in range(libs.shape[1]):
        x = libs[r, w]
        if w == pw:
            x &= ~pbit
        if x != 0:
            if (x & (x - np.uint64(1))) != 0:
                return False
            seen += 1
            if seen > 1:
                return False
    return seen == 1


@njit(cache=True, inline="always")
def _score_by(enclosed_by, eye_state, in_atari_after, lib_state, stones, root, nbr, p, c):
    """How much playing contested point p gains c locally (module docstring), given
    ``enclosed_by(eye_state, q, p, c)`` (2 when c's stones or the edge surround empty point q
    on every side but p, 1 when the opponent's do, else 0) and ``in_atari_after(lib_state, r,
    p)`` (block r is left with one liberty once p is filled)."""
    score = 0
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            continue  # off the board
        if stones[q] == EMPTY:
            score += enclosed_by(eye_state, q, p, c)
        elif stones[q] == 3 - c and in_atari_after(lib_state, root[q], p):
            score -= 2
    return score


@njit(cache=True, inline="always")
def _enclosed_by_stones(stones_nbr, q, p, c):
    stones, nbr = stones_nbr
    mine = True
    theirs = True
    for j in range(4):
        t = nbr[q, j]
        if t < 0 or t == p:
            continue
        st = stones[t]
        mine &= st == c
        theirs &= st == 3 - c
    return 2 if mine else (1 if theirs else 0)


@njit(cache=True, _nrt=False)
def local_score(stones, root, libs, nbr, p, c):
    """How much playing contested point p gains c locally, from the stones and liberty bitsets
    (rave's priors)."""
    return _score_by(_enclosed_by_stones, (stones, nbr), _libs_besides_at_most_one, libs,
                     stones, root, nbr, p, c)


@njit(cache=True, inline="always")
def _enclosed_by_counts(around, q, p, c):
    # around[colour, q]: q's neighbours of that colour plus its off-board sides; p is empty.
    return 2 if around[c, q] == 3 else (1 if around[3 - c, q] == 3 else 0)


@njit(cache=True, inline="always")
def _two_liberties(nlibs, r, p):
    return nlibs[r] == 2


@njit(cache=True, inline="always")
def _quick_score(around, stones, root, nlibs, nbr, p, c):
    """``local_score`` from the rollouts' neighbour and liberty counts: fewer reads."""
    return _score_by(_enclosed_by_counts, around, _two_liberties, nlibs, stones, root, nbr, p, c)


@njit(cache=True, inline="always")
def _below(rng, n):
    """A uniform integer in [0, n) (n < 2**32) from the xorshift64 state ``rng[0]``: the top
    32 bits scaled by a multiply (Lemire), no division."""
    x = rng[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    rng[0] = x
    return np.int64(((x >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True, inline="always")
def _choose(stones, root, nlibs, nbr, nbr8, cand, index, count, work, around, policy, rng, c,
            last, near_eye):
    """The policy's move for c, or -1 when c has no legal move (module docstring)."""
    if count[3]:
        # No contested point is left, so none can come back: each side fills its own points.
        while count[c] > 0:
            q = cand[c, _below(rng, count[c])]
            ok_c, ok_o = _legal_both(stones, root, nlibs, nbr, q, c)
            if ok_c:
                return q
            _drop(cand, index, count, c, q)
        return -1
    # 1. Answer the last move: score first (cheap), test legality only for a better point.
    if last >= 0 and _below(rng, 1 << 20) < policy[0] * (1 << 20):
        best = -1
        best_score = 0
        ties = 0
        for k in range(8):
            q = nbr8[last, k]
            if q < 0 or near_eye[q] == 0 or index[c, q] < 0:
                continue  # only an eyeish neighbour can make a point's score positive
            s = _quick_score(around, stones, root, nlibs, nbr, q, c)
            if s < best_score or s <= 0:
                continue
            ok_c, ok_o = _test_candidate(stones, root, nlibs, nbr, cand, index, count, q, c)
            if not ok_c:
                continue
            if not ok_o:
                continue  # safe for c: keep it for later
            if s > best_score:
                best, best_score, ties = q, s, 1
            else:
                ties += 1
                if _below(rng, ties) == 0:
                    best = q
        if best >= 0:
            return best
    # 2. Random draws.
    best = -1
    best_score = -100
    found = 0
    draws = 0
    while count[c] > 0 and draws < MAX_DRAWS:
        q = cand[c, _below(rng, count[c])]
        ok_c, ok_o = _test_candidate(stones, root, nlibs, nbr, cand, index, count, q, c)
        if not ok_c:
            continue
        draws += 1
        if not ok_o:
            continue
        if policy[1] <= 1 and policy[2] <= -100:
            return q  # the first contested draw is taken whatever it scores: skip the score
        s = _quick_score(around, stones, root, nlibs, nbr, q, c)
        if s > best_score:
            best, best_score = q, s
        found += 1
        if found >= policy[1] and best_score >= policy[2]:
            break
    if best >= 0:
        return best
    # 3. Exact scan (backwards, so dropping swaps in points already seen).
    contested = 0
    safe = 0
    n = work.shape[0]
    for i in range(count[c] - 1, -1, -1):
        q = cand[c, i]
        ok_c, ok_o = _test_candidate(stones, root, nlibs, nbr, cand, index, count, q, c)
        if not ok_c:
            continue
        if not ok_o:
            safe += 1
            work[n - safe] = q  # safe points fill the work list from its end
        else:
            work[contested] = q
            contested += 1
    if contested > 0:
        a = work[_below(rng, contested)]
        if contested == 1:
            return a
        b = work[_below(rng, contested)]
        score_a = _quick_score(around, stones, root, nlibs, nbr, a, c)
        if _quick_score(around, stones, root, nlibs, nbr, b, c) > score_a:
            return b
        return a
    count[3] = 1
    if safe > 0:
        return work[n - 1 - _below(rng, safe)]
    return -1


@njit(cache=True, inline="always")
def _mark_eyeish(eyeish, near_eye, nbr, q, on):
    """Set (``on``) or clear point q's eyeish flag and count it in its neighbours' near_eye."""
    eyeish[q] = on
    step = 1 if on else -1
    for k in range(4):
        t = nbr[q, k]
        if t >= 0:
            near_eye[t] += step


@njit(cache=True, _nrt=False)
def _rollout_from_blocks(nbr, zob, to_move, last_move, scratch):
    """Finish the game held in the workspace (blocks, candidate lists and eyeish points set);
    the winner."""
    stones, root, nxt, libs, bsize, cand, index, count, nbr8, work, trace, around, policy, \
        nlibs, rng, eyeish, near_eye = scratch
    c = to_move
    last = last_move
    count[0] = 0
    rng[0] = np.uint64(np.random.randint(1, 2**62))
    while True:
        p = _choose(stones, root, nlibs, nbr, nbr8, cand, index, count, work, around, policy,
                    rng, c, last, near_eye)
        if p < 0:
            return 3 - c
        _put(stones, root, nxt, libs, bsize, nlibs, nbr, p, c)
        if eyeish[p]:
            _mark_eyeish(eyeish, near_eye, nbr, p, 0)
        for k in range(4):
            q = nbr[p, k]
            if q >= 0:
                around[c, q] += 1
                # Once 3, a count only grows to 4, when q has no empty neighbour left to score:
                # a flag is never cleared while q is empty.
                if around[c, q] == 3 and eyeish[q] == 0 and stones[q] == EMPTY:
                    _mark_eyeish(eyeish, near_eye, nbr, q, 1)
        _drop(cand, index, count, 1, p)
        _drop(cand, index, count, 2, p)
        trace[count[0]] = p
        count[0] += 1
        last = p
        c = 3 - c


@njit(cache=True, _nrt=False)
def policy_rollout(stones, root, nxt, libs, legal, meta, nbr, zob, last_move, scratch):
    """Play the position given by ``Board.arrays()`` to the end with the NoGo policy; returns
    the winner (1 black, 2 white). The state arrays are left untouched; the final position is
    left in ``scratch`` (see ``rollout_scratch``)."""
    s_stones, s_root, s_nxt, s_libs, bsize, cand, index, count, nbr8, work, trace, around, \
        _, nlibs, _, eyeish, near_eye = scratch
    copy_into(stones, s_stones)
    copy_into(root, s_root)
    copy_into(nxt, s_nxt)
    copy_rows_into(libs, s_libs)
    for p in range(stones.shape[0]):
        bsize[p] = 0
        near_eye[p] = 0
        around[1, p] = around[0, p]
        around[2, p] = around[0, p]
    for p in range(stones.shape[0]):
        s = stones[p]
        if s != EMPTY:
            bsize[root[p]] += 1
            if root[p] == p:
                nlibs[p] = liberty_count(libs, p)
            for k in range(4):
                q = nbr[p, k]
                if q >= 0:
                    around[s, q] += 1
    for p in range(stones.shape[0]):
        eyeish[p] = 0
        if stones[p] == EMPTY and (around[1, p] == 3 or around[2, p] == 3):
            _mark_eyeish(eyeish, near_eye, nbr, p, 1)
    for c in (1, 2):
        n = 0
        for p in range(stones.shape[0]):
            if legal[c, p]:
                cand[c, n] = p
                index[c, p] = n
                n += 1
            else:
                index[c, p] = -1
        count[c] = n
    count[3] = 0
    c = meta[TO_MOVE]
    if meta[NLEGAL_B + c - 1] == 0:
        count[0] = 0
        return 3 - c
    return _rollout_from_blocks(nbr, zob, c, last_move, scratch)


@njit(cache=True, _nrt=False)
def _rollouts(stones, root, nxt, libs, legal, meta, nbr, zob, last_move, scratch, n, seed):
    np.random.seed(seed)
    black = 0
    for _ in range(n):
        if policy_rollout(stones, root, nxt, libs, legal, meta, nbr, zob, last_move,
                          scratch) == BLACK:
            black += 1
    return black


def rollout_value(board: Board, n: int, seed: int, scratch: tuple | None = None) -> float:
    """Mean result of ``n`` policy rollouts for the side to move of ``board``, in [-1, 1]
    (``scratch``: a workspace to reuse, e.g. in a benchmark)."""
    geo = board.geo
    if scratch is None:
        scratch = rollout_scratch(board.size)
    black = _rollouts(*board.arrays(), geo.nbr, geo.zobrist, board.last_move, scratch, n, seed)
    black_share = black / n
    mine = black_share if board.to_move == BLACK else 1.0 - black_share
    return 2.0 * mine - 1.0

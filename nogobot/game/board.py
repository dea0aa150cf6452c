"""THE NoGo rules: the one owner of legality in nogobot.

Rules (Müller): N×N board, black first; a move puts a stone on an empty point and is legal iff it
captures nothing and the mover's resulting block keeps a liberty; there is no passing; the side to
move with no legal move has lost.

Representation (plain arrays so numba kernels and the search can copy and share them):

* ``stones``  int8  [P]      EMPTY=0, BLACK=1, WHITE=2 (P = N*N, flat index, row 0 = top)
* ``root``    int16 [P]      block id (a representative stone) of each stone, -1 when empty
* ``nxt``     int16 [P]      circular linked list of the stones of each block
* ``libs``    uint64 [P, W]  liberty bitset of each block, valid at root indices (W = ceil(P/64))
* ``legal``   bool  [3, P]   legal[c, p]: may colour c play at p (rows 1 and 2 used)
* ``meta``    int64 [8]      TO_MOVE, HASH, PLY, LAST, LAST2, NLEGAL_B, NLEGAL_W

Stones never leave a NoGo board, so blocks only ever merge: merging relabels the smaller block
(quick-find union), and a liberty set only shrinks. A point illegal for a colour therefore stays
illegal while empty, which is what lets the legal masks be kept incrementally: after a move only
the liberties of the blocks it touched can change status, and only those are re-tested.

``Board`` is the thin Python wrapper (history stack for undo, ASCII in/out); the ``_kernel``
functions are what the search and the benchmarks call directly.

Reference counts. numba counts references to each array with an atomic increment and decrement
wherever a function takes, slices or passes it on, and prunes only some pairs; in the hot loops
(a rollout's moves, the solver's nodes, a search's descents) the rest cost 60-80% of the time on
an Intel Xeon guest (``perf``). Kernels that allocate no array and return none are therefore
compiled with ``_nrt=False``, numba's flag that turns reference counting off in their code: the
arrays they touch are owned by their callers, who keep them alive through the call. Such a
kernel must never allocate, return or store an array (numba refuses the allocation when it
compiles); policy rollouts ran 2.8x faster with the same moves (docs/results.md, "Speed").
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from . import coords
from .coords import BLACK, EMPTY, WHITE  # defined once, in coords (no numba there)

TO_MOVE, HASH, PLY, LAST, LAST2, NLEGAL_B, NLEGAL_W = range(7)
META_LEN = 8
COLOUR_NAMES = {BLACK: "black", WHITE: "white"}


def opponent(c: int) -> int:
    return 3 - c


# --------------------------------------------------------------------------------------------
# Geometry: neighbour table and Zobrist keys per board size (built once, cached)
# --------------------------------------------------------------------------------------------


class Geometry:
    """Constant per-size tables shared by every board of that size."""

    def __init__(self, size: int):
        if not coords.MIN_SIZE <= size <= coords.MAX_SIZE:
            raise ValueError(f"board size {size} outside {coords.MIN_SIZE}..{coords.MAX_SIZE}")
        self.size = size
        self.area = size * size
        self.words = (self.area + 63) // 64
        nbr = np.full((self.area, 4), -1, dtype=np.int16)
        for p in range(self.area):
            r, c = divmod(p, size)
            for k, (dr, dc) in enumerate(((-1, 0), (1, 0), (0, -1), (0, 1))):
                rr, cc = r + dr, c + dc
                if 0 <= rr < size and 0 <= cc < size:
                    nbr[p, k] = rr * size + cc
        self.nbr = nbr
        # Fixed seed: hashes are reproducible across processes (NN cache, transposition tables).
        rng = np.random.default_rng(0x6E6F676F + size)
        self.zobrist = rng.integers(-(2**63), 2**63 - 1, size=(3, self.area + 1), dtype=np.int64)
        # zobrist[0, area] is the key xored in when white is to move.


@lru_cache(maxsize=None)
def geometry(size: int) -> Geometry:
    return Geometry(size)


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _popcount64(x):
    x = np.uint64(x)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, inline="always")
def liberty_count(libs, r):
    """Liberties of the block whose root is ``r``. Public: features.py reads it per block."""
    n = 0
    for w in range(libs.shape[1]):
        n += _popcount64(libs[r, w])
    return n


@njit(cache=True, inline="always")
def _has_liberty_besides(libs, r, p):
    """True if block r has a liberty other than point p."""
    pw = p >> 6
    pbit = np.uint64(1) << np.uint64(p & 63)
    for w in range(libs.shape[1]):
        x = libs[r, w]
        if w == pw:
            x &= ~pbit
        if x != 0:
            return True
    return False


@njit(cache=True, inline="always")
def _liberty_besides(libs, r, s, p):
    """``legal_both_by``'s liberty test from the liberty bitsets (the colour s is not needed)."""
    return _has_liberty_besides(libs, r, p)


@njit(cache=True, inline="always")
def legal_both_by(has_other_liberty, lib_state, stones, root, nbr, p, c, stone, stone_colour):
    """Legality of empty point p for c and for its opponent, from one look at p's neighbours:
    a colour needs a liberty (an empty neighbour or a block of its own with another liberty)
    and must not capture (fill the last liberty of the other colour's block).

    ``has_other_liberty(lib_state, r, s, p)`` says whether block r (of colour s) has a liberty
    besides p: from the liberty bitsets here (``_has_liberty_besides``), from liberty counts in
    the rollouts (``playout``), on the position after a move in ``legal_counts_after``. numba
    compiles one specialisation per function passed, so the call costs nothing. Point
    ``stone`` (-1 for none) holds a stone of ``stone_colour`` that ``stones`` do not show yet,
    its own root."""
    lib_c = False
    lib_o = False
    capture_c = False
    capture_o = False
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            continue
        if q == stone:
            s = stone_colour
            r = stone
        else:
            s = stones[q]
            if s == EMPTY:
                lib_c = True
                lib_o = True
                continue
            r = root[q]
        other = has_other_liberty(lib_state, r, s, p)
        if s == c:
            lib_c |= other
            capture_o |= not other
        else:
            lib_o |= other
            capture_c |= not other
    return lib_c and not capture_c, lib_o and not capture_o


# play_stone's helpers are inlined into it, and it runs without reference counts (module
# docstring). play_stone itself is not inlined: inlined into every caller, it doubled the
# kernels' cold compile time.
@njit(cache=True, inline="always")
def _set_legal(legal, meta, p, c, value):
    if legal[c, p] != value:
        legal[c, p] = value
        meta[NLEGAL_B + c - 1] += 1 if value else -1


@njit(cache=True, inline="always")
def _retest(stones, root, libs, legal, meta, nbr, q):
    """Re-test legality of empty point q for both colours (only legal -> illegal happens)."""
    if legal[BLACK, q] or legal[WHITE, q]:
        ok_b, ok_w = legal_both_by(_liberty_besides, libs, stones, root, nbr, q, BLACK, -1, 0)
        if not ok_b:
            _set_legal(legal, meta, q, BLACK, False)
        if not ok_w:
            _set_legal(legal, meta, q, WHITE, False)


@njit(cache=True, inline="always")
def _lone_liberty(libs, r, p):
    """Block r's only liberty other than p (-1 for none), or -1 when it has none or two or
    more."""
    lone = -1
    pw = p >> 6
    pbit = np.uint64(1) << np.uint64(p & 63)
    for w in range(libs.shape[1]):
        x = libs[r, w]
        if w == pw:
            x &= ~pbit
        if x == 0:
            continue
        if lone >= 0 or (x & (x - np.uint64(1))) != 0:
            return -1
        lone = w * 64 + _popcount64(x - np.uint64(1))
    return lone


@njit(cache=True, inline="always")
def _retest_if_in_atari(stones, root, libs, legal, meta, nbr, r):
    """If block r is down to one liberty, re-test that point.

    Why only then: the legality of an empty point q depends on its empty neighbours and, for each
    adjacent block, on whether that block has a liberty other than q. A block with two or more
    liberties always has one besides q, before and after the move, so its liberties keep their
    status; only a block left with a single liberty changes the answer (capture / suicide)."""
    lone = _lone_liberty(libs, r, -1)
    if lone >= 0:
        _retest(stones, root, libs, legal, meta, nbr, lone)


# Public for playout.py, whose _put merges blocks the same way (keeping block sizes of its own).
# Inlined so the hot paths pay no call per merge.
@njit(cache=True, inline="always")
def merge_blocks(root, nxt, libs, big, small):
    """Merge block ``small`` into block ``big`` (both roots): relabel the smaller block's stones,
    splice the two circular stone lists and OR the liberty bitsets. The caller picks which block
    is the smaller (quick-find union: a merge walks only the smaller block)."""
    s = small
    while True:
        root[s] = big
        s = nxt[s]
        if s == small:
            break
    tmp = nxt[big]
    nxt[big] = nxt[small]
    nxt[small] = tmp
    for w in range(libs.shape[1]):
        libs[big, w] |= libs[small, w]


@njit(cache=True, inline="always")
def new_block(stones, root, nxt, libs, nbr, p, c):
    """Put a stone of c on empty point p as a block of its own, its empty neighbours its
    liberties (the merges with neighbouring blocks come next)."""
    stones[p] = c
    root[p] = p
    nxt[p] = p
    for w in range(libs.shape[1]):
        libs[p, w] = 0
    for k in range(4):
        q = nbr[p, k]
        if q >= 0 and stones[q] == EMPTY:
            libs[p, q >> 6] |= np.uint64(1) << np.uint64(q & 63)


@njit(cache=True, inline="always")
def join_neighbours_by(block_size, add_size, size_state, stones, root, nxt, libs, nbr, p, c):
    """Merge the new block at p with c's blocks beside it (each time the smaller block is
    relabelled into the larger, ``merge_blocks``) and take p from their liberties; returns the
    root of the block holding p. ``block_size(size_state, r)`` is block r's size and
    ``add_size(size_state, big, small)`` records a merge: walked here (``_walk_size``), kept at
    the roots in the rollouts (``playout``)."""
    r = p
    for k in range(4):
        q = nbr[p, k]
        if q < 0 or stones[q] != c:
            continue
        rq = root[q]
        if rq == r:
            continue
        if block_size(size_state, rq) >= block_size(size_state, r):
            big, small = rq, r
        else:
            big, small = r, rq
        add_size(size_state, big, small)
        merge_blocks(root, nxt, libs, big, small)
        r = big
    libs[r, p >> 6] &= ~(np.uint64(1) << np.uint64(p & 63))
    return r


@njit(cache=True, inline="always")
def _walk_size(nxt, r):
    """The size of block r, by walking its ring of stones."""
    n = 1
    s = nxt[r]
    while s != r:
        n += 1
        s = nxt[s]
    return n


@njit(cache=True, inline="always")
def _no_sizes(nxt, big, small):
    pass


@njit(cache=True, inline="always")
def _place(stones, root, nxt, libs, meta, nbr, zob, p, c):
    """Put a stone of colour c on p and update blocks, liberties and hash (no legality check).

    Returns the root of the block now holding p."""
    new_block(stones, root, nxt, libs, nbr, p, c)
    r = join_neighbours_by(_walk_size, _no_sizes, nxt, stones, root, nxt, libs, nbr, p, c)
    pw = p >> 6
    pbit = ~(np.uint64(1) << np.uint64(p & 63))
    for k in range(4):
        q = nbr[p, k]
        if q >= 0 and stones[q] == 3 - c:
            libs[root[q], pw] &= pbit
    meta[HASH] ^= zob[c, p]
    return r


@njit(cache=True, inline="always")
def _set_to_move(meta, zob, c):
    area = zob.shape[1] - 1
    if (meta[TO_MOVE] == WHITE) != (c == WHITE):
        meta[HASH] ^= zob[0, area]
    meta[TO_MOVE] = c


@njit(cache=True, _nrt=False)
def play_stone(stones, root, nxt, libs, legal, meta, nbr, zob, p, c):
    """Play colour c at p (caller guarantees legality). Updates masks incrementally.

    Public because the other numba kernels (search, solver, agents, bootstrap games) play on
    the raw arrays without a ``Board``."""
    r = _place(stones, root, nxt, libs, meta, nbr, zob, p, c)
    _set_legal(legal, meta, p, BLACK, False)
    _set_legal(legal, meta, p, WHITE, False)
    # Empty neighbours of p lost an empty neighbour; blocks touched by p lost a liberty.
    _retest_if_in_atari(stones, root, libs, legal, meta, nbr, r)
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            continue
        if stones[q] == EMPTY:
            _retest(stones, root, libs, legal, meta, nbr, q)
        elif stones[q] == 3 - c:
            _retest_if_in_atari(stones, root, libs, legal, meta, nbr, root[q])
    meta[LAST2] = meta[LAST]
    meta[LAST] = p
    meta[PLY] += 1
    _set_to_move(meta, zob, 3 - c)


# -- legal counts after a move, without playing it ------------------------------------------
# The solver orders a node's moves by both colours' legal counts after each; reading them this
# way costs no copy of the position (``push_state``) and no ``play_stone``. It re-tests the same
# points ``play_stone`` does, on a virtual view of the position after the move: p holds c, c's
# blocks beside p are one block with their liberties and p's empty neighbours, less p, and the
# other colour's blocks beside p have lost p.
# ``legal_counts_after`` is a called kernel, not inlined, like ``play_stone``: inlined into the
# solver's loops it tripled their cold compile time; without reference counts the call costs
# no measurable speed.


@njit(cache=True, inline="always")
def _joined_lone_liberty(stones, root, libs, nbr, p, c):
    """After c plays p: the only liberty of the block holding p (p's empty neighbours and the
    liberties of c's blocks beside p, less p), or -1 when it has two or more (it has one: the
    move is legal)."""
    lone = -1
    for k in range(4):
        n = nbr[p, k]
        if n < 0:
            continue
        if stones[n] == EMPTY:
            cand = n
        elif stones[n] == c:
            cand = _lone_liberty(libs, root[n], p)
            if cand < 0:
                if _has_liberty_besides(libs, root[n], p):
                    return -1  # two or more liberties besides p
                continue
        else:
            continue
        if lone >= 0 and cand != lone:
            return -1
        lone = cand
    return lone


@njit(cache=True, inline="always")
def _is_neighbour(nbr, p, q):
    for k in range(4):
        if nbr[p, k] == q:
            return True
    return False


@njit(cache=True, inline="always")
def _liberty_after(after, r, s, q):
    """``legal_both_by``'s liberty test on the position after c plays p (``after``: libs,
    beside, lone, p, c): whether block r, of colour s, has a liberty besides q. ``beside[k]``
    is the root of the block beside p in direction k (-1 for none), ``lone[k]`` its only liberty
    after the move (-1 for two or more; the other colour's blocks only), ``lone[4]`` that of
    the block holding p (p stands as its root). A block beside p is one look: q, a neighbour,
    is one of its liberties, so it has another unless q is its only one."""
    libs, beside, lone, p, c = after
    if r == p:
        return lone[4] < 0
    for k in range(4):
        if beside[k] == r:
            return (lone[4] if s == c else lone[k]) < 0
    return _has_liberty_besides(libs, r, q)


@njit(cache=True, inline="always")
def _lost_after(stones, root, legal, nbr, after, q):
    """(black, white): 1 where q is legal now and would not be after the move (``after``)."""
    if not (legal[BLACK, q] or legal[WHITE, q]):
        return 0, 0
    ok_b, ok_w = legal_both_by(_liberty_after, after, stones, root, nbr, q, BLACK, after[3],
                               after[4])
    return int(legal[BLACK, q] and not ok_b), int(legal[WHITE, q] and not ok_w)


@njit(cache=True, inline="always")
def _beside(stones, root, nbr, p, k):
    q = nbr[p, k]
    return -1 if q < 0 or stones[q] == EMPTY else root[q]


@njit(cache=True, inline="always")
def _lone_beside(stones, root, libs, nbr, p, c, k):
    q = nbr[p, k]
    return -1 if q < 0 or stones[q] != 3 - c else _lone_liberty(libs, root[q], p)


@njit(cache=True, _nrt=False)
def legal_counts_after(stones, root, libs, legal, meta, nbr, p, c):
    """(black's, white's) legal move counts after c plays p (legal for c), as ``play_stone``
    would leave them in ``meta``, without playing it: p, p's empty neighbours, the lone liberty
    of the block p joins and those of the other colour's blocks beside p left in atari are
    re-tested (each point once) by ``legal_both_by`` on the position after the move, its stone
    at p."""
    beside = (_beside(stones, root, nbr, p, 0), _beside(stones, root, nbr, p, 1),
              _beside(stones, root, nbr, p, 2), _beside(stones, root, nbr, p, 3))
    joined = _joined_lone_liberty(stones, root, libs, nbr, p, c)
    lone = (_lone_beside(stones, root, libs, nbr, p, c, 0),
            _lone_beside(stones, root, libs, nbr, p, c, 1),
            _lone_beside(stones, root, libs, nbr, p, c, 2),
            _lone_beside(stones, root, libs, nbr, p, c, 3), joined)
    nb = meta[NLEGAL_B] - int(legal[BLACK, p])
    nw = meta[NLEGAL_W] - int(legal[WHITE, p])
    after = (libs, beside, lone, p, c)
    for k in range(4):
        q = nbr[p, k]
        if q >= 0 and stones[q] == EMPTY:
            db, dw = _lost_after(stones, root, legal, nbr, after, q)
            nb -= db
            nw -= dw
    # The lone liberties, each once; one beside p was re-tested above.
    for k in range(5):
        q = lone[k]
        if q < 0 or _is_neighbour(nbr, p, q):
            continue
        seen = False
        for i in range(k):
            seen |= lone[i] == q
        if not seen:
            db, dw = _lost_after(stones, root, legal, nbr, after, q)
            nb -= db
            nw -= dw
    return nb, nw


# Element loops, not slice assignment: numba's slice assignment may allocate a temporary (for
# overlapping arrays), which a kernel without reference counts cannot do (module docstring).
@njit(cache=True, inline="always")
def copy_into(src, dst):
    """Copy the 1-D array ``src`` into ``dst`` of the same length."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True, inline="always")
def copy_rows_into(src, dst):
    """Copy the 2-D array ``src`` into ``dst`` of the same shape."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@njit(cache=True, _nrt=False)
def push_state(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, d):
    """Copy the state at level d of a stack of positions (one array per state array, the first
    axis the level) into level d + 1. Public for the depth-first searches (solver, alpha-beta):
    the rules kernels have no undo, so a child is played on a copy one level down."""
    copy_into(stk_s[d], stk_s[d + 1])
    copy_into(stk_r[d], stk_r[d + 1])
    copy_into(stk_n[d], stk_n[d + 1])
    # Indexed on the stacks themselves, not on views of a level: numba compiles these loops to
    # a faster copy.
    for i in range(stk_l.shape[1]):
        for w in range(stk_l.shape[2]):
            stk_l[d + 1, i, w] = stk_l[d, i, w]
    for c in range(stk_g.shape[1]):
        for i in range(stk_g.shape[2]):
            stk_g[d + 1, c, i] = stk_g[d, c, i]
    copy_into(stk_m[d], stk_m[d + 1])


# Public for agents/rave.py, whose simulations and win-at-once test start from a copy each time.
@njit(cache=True, inline="always")
def copy_position(src, dst):
    """Copy the six state arrays of ``src`` (stones, root, nxt, libs, legal, meta: the tuple
    ``Board.arrays()`` gives) into those of ``dst``, a tuple of arrays of the same shapes."""
    stones, root, nxt, libs, legal, meta = src
    d_stones, d_root, d_nxt, d_libs, d_legal, d_meta = dst
    copy_into(stones, d_stones)
    copy_into(root, d_root)
    copy_into(nxt, d_nxt)
    copy_rows_into(libs, d_libs)
    copy_rows_into(legal, d_legal)
    copy_into(meta, d_meta)


@njit(cache=True, _nrt=False)
def _recompute_legal(stones, root, libs, legal, meta, nbr):
    """Full recomputation of both legal masks (setup positions, tests)."""
    meta[NLEGAL_B] = 0
    meta[NLEGAL_W] = 0
    for p in range(stones.shape[0]):
        ok_b, ok_w = False, False
        if stones[p] == EMPTY:
            ok_b, ok_w = legal_both_by(_liberty_besides, libs, stones, root, nbr, p, BLACK, -1, 0)
        legal[BLACK, p] = ok_b
        legal[WHITE, p] = ok_w
        meta[NLEGAL_B] += ok_b
        meta[NLEGAL_W] += ok_w


@njit(cache=True)
def _liberty_counts(stones, root, libs):
    """Liberty count of the block of every stone (0 on empty points)."""
    out = np.zeros(stones.shape[0], dtype=np.int16)
    for p in range(stones.shape[0]):
        if stones[p] != EMPTY:
            r = root[p]
            if r == p:
                out[p] = liberty_count(libs, r)
    for p in range(stones.shape[0]):
        if stones[p] != EMPTY:
            out[p] = out[root[p]]
    return out


@njit(cache=True, _nrt=False)
def random_playout(stones, root, nxt, libs, legal, meta, nbr, zob, moves):
    """Play uniformly random legal moves until the side to move is stuck; returns the winner.

    ``moves`` is scratch space of length P. Mutates the state arrays in place. Public: the
    MCTS and rollout kernels call it on their own copies of the arrays."""
    area = stones.shape[0]
    while True:
        c = meta[TO_MOVE]
        n = meta[NLEGAL_B + c - 1]
        if n == 0:
            return 3 - c
        # Rejection sampling is uniform and cheap while legal moves are plentiful; fall back to
        # an exact scan when they get scarce (late game).
        p = -1
        if 4 * n >= area:
            for _ in range(8):
                q = np.random.randint(area)
                if legal[c, q]:
                    p = q
                    break
        if p < 0:
            k = 0
            for q in range(area):
                if legal[c, q]:
                    moves[k] = q
                    k += 1
            p = moves[np.random.randint(k)]
        play_stone(stones, root, nxt, libs, legal, meta, nbr, zob, p, c)


@njit(cache=True)
def random_playouts(stones, root, nxt, libs, legal, meta, nbr, zob, count, seed):
    """Run ``count`` random playouts from the given state (left untouched); returns black wins."""
    np.random.seed(seed)
    moves = np.empty(stones.shape[0], dtype=np.int64)
    black_wins = 0
    for _ in range(count):
        s, ro, nx, li, le, me = (stones.copy(), root.copy(), nxt.copy(), libs.copy(),
                                 legal.copy(), meta.copy())
        if random_playout(s, ro, nx, li, le, me, nbr, zob, moves) == BLACK:
            black_wins += 1
    return black_wins


# --------------------------------------------------------------------------------------------
# Board: the Python-facing object
# --------------------------------------------------------------------------------------------


class IllegalMove(ValueError):
    """Raised by Board.play for an occupied, capturing or suicidal move."""


class Board:
    """A NoGo position with history. ``play`` mutates; ``undo`` restores the exact prior state."""

    __slots__ = ("geo", "size", "stones", "root", "nxt", "libs", "legal", "meta", "_history",
                 "moves")

    def __init__(self, size: int = 9):
        self.geo = geometry(size)
        self.size = size
        P, W = self.geo.area, self.geo.words
        self.stones = np.zeros(P, dtype=np.int8)
        self.root = np.full(P, -1, dtype=np.int16)
        self.nxt = np.full(P, -1, dtype=np.int16)
        self.libs = np.zeros((P, W), dtype=np.uint64)
        self.legal = np.zeros((3, P), dtype=np.bool_)
        self.legal[1:] = True
        self.meta = np.zeros(META_LEN, dtype=np.int64)
        self.meta[TO_MOVE] = BLACK
        self.meta[LAST] = self.meta[LAST2] = -1
        # On the empty board every point has an empty neighbour, so all are legal for both.
        self.meta[NLEGAL_B] = self.meta[NLEGAL_W] = P
        self._history: list[tuple] = []
        self.moves: list[tuple[int, int]] = []  # (colour, point) in order played

    # -- state ---------------------------------------------------------------------------
    def arrays(self) -> tuple:
        """The mutable state arrays, in kernel argument order."""
        return (self.stones, self.root, self.nxt, self.libs, self.legal, self.meta)

    def _snapshot(self) -> tuple:
        return tuple(a.copy() for a in self.arrays())

    def _restore(self, snap: tuple) -> None:
        (self.stones, self.root, self.nxt, self.libs, self.legal, self.meta) = snap

    def copy(self) -> "Board":
        b = Board.from_state(self.size, self.arrays())
        b._history = list(self._history)
        b.moves = list(self.moves)
        return b

    @classmethod
    def from_state(cls, size: int, state) -> "Board":
        """A board holding copies of the six state arrays ``state`` (``arrays()``'s order), as
        a search's scratch rows keep positions; it has no move history."""
        b = cls.__new__(cls)
        b.geo, b.size = geometry(size), size
        b._restore(tuple(a.copy() for a in state))
        b._history = []
        b.moves = []
        return b

    @property
    def to_move(self) -> int:
        return int(self.meta[TO_MOVE])

    @to_move.setter
    def to_move(self, c: int) -> None:
        _set_to_move(self.meta, self.geo.zobrist, c)

    @property
    def hash(self) -> int:
        """Zobrist hash of stones and side to move, as an unsigned 64-bit int."""
        return int(self.meta[HASH]) & 0xFFFFFFFFFFFFFFFF

    @property
    def ply(self) -> int:
        return int(self.meta[PLY])

    @property
    def last_move(self) -> int:
        return int(self.meta[LAST])

    # -- rules -----------------------------------------------------------------------------
    def is_legal(self, p: int, colour: int | None = None) -> bool:
        c = self.to_move if colour is None else colour
        return 0 <= p < self.geo.area and bool(self.legal[c, p])

    def legal_mask(self, colour: int | None = None) -> np.ndarray:
        c = self.to_move if colour is None else colour
        return self.legal[c].copy()

    def legal_moves(self, colour: int | None = None) -> np.ndarray:
        c = self.to_move if colour is None else colour
        return np.flatnonzero(self.legal[c])

    def num_legal(self, colour: int | None = None) -> int:
        c = self.to_move if colour is None else colour
        return int(self.meta[NLEGAL_B + c - 1])

    def play(self, p: int, colour: int | None = None) -> None:
        """Play ``colour`` (default: side to move) at p; raise IllegalMove if not legal.

        Afterwards the opponent of ``colour`` is to move (GTP allows either colour to play)."""
        c = self.to_move if colour is None else colour
        if not self.is_legal(p, c):
            where = coords.to_gtp(p, self.size) if 0 <= p < self.geo.area else str(p)
            raise IllegalMove(f"illegal move {where}")
        self._history.append(self._snapshot())
        play_stone(*self.arrays(), self.geo.nbr, self.geo.zobrist, p, c)
        self.moves.append((c, p))

    def undo(self) -> None:
        if not self._history:
            raise IndexError("nothing to undo")
        self._restore(self._history.pop())
        self.moves.pop()

    def can_undo(self) -> bool:
        return bool(self._history)

    def is_terminal(self) -> bool:
        """The side to move has no legal move (and has therefore lost)."""
        return self.num_legal() == 0

    def winner(self) -> int:
        """Winning colour once terminal, else EMPTY."""
        return opponent(self.to_move) if self.is_terminal() else EMPTY

    def liberty_counts(self) -> np.ndarray:
        """Per point: the liberty count of the block there (0 for empty points)."""
        return _liberty_counts(self.stones, self.root, self.libs)

    def block_liberties(self, p: int) -> list[int]:
        """Sorted liberties of the block holding stone p."""
        if self.stones[p] == EMPTY:
            raise ValueError("no stone at that point")
        r = self.root[p]
        return [q for q in range(self.geo.area) if (int(self.libs[r, q >> 6]) >> (q & 63)) & 1]

    def block_of(self, p: int) -> list[int]:
        """Sorted stones of the block holding stone p."""
        r = self.root[p]
        return sorted(int(q) for q in np.flatnonzero(self.root == r)) if r >= 0 else []

    def independent_regions(self) -> list[list[int]]:
        """The empty points split into regions that never interact: two points are in one
        region when they are neighbours or liberties of one block. Whether a move is legal
        depends only on its neighbours and their blocks' liberties, and a move only changes
        blocks whose liberties lie in its own region, so play in one region never changes
        what is legal in another: the position is a sum of independent games, one a region.
        Sorted points in each, regions in order of their first point."""
        area = self.geo.area
        parent = list(range(area))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        empty = [p for p in range(area) if self.stones[p] == EMPTY]
        for p in empty:
            for q in self.geo.nbr[p]:
                if q >= 0 and self.stones[q] == EMPTY:
                    parent[find(int(q))] = find(p)
        blocks = {int(self.root[p]): int(p) for p in np.flatnonzero(self.stones != EMPTY)}
        for stone in blocks.values():
            libs = self.block_liberties(stone)
            for q in libs[1:]:
                parent[find(q)] = find(libs[0])
        regions: dict[int, list[int]] = {}
        for p in empty:
            regions.setdefault(find(p), []).append(p)
        return list(regions.values())

    # -- ASCII --------------------------------------------------------------------------------
    @classmethod
    def from_ascii(cls, text: str, to_move: int | None = None) -> "Board":
        """Board from rows of X/O/. (top row first; spaces ignored; also accepts B/W and +).

        Side to move defaults to black when both colours have as many stones, else white.
        Raises ValueError if a block would have no liberty (not a NoGo position)."""
        rows = [r.replace(" ", "") for r in text.strip().splitlines() if r.strip()]
        size = len(rows)
        if any(len(r) != size for r in rows):
            raise ValueError("ASCII board must be square")
        b = cls(size)
        g = b.geo
        for row, line in enumerate(rows):
            for col, ch in enumerate(line):
                c = {"X": BLACK, "B": BLACK, "x": BLACK, "O": WHITE, "W": WHITE, "o": WHITE}.get(ch)
                if c is None:
                    if ch not in ".+-":
                        raise ValueError(f"bad board character {ch!r}")
                    continue
                _place(b.stones, b.root, b.nxt, b.libs, b.meta, g.nbr, g.zobrist,
                       coords.to_flat(row, col, size), c)
                b.meta[PLY] += 1
        counts = b.liberty_counts()
        if np.any((b.stones != EMPTY) & (counts == 0)):
            raise ValueError("a block has no liberty: not a NoGo position")
        _recompute_legal(b.stones, b.root, b.libs, b.legal, b.meta, g.nbr)
        nb, nw = int(np.sum(b.stones == BLACK)), int(np.sum(b.stones == WHITE))
        b.to_move = to_move if to_move is not None else (BLACK if nb == nw else WHITE)
        return b

    def to_ascii(self) -> str:
        chars = ".XO"
        n = self.size
        return "\n".join(
            " ".join(chars[self.stones[r * n + c]] for c in range(n)) for r in range(n)
        )

    def __str__(self) -> str:
        return self.to_ascii()

    def __repr__(self) -> str:
        return f"Board({self.size}, to_move={COLOUR_NAMES[self.to_move]}, ply={self.ply})"


# The kernels' former private names, for code written before they became public (remove once
# nothing imports them: tests/test_private_imports.py says where).
_play, _random_playout, _liberty_count = play_stone, random_playout, liberty_count

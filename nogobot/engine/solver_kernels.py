"""The exact solver's numba kernels: depth-first negamax on win/loss over a stack of positions,
its transposition table and keys, and the clock it reads inside the search (the static rule of
safe moves it calls is ``solver_static``'s).

NoGo has no draws, so a node is WIN or LOSS for its side to move, and alpha-beta on ±1 reduces
to "is there a move after which the opponent is lost?", cut at the first such move. The rules
kernels have no undo, so each ply is played on a copy one level down a preallocated stack, and
the search is a loop, not recursion (numba's on-disk cache crashes on some recursive functions:
numba issues #6061, #6713). The search loop and what it inlines allocate nothing and run
without numba's reference counts (``board.play_stone`` says why). The large kernels it calls
(``play_child``, ``legal_counts_after``, ``static_value``) are compiled once and called, not
inlined at each call site: numba's inlining retypes the whole body at every site, which made
the solver's cold compile minutes long, and a call without reference counts costs no
measurable speed.

The switches (``cfg``, an int64 array; ``solver.SolverRules`` names them):

* ``C_SAFE``: the static rule of safe moves at every node (``safe_counts``);
* ``C_SAFE_CHILD``: the same rule on each child while ordering: a child lost for the opponent
  wins at once, a child won for the opponent is dropped (the move loses);
* ``C_TT_WORK``: the table's buckets hold two entries and a new one replaces the entry of the
  least work (log2 of the subtree's nodes), an entry of an earlier generation first; off, one
  entry per slot, always replaced;
* ``C_CLOCK_MASK``: the clock is read when the node count's low bits are zero under this mask;
* ``C_DFPN``: depth-first proof-number search (``solver_dfpn``) instead of negamax below the
  root (``solver_root`` chooses);
* ``C_HISTORY``: the history heuristic: each move that proved a win adds the square of the
  empty points where it did (the area less the ply) to ``hist[colour, point]``, and among
  moves of equal mobility the order puts those with more first.

Symmetric positions share a table entry (``sym``): a board symmetry leaves a position's value
unchanged, and the root's own symmetries (its stabilizer) map every position below it onto
positions also below it, which the search then meets once. ``sym`` holds the point permutations
of the symmetries in use (the root's, or another position's, ``solver.image_perms``; identity
left out; none when there are none), each level's meta row carries its position's hash under
each of them from ``IMAGES`` on, and the table's key is the least of those and the position's
own hash (``node_key``). A key is always the plain hash of some image of the position, so entries
stay sound in later calls, and are found again by calls keyed by the same symmetries.
"""

from __future__ import annotations

import threading
import time

from numba import njit, objmode

from ..game.board import (
    EMPTY,
    HASH,
    META_LEN,
    NLEGAL_B,
    PLY,
    TO_MOVE,
    legal_counts_after,
    play_stone,
    push_state,
)
from .solver_static import LOSS, UNKNOWN, WIN, eye_colour, may_settle, static_value

REPLIES_MASK = 255  # score[d, i] & REPLIES_MASK: the opponent's replies after move i
HIST_BITS = 36  # a history count is capped at HIST_MAX within the order's key
HIST_MAX = (1 << HIST_BITS) - 1

C_SAFE, C_SAFE_CHILD, C_TT_WORK, C_CLOCK_MASK, C_GEN, C_DFPN, C_HISTORY = range(7)
CFG_LEN = 8
# stats: the clock stopped the search; nodes settled by the static rule; table hits; the
# node budget left when the clock stopped the search.
S_TIMED_OUT, S_SAFE, S_TT_HITS, S_LEFT = range(4)
STATS_LEN = 4
# A stack level's meta row holds, from this column on, its position's hash under each of the
# root's symmetries in ``sym`` (``solver.search_stack`` widens the rows).
IMAGES = META_LEN
MAX_IMAGES = 7
# Then each colour's eyes (``EYES + c - 1`` for colour c; ``eye_counts``, kept by ``play_child``),
# the static rule's cheap first test.
EYES = IMAGES + MAX_IMAGES
META_WIDTH = EYES + 2


_stop = [False]
# A thread's own stop flag (``halt_thread``): the threads of one solve stop each other this way.
_thread = threading.local()
_NO_HALT = (False,)


def request_stop(stop: bool = True) -> None:
    """Make every search running or started stop at its next read of the clock, as if its time
    were up (Ctrl-C in `nogobot solve`: a signal handler may call it); ``False`` clears it."""
    _stop[0] = stop


def halt_thread(flag) -> None:
    """Make the searches this thread runs stop at their next read of the clock once
    ``flag[0]`` is true (a list shared with the threads that may set it; None: no flag)."""
    _thread.halt = _NO_HALT if flag is None else flag


def _now() -> float:
    if _stop[0] or getattr(_thread, "halt", _NO_HALT)[0]:
        return float("inf")
    return time.perf_counter()


@njit(cache=True)
def clock() -> float:
    """``time.perf_counter()`` from inside a kernel, or infinity once ``request_stop`` was
    called (an object-mode block: a few microseconds, so the search reads it only every
    ``C_CLOCK_MASK + 1`` nodes). Not inlined: numba does not inline a function holding an
    object-mode block."""
    with objmode(t="float64"):
        t = _now()
    return t


# -- the transposition table ------------------------------------------------------------------
# keys int64 [n], vals int8 [n] (WIN / LOSS, 0 empty), work uint8 [n] (bit length of the nodes
# its proof took), gen uint8 [n] (the solve call that stored it). n is a power of two; a bucket
# is the pair of slots 2k, 2k + 1. A slot's key is the position's Zobrist hash (side to move
# included) XOR a constant of its value (``_seal``), so threads may share the table without
# locks: a slot read while another thread writes it pairs one write's key with the other's
# value, fails the check and reads as empty (Hyatt's lockless hashing). work and gen only guide
# replacement, where a race costs nothing but a worse choice.

SEAL_WIN = 0x5DEECE66D1F3A7B9
SEAL_LOSS = 0x2545F4914F6CDD1D


@njit(cache=True, inline="always")
def _seal(v):
    return SEAL_WIN if v == WIN else SEAL_LOSS


@njit(cache=True, inline="always")
def _slot_value(keys, vals, i, h):
    """Position h's value in slot i, or 0 when the slot holds another position (or a torn
    write). The value is read once: a second read could see another write's."""
    v = vals[i]
    return v if v != 0 and keys[i] == (h ^ _seal(v)) else 0


@njit(cache=True, inline="always")
def tt_get(keys, vals, h):
    i = h & (keys.shape[0] - 2)
    v = _slot_value(keys, vals, i, h)
    return v if v != 0 else _slot_value(keys, vals, i + 1, h)


@njit(cache=True, inline="always")
def _bit_length(x):
    n = 0
    while x > 0:
        n += 1
        x >>= 1
    return n


@njit(cache=True, inline="always")
def tt_put(keys, vals, work, gen, cfg, h, v, nodes):
    mask = keys.shape[0] - 1
    w = min(_bit_length(nodes), 255)
    if cfg[C_TT_WORK] == 0:
        i = h & mask
    else:
        i = h & (mask - 1)
        j = i + 1
        if _slot_value(keys, vals, j, h) != 0:
            i = j
        elif _slot_value(keys, vals, i, h) == 0:
            # The slot of least work, counting an entry of an earlier call as none (the game
            # has moved on: most old positions cannot recur) and an empty slot as none.
            wi = work[i] if (vals[i] != 0 and gen[i] == cfg[C_GEN]) else -1
            wj = work[j] if (vals[j] != 0 and gen[j] == cfg[C_GEN]) else -1
            if wj < wi:
                i = j
    keys[i] = h ^ _seal(v)
    vals[i] = v
    work[i] = w
    gen[i] = cfg[C_GEN]


@njit(cache=True, inline="always")
def node_key(meta, sym):
    """The table's key for a level's position: the least of its hash and its images' hashes
    under the root's symmetries, so that symmetric positions share an entry."""
    h = meta[HASH]
    for k in range(sym.shape[0]):
        h = min(h, meta[IMAGES + k])
    return h


@njit(cache=True, inline="always")
def play_images(meta, sym, zob, p, c):
    """After colour c played p at this level: update its images' hashes (the stone lands on
    each symmetry's image of p; the side to move changes)."""
    turn = zob[0, zob.shape[1] - 1]
    for k in range(sym.shape[0]):
        meta[IMAGES + k] ^= zob[c, sym[k, p]] ^ turn


@njit(cache=True, inline="always")
def child_key(meta, sym, zob, p, c):
    """``node_key`` of the position after colour c plays p, without playing it."""
    turn = zob[0, zob.shape[1] - 1]
    h = meta[HASH] ^ zob[c, p] ^ turn
    for k in range(sym.shape[0]):
        x = meta[IMAGES + k] ^ zob[c, sym[k, p]] ^ turn
        h = min(h, x)
    return h


# -- the solver's columns of a meta row ----------------------------------------------------------


@njit(cache=True, inline="always")
def _eye_after(stones, nbr, q, p, c):
    """Whether empty point q is an eye of c once c has played p (p counts as c's stone)."""
    for k in range(4):
        n = nbr[q, k]
        if n >= 0 and n != p and stones[n] != c:
            return False
    return True


@njit(cache=True, inline="always")
def eyes_after(meta, stones, nbr, p, c):
    """c's eyes once c has played p, from the position before it (its meta row's count): p
    stops being one if it was (the opponent cannot play an eye of c), and an empty neighbour
    of p may become one. Only c's eyes change, since nothing is ever captured."""
    e = meta[EYES + c - 1]
    if eye_colour(stones, nbr, p) == c:
        e -= 1
    for k in range(4):
        q = nbr[p, k]
        if q >= 0 and stones[q] == EMPTY and _eye_after(stones, nbr, q, p, c):
            e += 1
    return e


@njit(cache=True, _nrt=False)
def play_child(d, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, sym, p):
    """Play the side to move's stone at p from level d into level d + 1 (``push_state``, then
    ``play_stone``), with the solver's columns of its meta row: the images' hashes
    (``play_images``) and the mover's eyes (``eyes_after``)."""
    c = stk_m[d][TO_MOVE]
    e = eyes_after(stk_m[d], stk_s[d], nbr, p, c)
    push_state(stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, d)
    play_stone(stk_s[d + 1], stk_r[d + 1], stk_n[d + 1], stk_l[d + 1], stk_g[d + 1],
               stk_m[d + 1], nbr, zob, p, c)
    play_images(stk_m[d + 1], sym, zob, p, c)
    stk_m[d + 1][EYES + c - 1] = e


# -- the search ----------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def order_children(d, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, moves,
                   score, uf, hist, sym, cfg, stats):
    """Generate the moves at level d into ``moves[d]``, best first; return their count, or -1
    when one of them wins at once (the opponent has no reply, the table holds its position as
    lost for the opponent, or, with ``C_SAFE_CHILD``, its safe moves settle it so); that move
    is then ``moves[d, 0]``.

    Each move's legal counts after it, the opponent's and our own, are read without playing
    it (``board.legal_counts_after``; a move is played one level down only where its eyes let
    the static rule settle the child, ``may_settle``): moves that leave the opponent the fewest
    replies and us the most end games soonest and are the likeliest wins, so a winning node is
    usually cut at its first child. ``score[d, i]`` keeps each move's key, the opponent's reply
    count in its low byte (``REPLIES_MASK``). With ``C_SAFE_CHILD`` a move after which the
    opponent statically wins is left out (it loses)."""
    meta = stk_m[d]
    c = meta[TO_MOVE]
    o = 3 - c
    stones = stk_s[d]
    legal = stk_g[d]
    area = legal.shape[1]
    # A child the table holds lost for the opponent wins at once: look for one before reading
    # any move's counts (a probe costs far less than a move's counts).
    for p in range(area):
        if legal[c, p] and tt_get(keys, vals, child_key(meta, sym, zob, p, c)) == LOSS:
            moves[d, 0] = p
            return -1
    n = 0
    for p in range(area):
        if not legal[c, p]:
            continue
        nb, nw = legal_counts_after(stones, stk_r[d], stk_l[d], legal, meta, nbr, p, c)
        opp, mine = (nw, nb) if c == 1 else (nb, nw)
        if opp == 0:
            moves[d, 0] = p
            return -1
        if cfg[C_SAFE_CHILD] and may_settle(opp, mine, meta[EYES + o - 1],
                                            eyes_after(meta, stones, nbr, p, c)):
            play_child(d, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, sym, p)
            m1 = stk_m[d + 1]
            sv = static_value(stk_s[d + 1], stk_r[d + 1], stk_g[d + 1], m1, m1[EYES], m1[EYES + 1],
                              nbr, uf)
            if sv == LOSS:
                stats[S_SAFE] += 1
                moves[d, 0] = p
                return -1
            if sv == WIN:
                stats[S_SAFE] += 1
                continue
        # The order's key, with the opponent's reply count in the low byte (df-pn's initial
        # disproof number; ties go to the fewer replies).
        key = 2 * opp - mine
        if cfg[C_HISTORY]:  # among moves of equal mobility, more history first
            key = (key << HIST_BITS) + HIST_MAX - min(hist[c, p], HIST_MAX)
        key = key * 256 + opp
        # insertion sort: at most a few dozen moves
        i = n
        while i > 0 and score[d, i - 1] > key:
            moves[d, i] = moves[d, i - 1]
            score[d, i] = score[d, i - 1]
            i -= 1
        moves[d, i] = p
        score[d, i] = key
        n += 1
    return n


@njit(cache=True, inline="always")
def enter_node(d, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, work, gen,
               moves, score, budget, entry, uf, hist, sym, cfg, deadline, stats):
    """A node's entry, shared by negamax and df-pn: (value, n). The value is WIN or LOSS when
    the node is settled at once (no legal move, the table, the static rule, a child that wins
    at once); UNKNOWN with n = -1 when the node budget or the clock stops the search (then, for
    the clock, ``budget[0]`` is 0, its value before in ``stats[S_LEFT]``); else UNKNOWN and its
    n ordered moves in ``moves[d]`` (``order_children``), its budget on entry in ``entry[d]``."""
    meta = stk_m[d]
    c = meta[TO_MOVE]
    if meta[NLEGAL_B + c - 1] == 0:
        return LOSS, 0
    h = node_key(meta, sym)
    v = int(tt_get(keys, vals, h))
    if v != 0:
        stats[S_TT_HITS] += 1
        return v, 0
    if budget[0] <= 0:
        return UNKNOWN, -1
    budget[0] -= 1
    if deadline > 0 and (budget[0] & cfg[C_CLOCK_MASK]) == 0 and clock() > deadline:
        stats[S_LEFT] = budget[0]
        budget[0] = 0
        stats[S_TIMED_OUT] = 1
        return UNKNOWN, -1
    if cfg[C_SAFE]:
        v = int(static_value(stk_s[d], stk_r[d], stk_g[d], meta, meta[EYES], meta[EYES + 1], nbr,
                             uf))
        if v != UNKNOWN:
            stats[S_SAFE] += 1
            tt_put(keys, vals, work, gen, cfg, h, v, 1)
            return v, 0
    entry[d] = budget[0] + 1
    n = order_children(d, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, moves,
                       score, uf, hist, sym, cfg, stats)
    if n < 0:
        tt_put(keys, vals, work, gen, cfg, h, WIN, 1)
        return WIN, 0
    return UNKNOWN, n


@njit(cache=True, _nrt=False)
def negamax(start, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals, work, gen,
            moves, score, budget, nmov, nxt_i, unknown, entry, uf, hist, sym, cfg, deadline,
            stats):
    """WIN/LOSS for the side to move at stack level ``start``, or UNKNOWN when the node budget
    (``budget[0]``) runs out or the clock passes ``deadline`` (a ``perf_counter`` time, none
    when <= 0; then ``budget[0]`` is set to 0 and ``stats[S_TIMED_OUT]`` to 1).

    Per level (the workspaces ``nmov``, ``nxt_i``, ``unknown``, ``entry``): how many ordered
    moves it has, the next one to try, whether one was unknown, the budget when it was
    entered (the proof's work, for the table)."""
    ENTER, NEXT, RETURN = 0, 1, 2
    d = start
    mode = ENTER
    v = UNKNOWN
    while True:
        if mode == ENTER:
            mode = RETURN
            v, n = enter_node(d, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, keys, vals,
                              work, gen, moves, score, budget, entry, uf, hist, sym, cfg,
                              deadline, stats)
            if v != UNKNOWN or n < 0:
                continue
            nmov[d] = n
            nxt_i[d] = 0
            unknown[d] = False
            mode = NEXT
        elif mode == NEXT:
            i = nxt_i[d]
            if i < nmov[d]:
                p = moves[d, i]
                c = stk_m[d][TO_MOVE]
                if tt_get(keys, vals, child_key(stk_m[d], sym, zob, p, c)) == WIN:
                    # The table holds the child won for the opponent (as its entry would say):
                    # the move loses, and the child need not be played.
                    stats[S_TT_HITS] += 1
                    nxt_i[d] += 1
                    continue
                play_child(d, stk_s, stk_r, stk_n, stk_l, stk_g, stk_m, nbr, zob, sym, p)
                d += 1
                mode = ENTER
            else:
                if unknown[d]:
                    v = UNKNOWN
                else:
                    v = LOSS
                    tt_put(keys, vals, work, gen, cfg, node_key(stk_m[d], sym), LOSS,
                           entry[d] - budget[0])
                mode = RETURN
        else:  # RETURN: v is the value at level d for its side to move
            if d == start:
                return v
            d -= 1
            if v == LOSS:  # the child is lost for its mover: this level wins
                v = WIN
                tt_put(keys, vals, work, gen, cfg, node_key(stk_m[d], sym), WIN,
                       entry[d] - budget[0])
                if cfg[C_HISTORY]:
                    empty = stk_s.shape[1] - stk_m[d][PLY]
                    hist[stk_m[d][TO_MOVE], moves[d, nxt_i[d]]] += empty * empty
            else:
                if v == UNKNOWN:
                    unknown[d] = True
                nxt_i[d] += 1
                mode = NEXT


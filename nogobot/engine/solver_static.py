"""The exact solver's static rule of safe moves: each colour's eyes and safe moves, the most moves
it can still make, and the verdict they settle without search (``static_value``, which the
search calls; its helpers are inlined into it). docs/solver.md ("What it does") states the
rule and why it is sound.
"""

from __future__ import annotations

from numba import njit

from ..game.board import EMPTY, NLEGAL_B, TO_MOVE

WIN, LOSS, UNKNOWN = 1, -1, 0  # a position's value for its side to move


@njit(cache=True, inline="always")
def eye_colour(stones, nbr, p):
    """The colour whose stones are every neighbour of point p (its eye, when p is empty), or 0
    when no one colour's are."""
    col = 0
    for k in range(4):
        q = nbr[p, k]
        if q < 0:
            continue
        s = stones[q]
        if s == EMPTY or (col != 0 and s != col):
            return 0
        col = s
    return col


@njit(cache=True)
def eye_counts(stones, nbr):
    """(black's, white's) eyes: empty points whose every neighbour is a stone of that colour."""
    eyes_b = eyes_w = 0
    for p in range(stones.shape[0]):
        if stones[p] == EMPTY:
            col = eye_colour(stones, nbr, p)
            if col == 1:
                eyes_b += 1
            elif col == 2:
                eyes_w += 1
    return eyes_b, eyes_w


@njit(cache=True, inline="always")
def _find(uf, x):
    while uf[x] != x:
        uf[x] = uf[uf[x]]
        x = uf[x]
    return x


@njit(cache=True, inline="always")
def safe_counts(stones, root, nbr, uf):
    """(black's, white's) safe moves: moves a colour can make whatever either side plays.

    An eye of colour c is an empty point whose every neighbour is a stone of c: the opponent
    can never play it (its stone would have no liberty), and stones never leave. Join c's
    blocks through their eyes: in each joined group with E eyes, c can fill E - 1 of them,
    furthest first from one it keeps (each fill's block touches the eye kept or one nearer it,
    still empty, so it keeps a liberty), whatever else happens on the board. So c's safe moves
    number (eyes) - (groups with an eye). ``uf`` is scratch, int16 [4 * area + 1], all -1
    (its first half used here), and left so."""
    area = stones.shape[0]
    eyes_b = eyes_w = 0
    groups_b = groups_w = 0  # distinct blocks touched by an eye, less the joins: the groups
    top = 0
    for p in range(area):
        if stones[p] != EMPTY:
            continue
        col = eye_colour(stones, nbr, p)
        if col == 0:
            continue
        first = -1
        for k in range(4):
            q = nbr[p, k]
            if q < 0:
                continue
            r = root[q]
            if uf[r] < 0:
                uf[r] = r
                uf[area + top] = r
                top += 1
                if col == 1:
                    groups_b += 1
                else:
                    groups_w += 1
            if first < 0:
                first = r
                continue
            a = _find(uf, first)
            b = _find(uf, r)
            if a != b:
                uf[b] = a
                if col == 1:
                    groups_b -= 1
                else:
                    groups_w -= 1
        if col == 1:
            eyes_b += 1
        else:
            eyes_w += 1
    for i in range(top):
        uf[uf[area + i]] = -1
    return eyes_b - groups_b, eyes_w - groups_w


@njit(cache=True, inline="always")
def move_bounds(stones, nbr, legal, scratch):
    """(black's, white's) most moves left: the points each may play now (a point illegal for a
    colour stays so), less one in each region of empty points that touches no stone of that
    colour: its stones there could only take liberties from each other, so they never fill
    the region. ``scratch`` as ``safe_counts``'s, its third and fourth quarters used here."""
    area = stones.shape[0]
    mark = 2 * area
    queue = 3 * area
    most_b = most_w = 0
    tail = 0
    for p in range(area):
        if stones[p] != EMPTY or scratch[mark + p] != -1:
            continue
        head = tail
        scratch[mark + p] = 1
        scratch[queue + tail] = p
        tail += 1
        size = legal_b = legal_w = 0
        touch_b = touch_w = False
        while head < tail:
            q = scratch[queue + head]
            head += 1
            size += 1
            legal_b += legal[1, q]
            legal_w += legal[2, q]
            for k in range(4):
                r = nbr[q, k]
                if r < 0:
                    continue
                s = stones[r]
                if s == EMPTY:
                    if scratch[mark + r] == -1:
                        scratch[mark + r] = 1
                        scratch[queue + tail] = r
                        tail += 1
                elif s == 1:
                    touch_b = True
                else:
                    touch_w = True
        most_b += legal_b if touch_b else min(legal_b, size - 1)
        most_w += legal_w if touch_w else min(legal_w, size - 1)
    for i in range(tail):
        scratch[mark + scratch[queue + i]] = -1
    return most_b, most_w


@njit(cache=True, inline="always")
def may_settle(legal_me, legal_opp, eyes_me, eyes_opp):
    """False where the static rule cannot settle a position, from its legal counts and eyes
    alone: a colour's safe moves are at most its eyes less one, and its most moves left at
    least half the points it may play now, rounded up (``move_bounds`` takes one off only in a
    region of two or more points, all playable)."""
    return eyes_me - 1 > (legal_opp + 1) >> 1 or eyes_opp - 1 >= (legal_me + 1) >> 1


@njit(cache=True, _nrt=False)
def static_value(stones, root, legal, meta, eyes_b, eyes_w, nbr, scratch):
    """WIN or LOSS for the side to move when its safe moves settle the game, else UNKNOWN.

    A colour makes at most ``move_bounds`` more moves. The side to move wins when its safe
    moves outnumber the opponent's most: it plays them and the opponent runs out first; it
    loses when the opponent's safe moves are at least its own most: the opponent answers every
    move.

    Cheap bounds go first (``may_settle``; ``eyes_b``, ``eyes_w`` are ``eye_counts``, which the
    search keeps with each stone), so the scans run only where the rule can fire."""
    c = meta[TO_MOVE]
    o = 3 - c
    least_me = (meta[NLEGAL_B + c - 1] + 1) >> 1
    least_opp = (meta[NLEGAL_B + o - 1] + 1) >> 1
    eyes_me, eyes_opp = (eyes_b, eyes_w) if c == 1 else (eyes_w, eyes_b)
    if not may_settle(meta[NLEGAL_B + c - 1], meta[NLEGAL_B + o - 1], eyes_me, eyes_opp):
        return UNKNOWN
    sb, sw = safe_counts(stones, root, nbr, scratch)
    if sb == 0 and sw == 0:
        return UNKNOWN
    s_me, s_opp = (sb, sw) if c == 1 else (sw, sb)
    if s_me <= least_opp and s_opp < least_me:
        return UNKNOWN
    mb, mw = move_bounds(stones, nbr, legal, scratch)
    most_me, most_opp = (mb, mw) if c == 1 else (mw, mb)
    if s_me > most_opp:
        return WIN
    if s_opp >= most_me:
        return LOSS
    return UNKNOWN

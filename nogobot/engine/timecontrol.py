"""Time management: how long to think for this move, and when to stop thinking.

The failure this module exists to prevent (NoGoZero+ at CCGC 2020): too much time in the first
half of the game, nonsense moves when the clock ran low. Two layers:

1. ``plan_move`` — a pure budget function. Inputs: the time control, what is left on our clock,
   the position's progress (through the NoGo game-length model), and a ``TimePolicy`` (lag buffer,
   reserve, minimum per move, cap, floor on moves to plan for). Output: a ``MoveBudget`` with a
   planned time and a hard maximum (the most an unstable position may extend to).
2. ``SearchStopper`` — the hook the search calls between batches (``search.SearchProgress``):
   stop early once the most visited move cannot be overtaken in the planned time left (after a
   warm-up, so the playout rate is trusted); at the planned time stop if the choice is stable,
   otherwise extend up to the maximum while the most visited move is not the highest valued or
   the root value is falling.

NoGo game-length model (fitted on 9×9 games, see ``expected_plies_left``): a game ends when the
side to move has no legal move, and legal moves disappear at a steady rate, so the remaining
plies are almost linear in the mean of both sides' legal-move counts: ``0.91·m − 0.4`` with a
residual std of 1.5 plies over 640 random and one-ply-greedy games (74 plies on average). We plan
for the 75th percentile (+2 plies) and never for fewer than ``moves_floor`` own moves, so the
spending decays geometrically near the end instead of hitting zero. The model is in units of legal
moves, so it scales with board area by construction.

Kinds of time control (seconds everywhere): ``none``, ``absolute`` (sudden death), ``byoyomi``
(main, then ``count`` periods of ``period``), ``canadian`` (main, then ``count`` stones per
``period``), ``fischer`` (main + ``increment`` per move), ``per_move`` (a fixed ``period`` each
move, Botzone style).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

KINDS = ("none", "absolute", "byoyomi", "canadian", "fischer", "per_move")

PLIES_PER_LEGAL = 0.91  # remaining plies per mean legal move (fit; module docstring)
PLIES_MARGIN = 2.0  # ≈ 75th percentile of the residual


@dataclass(frozen=True)
class TimeControl:
    """A time control. ``count`` is periods (byo-yomi) or stones (Canadian)."""

    kind: str = "none"
    main: float = 0.0
    period: float = 0.0
    count: int = 0
    increment: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown time control {self.kind!r}")
        for v in (self.main, self.period, self.increment):
            if not math.isfinite(v) or v < 0:
                raise ValueError("durations must be finite and >= 0")
        if self.count < 0:
            raise ValueError("counts must be >= 0")
        if self.kind in ("byoyomi", "canadian") and self.count < 1 and self.period > 0:
            raise ValueError(f"{self.kind} needs at least one period/stone")

    # -- how controllers say it -------------------------------------------------------------
    @classmethod
    def from_time_settings(cls, main: float, byo: float, stones: int) -> "TimeControl":
        """GTP ``time_settings``: stones 0 and byo > 0 is no limit (GoGui sends ``0 1 0``),
        stones 0 and byo 0 is sudden death, anything else Canadian."""
        if stones == 0:
            return cls("none") if byo > 0 else cls("absolute", main)
        return cls("canadian", main, byo, stones)

    @classmethod
    def from_kgs(cls, kind: str, values: list[float]) -> "TimeControl":
        """``kgs-time_settings`` arguments after the kind (already numbers)."""
        arity = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
        if kind not in arity or len(values) != arity[kind]:
            raise ValueError(f"bad kgs-time_settings {kind} {values}")
        if not all(math.isfinite(v) for v in values):
            raise ValueError("time values must be finite")
        if kind in ("byoyomi", "canadian") and values[2] != int(values[2]):
            raise ValueError("periods/stones must be an integer")
        if kind == "none":
            return cls("none")
        if kind == "absolute":
            return cls("absolute", values[0])
        return cls(kind, values[0], values[1], int(values[2]))

    @classmethod
    def sudden_death(cls, seconds: float) -> "TimeControl":
        return cls("absolute", seconds)

    @classmethod
    def per_move(cls, seconds: float) -> "TimeControl":
        return cls("per_move", period=seconds)

    def describe(self) -> str:
        return {
            "none": "no time limit",
            "absolute": f"{self.main:g} s sudden death",
            "byoyomi": f"{self.main:g} s + {self.count} x {self.period:g} s byo-yomi",
            "canadian": f"{self.main:g} s + {self.count} stones / {self.period:g} s",
            "fischer": f"{self.main:g} s + {self.increment:g} s per move",
            "per_move": f"{self.period:g} s per move",
        }[self.kind]


@dataclass
class ClockState:
    """What is left on one player's clock. ``stones``/``periods`` only matter in overtime."""

    main_left: float = 0.0
    period_left: float = 0.0  # time left in the current Canadian period / byo-yomi period
    periods_left: int = 0  # byo-yomi periods left
    stones_left: int = 0  # Canadian stones left in the current period
    # The share of a plan a searched move really uses (early stops bank the rest). Plans are
    # divided by it, so banked time is spent; it starts at 2/3 and follows the game.
    use_ratio: float = 2.0 / 3.0

    @classmethod
    def start(cls, tc: TimeControl) -> "ClockState":
        return cls(tc.main, tc.period, tc.count if tc.kind == "byoyomi" else 0,
                   tc.count if tc.kind == "canadian" else 0)

    def record_use(self, used: float, planned: float) -> None:
        """Follow how much of its plan a searched move used (moving average, bounded)."""
        if planned > 0:
            self.use_ratio = 0.7 * self.use_ratio + 0.3 * min(max(used / planned, 0.3), 1.5)

    def in_overtime(self, tc: TimeControl) -> bool:
        return tc.kind in ("byoyomi", "canadian") and self.main_left <= 0

    def charge(self, tc: TimeControl, seconds: float) -> bool:
        """Spend ``seconds`` on one move; False if that lost on time."""
        if tc.kind in ("none", "per_move"):
            return tc.kind == "none" or seconds <= tc.period
        if tc.kind == "fischer":
            self.main_left -= seconds
            if self.main_left < 0:
                return False
            self.main_left += tc.increment
            return True
        if self.main_left > 0:
            spend = min(seconds, self.main_left)
            self.main_left -= spend
            seconds -= spend
            if seconds <= 0 or tc.kind == "absolute":
                return seconds <= 0
        if tc.kind == "absolute":
            return False
        if tc.kind == "byoyomi":
            # A period is used up only when a move overruns it.
            while seconds > tc.period:
                seconds -= tc.period
                self.periods_left -= 1
                if self.periods_left <= 0:
                    return False
            return self.periods_left > 0
        # Canadian: period_left for stones_left stones.
        self.period_left -= seconds
        if self.period_left < 0:
            return False
        self.stones_left -= 1
        if self.stones_left <= 0:
            self.period_left, self.stones_left = tc.period, tc.count
        return True


@dataclass(frozen=True)
class TimePolicy:
    """Knobs of the budget (seconds). Defaults are tuned for 9×9 NoGo, 15-minute sudden death;
    docs/engine.md ("Time control") gives the measurements behind them."""

    lag_buffer: float = 0.25  # subtracted per move for GTP/pipe/harness latency
    # Moves paid from main time keep back only this share of the lag buffer: an overrun there
    # comes out of the reserve, and the engine's own clock already counts from a command's
    # receipt to its reply, so what is left is pipe latency (milliseconds).
    main_lag_share: float = 0.2
    reserve: float = 0.02  # share of the main time never planned (safety), at least 2 lag buffers
    min_per_move: float = 0.05  # never plan less (an emergency move is policy + a tiny search)
    max_share: float = 0.12  # never plan more than this share of what is left
    moves_floor: float = 6.0  # plan for at least this many own moves (geometric tail)
    extend_factor: float = 2.0  # an unstable position may think up to this × the plan
    no_limit_seconds: float = 5.0  # per move when there is no time limit
    # A move where the endgame solver is tried first (``SolverZones.tries``) counts as this
    # share of a thinking move, and one inside its reach (``SolverZones.reach``), where it
    # usually proves the game, as the second: about the chance that the move still needs its
    # search (counted as whole moves, the time kept for them is stranded once the proof comes).
    try_weight: float = 0.6
    reach_weight: float = 0.2
    # ... but a try never less than this many seconds (while an even share gives them): the
    # solver may spend about the plan (half the maximum: solver.solver_budget), and a try at
    # 27-28 empty points needs up to about 2 s.
    try_floor_seconds: float = 2.0
    # ... and a move in the reach never less than this (about 300,000 solver nodes).
    reach_floor_seconds: float = 1.0
    # ... and, while moves above the zones remain, a try keeps at most this many seconds for
    # later (the reach shrinks in step, down to reach_floor_seconds): planned at 20 s, a try's
    # maximum gives the solver its whole node budget, so on a long clock the rest goes to the
    # moves above the zones instead of being stranded by the proof.
    try_cap_seconds: float = 20.0
    # ... and no floor above this share of the main time: at a short clock the floors would
    # keep a large share for moves whose proof often comes first (at 15 s, 2 s is 13%).
    floor_share: float = 1.0
    # Each move the solver will answer keeps this many lag buffers back (below).
    solver_keep_share: float = 0.5
    # An unsettled position (the root's win rate within this of 0.5) stops early only when the
    # runner-up could not catch the most visited move by the move's maximum, not its plan, so
    # the time settled positions bank goes to the moves where the game is decided (0: off).
    unsettled_band: float = 0.0
    # The opening: own moves with more than ``opening_empty`` empty points count as
    # ``opening_weight`` of a move (1.0: no difference; needs the position's empty points), so
    # the clock they do not take goes to the middle game, where games between searchers of
    # equal strength are decided. The network engine keeps 1.0; rave plans its opening at 0.6
    # of a move (agents.rave).
    opening_empty: int = 61
    opening_weight: float = 1.0
    # The decisive band: own moves with at most ``decisive_empty`` empty points, above the
    # solver's first try (or ``decisive_floor`` without one), count as ``decisive_weight`` of a
    # move, so the plan gives them that many times an even share: games between searchers of
    # equal strength are decided there, where the value net reads about 0.5 and the solver
    # cannot reach yet (1.0: no difference; needs the position's empty points).
    decisive_empty: int = 40
    decisive_floor: int = 28
    decisive_weight: float = 1.0


def policy_with(policy: TimePolicy, settings: list[str]) -> TimePolicy:
    """``policy`` with ``NAME=VALUE`` settings of its fields applied (a number each, >= 0);
    ValueError naming the setting otherwise."""
    known = {f.name: f.type for f in fields(TimePolicy)}
    changes: dict[str, float] = {}
    for item in settings:
        name, sep, text = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in known:
            raise ValueError(f"{item!r}: expected NAME=VALUE with NAME one of "
                             + ", ".join(sorted(known)))
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{item!r}: {text!r} is not a number") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{item!r}: must be a finite number >= 0")
        if known[name] in ("int", int):
            if value != int(value):
                raise ValueError(f"{item!r}: must be a whole number")
            value = int(value)
        changes[name] = value
    return replace(policy, **changes)


@dataclass(frozen=True)
class SolverZones:
    """Where a player's endgame solver works, in empty points (0: it does not). From the most
    empty points down: the search tries the solver first (``tries``), the solver usually proves
    the game within a move (``reach``), and it answers at once (``exact``). The time plan counts
    the first two as shares of a move and does not plan for the last."""

    exact: int = 0
    reach: int = 0
    tries: int = 0

    def __bool__(self) -> bool:
        return self.exact > 0


NO_SOLVER = SolverZones()


@dataclass(frozen=True)
class MoveBudget:
    planned: float  # aim to stop here when the choice is stable
    maximum: float  # never think longer (extensions stop here)
    emergency: bool = False  # clock nearly out: play policy + a tiny search
    bankable: bool = True  # False when unused time is lost (per move, byo-yomi periods)
    # False when the time an early stop banks would have nothing left to be spent on (the
    # move holds at least half of what is usable): think to the plan even if the choice is clear.
    early_stop: bool = True
    unsettled_band: float = 0.0  # ``TimePolicy.unsettled_band``, for the stop hook

    def after(self, spent: float, floor: float = 0.01) -> "MoveBudget":
        """The budget left once ``spent`` seconds of this move are gone (e.g. loading)."""
        if spent <= 0:
            return self
        return replace(self, planned=max(self.planned - spent, floor),
                       maximum=max(self.maximum - spent, floor))


def expected_plies_left(legal_to_move: int, legal_other: int) -> float:
    """Expected remaining plies (75th percentile) from the legal-move counts of both sides."""
    return PLIES_PER_LEGAL * 0.5 * (legal_to_move + legal_other) + PLIES_MARGIN


def expected_own_moves_left(legal_to_move: int, legal_other: int) -> float:
    return math.ceil(expected_plies_left(legal_to_move, legal_other) / 2.0 + 0.5)


def apply_lag(t: float, lag: float) -> float:
    """KataGo's lag buffer: subtract it, but only halve times shorter than twice the buffer."""
    return t * 0.5 if t < 2 * lag else t - lag


def _own_moves_above(empty_points: int, limit: int) -> int:
    """Own moves left (this one included) before the board has ``limit`` empty points:
    stones never leave a NoGo board, so each pair of plies fills exactly two points."""
    return math.ceil(max(empty_points - limit, 0) / 2)


def _shape(empty_points: int | None, policy: TimePolicy, first: int) -> tuple[float, float]:
    """(the weight the opening's and the decisive band's own moves left take off the plan,
    this move's weight). ``first`` is where the band ends: the solver's first try."""
    if empty_points is None:
        return 0.0, 1.0
    opening = _own_moves_above(empty_points, policy.opening_empty)
    band = (_own_moves_above(empty_points, first)
            - _own_moves_above(empty_points, max(policy.decisive_empty, first)))
    lighter = opening * (1.0 - policy.opening_weight) + band * (1.0 - policy.decisive_weight)
    if empty_points > policy.opening_empty:
        this = policy.opening_weight
    elif first < empty_points <= policy.decisive_empty:
        this = policy.decisive_weight
    else:
        this = 1.0
    return lighter, this


def _zone_share(zones: tuple, usable: float, moves: int, policy: TimePolicy,
                shape: tuple[float, float] = (0.0, 1.0), main: float = 0.0) -> float:
    """This move's share of the usable time when the moves where the solver is tried count as
    ``try_weight`` of a move and those in its reach as ``reach_weight``, but a try keeps at least
    ``try_floor_seconds`` and a move of the reach ``reach_floor_seconds`` while an even share
    allows it, and, seen from the moves above the zones, a try at most ``try_cap_seconds``: the
    solver needs seconds, not a share of the clock (at 900 s a try keeps 20 s where a share
    would keep 40-50 s). No floor exceeds ``floor_share`` of the ``main`` time (when it has
    one)."""
    full, tried, reached, this = zones
    lighter, this_weight = shape
    even = max(usable / moves, 1e-9)
    top = policy.floor_share * main if main > 0 else math.inf
    try_floor = min(policy.try_floor_seconds, top)
    reach_floor = min(policy.reach_floor_seconds, top)
    w_try = max(policy.try_weight, min(1.0, try_floor / even))
    w_reach = max(policy.reach_weight, min(1.0, reach_floor / even))
    weighted = full - lighter + w_try * tried + w_reach * reached
    if weighted <= 0:
        return 1.0
    per_full = usable / weighted  # a move of weight 1 above the zones
    if full > 0 and w_try * per_full > policy.try_cap_seconds:
        keep_try = policy.try_cap_seconds
        keep_reach = max(keep_try * w_reach / w_try, min(reach_floor, keep_try))
        per_full = (usable - keep_try * tried - keep_reach * reached) / (full - lighter)
        w_try, w_reach = keep_try / per_full, keep_reach / per_full
        weighted = full - lighter + w_try * tried + w_reach * reached
    return (this_weight, w_try, w_reach)[this] / weighted


def plan_move(tc: TimeControl, clock: ClockState, legal_to_move: int, legal_other: int,
              policy: TimePolicy = TimePolicy(), empty_points: int | None = None,
              solver: SolverZones = NO_SOLVER) -> MoveBudget:
    """The budget for the next move. Pure: depends only on its arguments.

    With ``empty_points`` and a ``solver`` (the player's endgame solver answers at or below
    ``solver.exact`` empty points, instantly), those last moves are not planned for: their time
    goes to the moves before them. Moves at or below ``solver.tries`` empty points (where the
    search tries the solver first) count as ``policy.try_weight`` of a move each, and those at or
    below ``solver.reach`` (where it usually proves the game) as ``policy.reach_weight``."""
    lag = policy.lag_buffer
    if tc.kind == "none":
        t = policy.no_limit_seconds
        return MoveBudget(t, t * policy.extend_factor)
    if tc.kind == "per_move":
        t = max(policy.min_per_move, apply_lag(tc.period, lag))
        return MoveBudget(t, t, bankable=False)
    all_moves = max(policy.moves_floor, expected_own_moves_left(legal_to_move, legal_other))
    moves = all_moves  # the moves that will need thinking time
    zones = None  # own moves left in the solver's zones (full, tried, reached, this one's)
    # The solver's zones from the top: where it is first tried, where it usually proves.
    reach = max(solver.reach, solver.exact)
    first = max(solver.tries, reach) if solver else policy.decisive_floor
    if empty_points is not None and solver:
        # Stones never leave a NoGo board, so the solver's first move is exactly
        # empty_points - solver.exact plies away: no floor is needed against a misestimate
        # there, and a floor would leave a geometric tail of the clock unspent.
        full = _own_moves_above(empty_points, first)
        tried = _own_moves_above(empty_points, reach) - full
        thinking = _own_moves_above(empty_points, solver.exact)
        if thinking < all_moves:
            moves = max(1, thinking)
            zones = (full, tried, thinking - full - tried,
                     0 if empty_points > first else (1 if empty_points > reach else 2))
    solved_moves = all_moves - moves  # answered by the solver: only their lag is kept back

    if clock.in_overtime(tc):
        if tc.kind == "byoyomi":
            per = apply_lag(tc.period, lag)
            return MoveBudget(per, per, emergency=per < policy.min_per_move * 4, bankable=False)
        stones = max(clock.stones_left, 1)
        per = apply_lag(clock.period_left / stones, lag)
        hard = apply_lag(clock.period_left / (0.75 * stones + 0.25), lag)
        # Time saved now helps only the period's remaining stones; on its last stone (e.g. GTP
        # "time_settings 0 1 1", how harnesses state 1 s per move) it is lost at the reset.
        return MoveBudget(min(per, hard), hard, emergency=per < policy.min_per_move * 4,
                          bankable=stones > 1)

    # Main time (absolute, Fischer, or the main phase of byo-yomi/Canadian).
    # Each move the solver answers keeps half a lag buffer (it answers in milliseconds once the
    # first proof is found; the first search takes up to ~0.2 s at 22 empty points); a
    # thinking move keeps the main-time share of one.
    solver_keep = policy.solver_keep_share * lag * solved_moves
    lag = lag * policy.main_lag_share
    guaranteed = 0.0  # what each move may also spend once main time is gone (overtime)
    if tc.kind == "byoyomi":
        guaranteed = apply_lag(tc.period, lag)
    elif tc.kind == "canadian" and tc.count > 0:
        guaranteed = apply_lag(tc.period / tc.count, lag)
    reserve = max(policy.reserve * tc.main, 2 * lag) if guaranteed == 0 else 0.0
    usable = clock.main_left - reserve - lag * moves - solver_keep
    if tc.kind == "fischer":
        # Future increments are spendable later, never on this move (added after it).
        usable += tc.increment * (moves - 1)
    if usable <= policy.min_per_move * moves:
        # Emergency: spend a fixed share of what is left, so the clock decays geometrically and
        # never reaches zero (shared with the moves the solver answers, which need time too);
        # never below the minimum (policy + a tiny search).
        t = max(policy.min_per_move, (clock.main_left - lag) / (2 * all_moves) + guaranteed)
        if tc.kind == "fischer":
            t = max(policy.min_per_move, min(t, (clock.main_left + tc.increment) / 4))
        return MoveBudget(t, t, emergency=True)
    # This move's share of the usable time.
    shape = _shape(empty_points, policy, first)
    if zones is not None:
        share = _zone_share(zones, usable, moves, policy, shape, tc.main)
    else:
        lighter, this_weight = shape
        weighted = max(moves - lighter, this_weight)
        share = this_weight / weighted
    planned = usable * share / min(max(clock.use_ratio, 0.5), 1.0) + guaranteed
    # The cap guards against a misjudged game length; it never stops an even share.
    cap = usable * max(policy.max_share, share) + guaranteed
    planned = max(policy.min_per_move, min(planned, cap))
    hard_cap = max(clock.main_left - reserve - lag - solver_keep, 0.0) + guaranteed
    if tc.kind == "fischer":
        hard_cap = min(hard_cap, max(clock.main_left - 2 * lag, 0.0))
    maximum = min(planned * policy.extend_factor, cap * policy.extend_factor, hard_cap)
    # An extension never takes more than half of what the plan keeps for the moves after this
    # one: near the end a move's plan holds most of the clock, and an unstable last search
    # would leave the solver's moves only an emergency share.
    maximum = min(maximum, planned + 0.5 * max(usable - (planned - guaranteed), 0.0))
    maximum = max(maximum, policy.min_per_move)
    return MoveBudget(min(planned, maximum), maximum, early_stop=share < 0.5,
                      unsettled_band=policy.unsettled_band)


class SearchStopper:
    """The search's ``should_stop`` hook for one move (see search.SearchProgress).

    * when the budget is not bankable (per-move controls, byo-yomi periods): never stop early,
      since time saved now is lost (Leela Zero does the same);
    * before ``warmup`` seconds or 100 playouts: never stop (the playout rate is not trusted);
    * any time: stop when the runner-up cannot catch the most visited move in the planned time
      left at the current rate ("unassailable"), unless the budget says the banked time would
      have nothing left to be spent on (``MoveBudget.early_stop``); in an unsettled position
      (``MoveBudget.unsettled_band``) the time left to the maximum counts instead;
    * at the planned time: stop if the most visited move is also the best valued and the root
      value has not fallen by more than ``falling``; otherwise extend, up to the maximum, which the
      search enforces as its hard time limit."""

    def __init__(self, budget: MoveBudget, warmup: float = 0.1, falling: float = 0.05):
        self.budget = budget
        self.warmup = min(warmup, budget.planned / 2)
        self.falling = falling
        self.start_value: float | None = None
        self.extended = False

    def __call__(self, progress) -> str | None:
        if not self.budget.bankable:
            return None  # time not used now is lost: search to the limit
        if self.start_value is None and progress.playouts >= 100:
            self.start_value = progress.root_value
        if progress.elapsed < self.warmup or progress.playouts < 100:
            return None  # too early to judge; the search's hard limit is the budget's maximum
        rate = progress.playouts / max(progress.elapsed, 1e-6)
        # root_value is in [-1, 1]: a win rate within the band of 0.5 is within twice it of 0.
        unsettled = abs(progress.root_value) < 2 * self.budget.unsettled_band
        horizon = self.budget.maximum if unsettled else self.budget.planned
        left = max(horizon - progress.elapsed, 0.0) * rate
        if (self.budget.early_stop and progress.elapsed < self.budget.planned
                and progress.best_is_highest_q
                and progress.best_visits - progress.second_visits > left):
            return "unassailable"
        if progress.elapsed >= self.budget.planned:
            falling = (self.start_value is not None
                       and progress.root_value < self.start_value - self.falling)
            if progress.best_is_highest_q and not falling:
                return "planned"
            self.extended = True
        return None

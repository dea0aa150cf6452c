"""The referee's clock: what to tell engines, and when a side has lost on time.

What a time control is, and how a move is charged to it, belongs to ``nogobot.engine.timecontrol`` (the
engine's time manager): ``RefereeTimeControl`` is that class plus two settings only the
referee uses (``tolerance``, ``max_move``), and each side's clock is a ``timecontrol.ClockState``.
The harness offers the controls GTP's ``time_settings`` can state (Canadian byo-yomi); a spec
names them (spec.py) as:

============  ========================  =========  =============================================
spec kind     spec fields               kind       model
============  ========================  =========  =============================================
sudden_death  main                      absolute   main time only; flag when it runs out
byoyomi       main, period, stones (1)  canadian   after main time, ``stones`` moves per
                                                   ``period`` seconds, the period refilling after
                                                   each block (stones 1 = Japanese byo-yomi with
                                                   one period)
per_move      seconds                   per_move   every move within ``seconds`` (told to engines
                                                   as byo-yomi: main 0, period = seconds, stones 1)
none          max_move (600)            none       no clock; a move taking longer than
                                                   ``max_move`` is treated as a hang and loses on
                                                   time
============  ========================  =========  =============================================

A move may overrun what is left by ``tolerance`` seconds (network/OS lag, process start-up of
the reply) without losing; the overrun counts in the time used but is forgiven on the clock (it
is charged what was left, so the clock reads zero rather than going negative). The time measured
is wall time from sending ``genmove`` to receiving the full reply (see gtp_client).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..engine import timecontrol

GTP_KINDS = ("none", "absolute", "canadian", "per_move")  # what time_settings can state


def _num(x: float) -> str:
    """GTP wants integers; send decimals only when the setting really has a fraction."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class RefereeTimeControl(timecontrol.TimeControl):
    """``timecontrol.TimeControl`` plus ``tolerance`` (seconds a move may overrun what is left)
    and ``max_move`` (kind none: a move taking longer is a hang)."""

    tolerance: float = 0.5
    max_move: float = 600.0

    @classmethod
    def per_move(cls, seconds: float, tolerance: float = 0.5) -> "RefereeTimeControl":
        return cls("per_move", period=seconds, tolerance=tolerance)

    @classmethod
    def sudden_death(cls, seconds: float, tolerance: float = 0.5) -> "RefereeTimeControl":
        return cls("absolute", seconds, tolerance=tolerance)

    def gtp_time_settings(self) -> str:
        """The ``time_settings`` command for this control (GTP: main byo_time byo_stones)."""
        if self.kind not in GTP_KINDS:
            raise ValueError(f"GTP time_settings cannot state a {self.kind} time control")
        main, period, stones = {
            "none": (0, 1, 0),  # byo > 0 with 0 stones: no time limit
            "absolute": (self.main, 0, 0),
            "canadian": (self.main, self.period, self.count),
            "per_move": (0, self.period, 1),
        }[self.kind]
        return f"time_settings {_num(main)} {_num(period)} {stones}"

    def sgf_overtime(self) -> str | None:
        """SGF OT property text, if there is overtime."""
        if self.kind == "canadian":
            return f"{self.count}/{self.period:g} Canadian"
        if self.kind == "per_move":
            return f"1/{self.period:g} Canadian"
        return None


class SideClock:
    """One player's clock during a game: a ``ClockState`` charged by ``timecontrol``'s rules,
    with the referee's tolerance and hang limit on top."""

    def __init__(self, tc: RefereeTimeControl):
        if tc.kind not in GTP_KINDS:
            raise ValueError(f"the referee cannot run a {tc.kind} clock (it plays "
                             f"{', '.join(GTP_KINDS)})")
        self.tc = tc
        self.state = timecontrol.ClockState.start(tc)
        self.used = 0.0

    @property
    def in_byo(self) -> bool:
        """In byo-yomi: Canadian periods once main time is gone, per move always."""
        return self.tc.kind == "per_move" or self.state.in_overtime(self.tc)

    def _left(self) -> float:
        """Seconds this move may take before flagging, tolerance not included."""
        tc, st = self.tc, self.state
        if tc.kind == "none":
            return tc.max_move
        if tc.kind == "per_move":
            return tc.period
        if self.in_byo:
            return st.period_left
        # Main time, and then (Canadian) the whole first period.
        return st.main_left + (tc.period if tc.kind == "canadian" else 0.0)

    def limit(self) -> float:
        """Seconds this move may take before flagging, tolerance included."""
        return self._left() + (0.0 if self.tc.kind == "none" else self.tc.tolerance)

    def time_left_args(self) -> tuple[float, int]:
        """(seconds, stones) for ``time_left``: stones is 0 while main time is running."""
        tc, st = self.tc, self.state
        if tc.kind == "none":
            return tc.max_move, 0
        if tc.kind == "per_move":
            return tc.period, 1
        if self.in_byo:
            return max(st.period_left, 0.0), st.stones_left
        return max(st.main_left, 0.0), 0

    def time_left_command(self, colour: str) -> str:
        secs, stones = self.time_left_args()
        # Rounded down so an engine never believes it has more time than it has. Whole seconds
        # as GTP asks, unless the control itself has fractions (then centiseconds, which
        # nogobot and KataGo accept; GTP-strict engines cannot play such controls anyway).
        tc = self.tc
        if float(tc.main).is_integer() and float(tc.period).is_integer():
            return f"time_left {colour} {int(secs)} {stones}"
        return f"time_left {colour} {math.floor(secs * 100) / 100:g} {stones}"

    def charge(self, elapsed: float) -> bool:
        """Charge a move that took ``elapsed`` seconds; False if the side has lost on time."""
        self.used += elapsed
        ok = elapsed <= self.limit()
        tc, st = self.tc, self.state
        if tc.kind == "canadian" and 0 < st.main_left < elapsed:
            # Main time runs out; the rest of the move runs in the first period (charged apart,
            # so that forgiving an overrun below leaves that period at exactly zero).
            elapsed -= st.main_left
            st.charge(tc, st.main_left)
        st.charge(tc, min(elapsed, self._left()))  # an overrun within the tolerance is forgiven
        return ok

    def remaining_text(self) -> str:
        secs, stones = self.time_left_args()
        if self.tc.kind == "none":
            return "-"
        return f"{secs:.1f}s" + (f"/{stones}" if self.in_byo else "")

"""The referee's clock: time controls, what to tell engines, when a side has lost on time.

One model covers every control the harness offers, GTP's own (Canadian byo-yomi):

===============  ==========================  =================================================
kind             spec fields                 model
===============  ==========================  =================================================
sudden_death     main                        main time only; flag when it runs out
byoyomi          main, period, stones (1)    after main time, ``stones`` moves per ``period``
                                             seconds, the period refilling after each block
                                             (stones 1 = Japanese byo-yomi with one period)
per_move         seconds                     every move within ``seconds`` (= byoyomi with
                                             main 0, period = seconds, stones 1)
none             max_move (600)              no clock; a move taking longer than ``max_move``
                                             is treated as a hang and loses on time
===============  ==========================  =================================================

A move may overrun what is left by ``tolerance`` seconds (network/OS lag, process start-up of
the reply) without losing; the overrun is still charged. The time measured is wall time from
sending ``genmove`` to receiving the full reply (see gtp_client).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

KINDS = ("sudden_death", "byoyomi", "per_move", "none")


def _num(x: float) -> str:
    """GTP wants integers; send decimals only when the setting really has a fraction."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class TimeControl:
    kind: str = "none"
    main: float = 0.0
    period: float = 0.0
    stones: int = 0
    tolerance: float = 0.5
    max_move: float = 600.0

    @classmethod
    def per_move(cls, seconds: float, tolerance: float = 0.5) -> "TimeControl":
        return cls("per_move", 0.0, seconds, 1, tolerance)

    @classmethod
    def sudden_death(cls, main: float, tolerance: float = 0.5) -> "TimeControl":
        return cls("sudden_death", main, 0.0, 0, tolerance)

    def gtp_time_settings(self) -> str:
        """The ``time_settings`` command for this control (GTP: main byo_time byo_stones)."""
        if self.kind == "none":
            return "time_settings 0 1 0"  # byo > 0 with 0 stones: no time limit
        return f"time_settings {_num(self.main)} {_num(self.period)} {self.stones}"

    def describe(self) -> str:
        if self.kind == "none":
            return "no time limit"
        if self.kind == "sudden_death":
            return f"{self.main:g} s sudden death"
        if self.kind == "per_move":
            return f"{self.period:g} s per move"
        return f"{self.main:g} s + {self.stones} stone(s) / {self.period:g} s byo-yomi"

    def sgf_overtime(self) -> str | None:
        """SGF OT property text, if there is overtime."""
        if self.kind in ("byoyomi", "per_move"):
            return f"{self.stones}/{self.period:g} Canadian"
        return None


class SideClock:
    """One player's clock during a game."""

    def __init__(self, tc: TimeControl):
        self.tc = tc
        self.main_left = tc.main
        self.in_byo = tc.kind in ("byoyomi", "per_move") and tc.main <= 0
        self.period_left = tc.period
        self.stones_left = tc.stones
        self.used = 0.0

    def limit(self) -> float:
        """Seconds this move may take before flagging, tolerance included."""
        tc = self.tc
        if tc.kind == "none":
            return tc.max_move
        if tc.kind == "sudden_death":
            return self.main_left + tc.tolerance
        if self.in_byo:
            return self.period_left + tc.tolerance
        return self.main_left + tc.period + tc.tolerance

    def time_left_args(self) -> tuple[float, int]:
        """(seconds, stones) for ``time_left``: stones is 0 while main time is running."""
        if self.tc.kind == "none":
            return self.tc.max_move, 0
        if self.in_byo:
            return max(self.period_left, 0.0), self.stones_left
        return max(self.main_left, 0.0), 0

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
        tc = self.tc
        self.used += elapsed
        if tc.kind == "none":
            return elapsed <= tc.max_move
        if tc.kind == "sudden_death":
            self.main_left -= elapsed
            ok = self.main_left >= -tc.tolerance
            self.main_left = max(self.main_left, 0.0)
            return ok
        if not self.in_byo:
            if elapsed <= self.main_left:
                self.main_left -= elapsed
                return True
            elapsed -= self.main_left  # the rest of this move runs in the first period
            self.main_left = 0.0
            self.in_byo = True
            self.period_left, self.stones_left = tc.period, tc.stones
        self.period_left -= elapsed
        if self.period_left < -tc.tolerance:
            return False
        self.period_left = max(self.period_left, 0.0)  # an overrun within tolerance is forgiven
        self.stones_left -= 1
        if self.stones_left <= 0:
            self.period_left, self.stones_left = tc.period, tc.stones
        return True

    def remaining_text(self) -> str:
        secs, stones = self.time_left_args()
        if self.tc.kind == "none":
            return "-"
        return f"{secs:.1f}s" + (f"/{stones}" if self.in_byo else "")

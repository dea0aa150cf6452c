"""Clock settings as received over GTP (time_settings, kgs-time_settings, time_left, --time).

This module only parses, validates and stores; deciding how long to think is the time manager's
job (a later issue). All durations are seconds (floats); GTP sends integers, we also accept
decimals. Conventions (GTP spec §6.3.4, KGS extension):

========== ======================================= =====================================
kind       fields                                  meaning
========== ======================================= =====================================
none       -                                       no time limit
absolute   main                                    sudden death: main seconds per game
byoyomi    main, period, count (= periods)         then count periods of `period` s
canadian   main, period, count (= stones)          then `count` stones per `period` s
========== ======================================= =====================================

``time_settings main byo stones``: ``byo > 0, stones == 0`` means no limit (GoGui sends
``0 1 0``); ``byo == 0, stones == 0`` is absolute; anything else is Canadian.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

KINDS = ("none", "absolute", "byoyomi", "canadian")


@dataclass(frozen=True)
class ClockSettings:
    """One time control. Build it with the ``from_*`` constructors, which validate."""

    kind: str = "none"
    main: float = 0.0
    period: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown time control {self.kind!r}")
        for value in (self.main, self.period):
            if not math.isfinite(value) or value < 0:
                raise ValueError("durations must be finite and >= 0")
        if self.count < 0:
            raise ValueError("counts must be >= 0")
        if self.kind in ("byoyomi", "canadian") and self.count < 1 and self.period > 0:
            raise ValueError(f"{self.kind} needs at least one period/stone")

    @classmethod
    def from_time_settings(cls, main: float, byo: float, stones: int) -> ClockSettings:
        if stones == 0:
            return cls("none") if byo > 0 else cls("absolute", main)
        return cls("canadian", main, byo, stones)

    @classmethod
    def from_kgs(cls, kind: str, values: list[float]) -> ClockSettings:
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
    def sudden_death(cls, seconds: float) -> ClockSettings:
        return cls("absolute", seconds)

    def describe(self) -> str:
        if self.kind == "none":
            return "no time limit"
        text = f"{self.kind} {self.main:g}s"
        if self.kind == "byoyomi":
            text += f" + {self.count}x{self.period:g}s"
        elif self.kind == "canadian":
            text += f" + {self.count} stones/{self.period:g}s"
        return text


@dataclass
class Clock:
    """Settings plus what the controller told us (time_left) and when the game started.

    ``left[colour] = (seconds, stones, monotonic time received)`` from the last ``time_left``;
    ``started`` is the monotonic time of the last clear_board/boardsize (gogui-twogtp never
    sends time_left, so the engine must run its own clock from there)."""

    settings: ClockSettings = field(default_factory=ClockSettings)
    left: dict[str, tuple[float, int, float]] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    used: dict[str, float] = field(default_factory=lambda: {"b": 0.0, "w": 0.0})

    def restart(self) -> None:
        self.left.clear()
        self.started = time.monotonic()
        self.used = {"b": 0.0, "w": 0.0}

    def set_time_left(self, colour: str, seconds: float, stones: int) -> None:
        if not math.isfinite(seconds) or stones < 0:
            raise ValueError("bad time_left")
        self.left[colour] = (seconds, stones, time.monotonic())

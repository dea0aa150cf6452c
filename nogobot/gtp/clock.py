"""The engine's game clock as GTP sets it (time_settings, kgs-time_settings, time_left, --time).

The time control itself and the budget rules live in ``nogobot.engine.timecontrol``
(``TimeControl``, ``ClockState``). This module keeps, per colour, what is left: the engine runs
its own clock from ``clear_board`` (gogui-twogtp sends ``time_settings`` once and never
``time_left``),
charging each ``genmove`` the time from receiving the command to answering it, and a
``time_left`` from the controller overrides that colour's state (keeping the own clock's finer
reading where it falls inside the second a whole-seconds ``time_left`` rounds down from).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from ..engine.timecontrol import ClockState, TimeControl

KINDS = ("none", "absolute", "byoyomi", "canadian")


def finer_main_left(said: float, own: float) -> float:
    """Main time left when a controller says ``said`` and the engine's own clock ``own``.

    GTP's ``time_left`` is whole seconds, and controllers round down: the truth lies in
    [said, said + 1). The engine's own clock misses only the pipe's latency (milliseconds a
    move, which the plan keeps back), so it is never below the truth: where it falls in that
    second it is the finer reading (at 15 s the rounding alone hides half a second on
    average). Anything else, or a controller that gives fractions, is taken as said."""
    if said.is_integer() and said <= own < said + 1:
        return own
    return said


@dataclass
class Clock:
    """Settings plus each colour's remaining time.

    ``left[colour] = (seconds, stones, monotonic time received)`` from the last ``time_left``;
    ``used`` is the thinking time charged per colour since the game started; ``states`` the
    resulting ``ClockState`` per colour."""

    settings: TimeControl = field(default_factory=TimeControl)
    left: dict[str, tuple[float, int, float]] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    used: dict[str, float] = field(default_factory=lambda: {"b": 0.0, "w": 0.0})
    states: dict[str, ClockState] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        self.left.clear()
        self.started = time.monotonic()
        self.used = {"b": 0.0, "w": 0.0}
        self.states = {c: ClockState.start(self.settings) for c in "bw"}

    def set_time_left(self, colour: str, seconds: float, stones: int) -> None:
        """The controller's word for ``colour``: main time left, or (in overtime) the time left
        in the current period with ``stones`` stones (Canadian) or periods (byo-yomi) left."""
        if not math.isfinite(seconds) or stones < 0:
            raise ValueError("bad time_left")
        self.left[colour] = (seconds, stones, time.monotonic())
        tc, st = self.settings, self.states[colour]
        if stones == 0 or tc.kind not in ("byoyomi", "canadian"):
            st.main_left = finer_main_left(seconds, st.main_left)
        else:
            st.main_left = 0.0
            st.period_left = seconds
            if tc.kind == "canadian":
                st.stones_left = stones
            else:
                st.periods_left = stones

    def charge(self, colour: str, seconds: float) -> None:
        """Charge ``seconds`` of thinking to ``colour`` (its own clock)."""
        self.used[colour] += seconds
        self.states[colour].charge(self.settings, seconds)

    def state(self, colour: str) -> ClockState:
        return self.states[colour]

"""Analysis over GTP: GoGui analyze commands, live graphics and interrupt, Sabaki/Lizzie
analysis streams, and the engine parameters. A handler composed beside the game's
``NoGoCommands`` (commands.py): ``Engine(game, AnalyzeCommands(game))``.

What the user sees is described in docs/gui-and-gtp.md (the analysis sections). In short:

* ``gogui-analyze_commands`` lists board views GoGui draws: the network's policy as a heat map
  (``gfx`` COLOR + LABEL, or a ``dboard``), the dominion map (``dboard``), search visits
  (``gfx``), candidate moves (``pspairs`` and a ``hstring`` table), the principal variation
  (``varc``), value and score (``string``) and ``nogobot-param`` (``param``: playouts, seconds,
  c_puct, threads, ponder, live_gfx, live_gfx_interval, lag_buffer);
* while ``genmove`` (and the search-based analyze commands) think, ``gogui-gfx:`` blocks on
  stderr show visits, the principal variation and a status line (``live_gfx``: ``auto`` turns
  them on once GoGui asked for ``gogui-analyze_commands``); ``gogui-interrupt`` is listed, so
  GoGui stops a long search with a raw ``# interrupt`` line and the move found so far is played;
* ``lz-analyze``, ``kata-analyze`` and ``analyze`` stream ``info move ...`` lines at the asked
  interval until ANY input line arrives, then close the reply with the blank line; the
  ``*genmove_analyze`` forms stream while the move is searched and end with ``play <move>``.

Conventions: values in GoGui views are from the point of view of the colour asked for (``%c``,
default the side to move); ``dboard`` dominion is positive for Black (GoGui draws positive values
black); Sabaki values are for the side to move in the analysed position (LZ: integers x10000,
kata: floats with a decimal point). The search-based GoGui views search the current position once
(the configured playouts, else ``seconds``) and reuse that search until the position, colour or a
parameter changes.

The reply texts (info lines, gfx, boards, tables) are built by the pure functions of views.py;
what a running search shows (live graphics, info lines) is live.py's. The searches are the
network player's own (``MCTSAgent.search`` and ``select_move`` with ``search.SearchHooks``);
what an agent can do is what it declares (``can_analyze``). Uses of the game handler: ``board``,
``log``, ``ponder``, ``time_policy``, ``agent``, ``get_agent()``, ``generate(colour, play)``,
and its ``watch`` hook, set while a genmove has something to show. Imports only the standard
library at start-up (GoGui's referee copy of the engine must start fast); numpy and the search
load on first use.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass
from typing import Any

from ..engine.candidates import Candidate, shown, tree_candidates
from ..game import coords
from . import live, views
from .engine import Channel, GtpError, color, command, integer
from .views import BLACK, COLOUR, NAME, AnalyzeRequest, parse_analyze_args

UNLIMITED_VISITS = 2**62  # analysis searches until input arrives (or the tree is full)

ANALYZE_COMMANDS = (
    "param/Engine parameters/nogobot-param",
    "gfx/Policy heat map/nogobot-policy %c",
    "dboard/Policy (board)/nogobot-policy_board %c",
    "dboard/Dominion (network)/nogobot-dominion %c",
    "string/Value and score/nogobot-value %c",
    "gfx/Search visits/nogobot-visits %c",
    "pspairs/Candidate moves/nogobot-candidates %c",
    "hstring/Candidate table/nogobot-candidates_table %c",
    "varc/Principal variation/nogobot-pv %c",
)


# Commands only the network player answers; an engine without it (``nogobot agent NAME``,
# ``nogobot gtp --agent greedy``) does not list them (GoGui would show a dead Analyze menu).
NETWORK_COMMANDS = (
    "nogobot-policy", "nogobot-policy_board", "nogobot-dominion", "nogobot-value",
    "nogobot-visits", "nogobot-candidates", "nogobot-candidates_table", "nogobot-pv",
    "lz-analyze", "kata-analyze", "analyze", "lz-genmove_analyze", "kata-genmove_analyze",
    "genmove_analyze", "gogui-interrupt",
)


@dataclass
class _Search:
    """A finished search of one position, kept for the GoGui views."""

    key: tuple
    visits: int
    playouts: int
    seconds: float
    winrate: float
    reason: str
    candidates: list[Candidate]


def _flavoured(method: str, flavour: str, name: str):
    """The GTP command ``name``: ``self.<method>(flavour, args)``, its reply as that returns."""

    def cmd(self, *args: str):
        return getattr(self, method)(flavour, args)

    cmd.__name__ = cmd.__qualname__ = "cmd_" + name.replace("-", "_")
    return command(name)(cmd)


class AnalyzeCommands:
    """GTP handler: analysis commands, live graphics, interrupt, parameters of ``game`` (the
    ``NoGoCommands`` it is composed with)."""

    def __init__(self, game: Any, *, live_gfx: str = "auto", gfx_stream: Any = None,
                 network: bool = True):
        if live_gfx not in ("auto", "on", "off"):
            raise ValueError(f"live_gfx must be auto, on or off, not {live_gfx!r}")
        self.game = game
        # Not offered without the network player (the protocol engine drops them).
        self.hidden_commands = () if network else NETWORK_COMMANDS
        self.channel = Channel()  # replaced by the engine's (attach_channel)
        self.live_gfx_interval = 0.5
        self.gfx_stream = gfx_stream  # None: sys.stderr at the time of writing
        self._gogui = False  # GoGui asked for its analyze commands: live_gfx auto turns on
        self._param_version = 0  # part of the search cache key
        self._last_search: _Search | None = None
        self._nn: tuple | None = None  # (key, work board, Evaluation row)
        self._analysis: tuple[str, AnalyzeRequest] | None = None  # genmove_analyze in progress
        self.live_gfx = live_gfx  # sets game.watch

    def attach_channel(self, channel: Channel) -> None:
        """Called by the protocol engine: its input events and partial output."""
        self.channel = channel

    @property
    def live_gfx(self) -> str:
        """auto, on or off: GoGui graphics on the log stream while genmove searches."""
        return self._live_gfx

    @live_gfx.setter
    def live_gfx(self, value: str) -> None:
        self._live_gfx = value
        self._update_watch()

    def _update_watch(self) -> None:
        """Watch the game's genmove searches only while there is something to show, so a
        plain genmove runs no code of this module."""
        showing = self._analysis is not None or self._live_gfx_on()
        self.game.watch = self._genmove_hooks if showing else None

    # -- GoGui --------------------------------------------------------------------------------
    @command("gogui-analyze_commands")
    def cmd_gogui_analyze_commands(self) -> str:
        self._gogui = True
        self._update_watch()
        return "\n".join(c for c in ANALYZE_COMMANDS
                         if c.split("/")[2].split()[0] not in self.hidden_commands)

    @command("gogui-interrupt")
    def cmd_gogui_interrupt(self) -> None:
        """Listing it tells GoGui to send ``# interrupt`` during long commands (handled by the
        protocol engine's reader, which sets ``channel.interrupted``)."""

    @command("nogobot-param")
    def cmd_nogobot_param(self, key: str = None, value: str = None) -> str | None:
        """Without arguments: the GoGui ``param`` list. ``key value`` sets; ``key`` shows.
        Builds the move generator (loads the network): the values shown are its own."""
        params = self._params()
        if key is None:
            return "\n".join(f"[{kind}] {k} {v}" for k, (kind, v) in params.items())
        if key not in params:
            raise GtpError(f"unknown parameter {key} (known: {' '.join(params)})")
        if value is None:
            return str(params[key][1])
        self._set_param(key, value)
        return None

    def _params(self) -> dict[str, tuple[str, str]]:
        """key -> (GoGui type, current value) for the agent in use."""
        agent = self.game.get_agent()
        policy = self._policy()
        out: dict[str, tuple[str, str]] = {}
        if agent.can_analyze:
            out["playouts"] = ("string", str(agent.playouts or 0))
        out["seconds"] = ("string", f"{policy.no_limit_seconds:g}")
        if agent.can_analyze:
            out["c_puct"] = ("string", f"{agent.config.c_puct:g}")
            out["threads"] = ("string", str(agent.evaluator.threads))
        out["ponder"] = ("bool", "1" if self.game.ponder else "0")
        out["live_gfx"] = ("bool", "1" if self._live_gfx_on() else "0")
        out["live_gfx_interval"] = ("string", f"{self.live_gfx_interval:g}")
        out["lag_buffer"] = ("string", f"{policy.lag_buffer:g}")
        return out

    def _policy(self):
        from ..engine.timecontrol import TimePolicy

        return self.game.time_policy or TimePolicy()

    def _set_param(self, key: str, value: str) -> None:
        try:
            self._apply_param(key, value)
        except ValueError as e:
            raise GtpError(f"invalid value for {key}: {e}") from None
        self._param_version += 1

    def _apply_param(self, key: str, value: str) -> None:
        if key == "ponder":
            self.game.ponder = views.parse_bool(value)
            return
        if key == "live_gfx":
            self.live_gfx = "on" if views.parse_bool(value) else "off"
            return
        if key == "live_gfx_interval":
            self.live_gfx_interval = _positive(value)
            return
        if key in ("seconds", "lag_buffer"):
            v = _positive(value) if key == "seconds" else _non_negative(value)
            name = "no_limit_seconds" if key == "seconds" else "lag_buffer"
            self.game.time_policy = dataclasses.replace(self._policy(), **{name: v})
            if key == "seconds" and self.game.agent is not None:
                self.game.agent.seconds = v
            return
        agent = self.game.get_agent()  # the keys below are listed only when can_analyze
        if key == "playouts":
            agent.playouts = integer(value) or None
        elif key == "c_puct":
            agent.set_c_puct(_positive(value))
        elif key == "threads":
            n = integer(value)
            if n < 1:
                raise ValueError("at least 1")
            if agent.set_threads(n):
                self.game.log(f"param: network now uses {n} threads")

    def _live_gfx_on(self) -> bool:
        return self.live_gfx == "on" or (self.live_gfx == "auto" and self._gogui)

    # -- searching (genmove, GoGui views, analysis) ---------------------------------------------
    def _genmove_hooks(self, agent, work):
        """``game.watch`` while something is shown: the hooks of a genmove's search (live
        graphics, ``genmove_analyze`` lines). The game adds the GoGui interrupt."""
        return self._hooks(agent, work, self._analysis)

    def _hooks(self, agent, work, analysis: tuple[str, AnalyzeRequest] | None = None,
               stop=None):
        """``search.SearchHooks`` for a search of ``work``: GoGui graphics (when on), analysis
        lines (``analysis`` = (flavour, request)), stopped by ``stop``."""
        return live.search_hooks(agent.searcher(work.size), work,
                                 write_line=lambda line: self.channel.write_partial(line),
                                 gfx_write=self._gfx_write if self._live_gfx_on() else None,
                                 gfx_interval=self.live_gfx_interval, analysis=analysis,
                                 stop=stop)

    def _search(self, agent, work, limits, analysis: tuple[str, AnalyzeRequest] | None = None,
                stop=None):
        """One search of ``work`` by the network player with the live hooks, stopped by
        ``stop`` (default: a GoGui interrupt)."""
        return agent.search(work, limits, self._hooks(agent, work, analysis,
                                                      stop or self.channel.interrupted))

    def _searched(self, colour: int | None) -> tuple[Any, _Search | None]:
        """The current position (``colour`` to move) and its search, run now unless the last
        one is of this very position and settings. (board, None) when ``colour`` is stuck."""
        work = self._work(colour)
        key = (work.size, work.hash, len(work.moves), work.to_move, self._param_version)
        if self._last_search is not None and self._last_search.key == key:
            return work, self._last_search
        if work.num_legal() == 0:
            return work, None
        agent = self._network_agent()
        from ..engine.search import SearchLimits

        seconds = self._policy().no_limit_seconds
        limits = SearchLimits(playouts=agent.playouts,
                              seconds=None if agent.playouts else seconds)
        result = self._search(agent, work.copy(), limits)
        cands = tree_candidates(agent.searcher(work.size), result)
        self._last_search = _Search(key, result.visits, result.playouts, result.seconds,
                                    result.winrate, result.reason, cands)
        self.game.log(f"analyze: searched {result.visits} visits in {result.seconds:.2f}s "
                 f"({result.reason})")
        return work, self._last_search

    def _work(self, colour: int | None):
        work = self.game.board.copy()
        if colour is not None:
            work.to_move = colour
        return work

    def _network_agent(self):
        agent = self.game.get_agent()
        if not agent.can_analyze:
            raise GtpError("this needs the network player (nogobot gtp --agent mcts)")
        return agent

    def _network(self, colour: int | None):
        """(board, Evaluation of it) for the current position with ``colour`` to move."""
        work = self._work(colour)
        key = (work.size, work.hash, len(work.moves), work.to_move)
        if self._nn is not None and self._nn[0] == key:
            return self._nn[1], self._nn[2]
        agent = self._network_agent()
        ev = agent.evaluator.evaluate_boards([work])
        self._nn = (key, work, ev)
        return work, ev

    # -- live graphics --------------------------------------------------------------------------
    def _gfx_write(self, text: str) -> None:
        stream = self.gfx_stream if self.gfx_stream is not None else sys.stderr
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):
            pass

    # -- GoGui views: network -------------------------------------------------------------------
    def _colour_arg(self, c: str | None) -> int | None:
        return None if c is None else COLOUR[c]

    def _priors(self, colour: int | None):
        from ..net.inference import priors

        work, ev = self._network(colour)
        return work, priors(ev.policy_logits[0], work.legal_mask())

    @command("nogobot-policy")
    def cmd_policy(self, c: color = None) -> str:
        """gfx heat map of the network's move probabilities, labels in percent."""
        work, p = self._priors(self._colour_arg(c))
        legal = [int(q) for q in work.legal_moves()]
        return "\n".join(views.policy_gfx(work.size, work.to_move, legal, p))

    @command("nogobot-policy_board")
    def cmd_policy_board(self, c: color = None) -> str:
        """dboard of the move probabilities divided by the largest (top row first)."""
        work, p = self._priors(self._colour_arg(c))
        top = float(p.max()) if p.size else 0.0
        scaled = p / top if top > 0 else p
        return views.board_text([f"{float(v):.3f}" for v in scaled], work.size)

    @command("nogobot-dominion")
    def cmd_dominion(self, c: color = None) -> str:
        """dboard of the network's dominion head: +1 Black will own the point, -1 White."""
        work, ev = self._network(self._colour_arg(c))
        sign = 1.0 if work.to_move == BLACK else -1.0  # the head is for the side to move
        flat = [f"{sign * float(v):.3f}" for v in ev.dominion[0].reshape(-1)]
        return views.board_text(flat, work.size)

    @command("nogobot-value")
    def cmd_value(self, c: color = None) -> str:
        """One status line: the network's win probability and score for the colour to move,
        and the search's win rate when this position was searched."""
        work, ev = self._network(self._colour_arg(c))
        who = NAME[work.to_move]
        if work.num_legal() == 0:
            return f"{who} to move has no legal move: {who} has lost"
        text = (f"{who} to move: network win {float(ev.value[0]):.1%}, "
                f"score {float(ev.score[0]):+.2f}")
        key = (work.size, work.hash, len(work.moves), work.to_move, self._param_version)
        s = self._last_search
        if s is not None and s.key == key:
            best = coords.to_gtp(s.candidates[0].move, work.size) if s.candidates else "-"
            text += f"; search win {s.winrate:.1%} ({s.visits} visits), best {best}"
        return text

    # -- GoGui views: search --------------------------------------------------------------------
    @command("nogobot-visits")
    def cmd_visits(self, c: color = None) -> str:
        work, s = self._searched(self._colour_arg(c))
        if s is None:
            return f"TEXT {NAME[work.to_move]} has no legal move"
        cands = shown(s.candidates)
        pv = cands[0].pv if cands else []
        return "\n".join(views.visits_gfx(work.size, work.to_move, cands, pv, s.visits,
                                           s.seconds))

    @command("nogobot-candidates")
    def cmd_candidates(self, c: color = None) -> str:
        """pspairs: each searched move labelled with its win rate (WIN/LOSS when proven)."""
        work, s = self._searched(self._colour_arg(c))
        return "" if s is None else views.candidates_pspairs(work.size, shown(s.candidates))

    @command("nogobot-candidates_table")
    def cmd_candidates_table(self, c: color = None) -> str:
        work, s = self._searched(self._colour_arg(c))
        if s is None:
            return f"{NAME[work.to_move]} has no legal move"
        return views.candidates_table(work.size, work.to_move, shown(s.candidates), s.visits,
                                      s.playouts, s.seconds, s.reason)

    @command("nogobot-pv")
    def cmd_pv(self, c: color = None) -> str:
        """The principal variation, the colour asked for first (GoGui type varc)."""
        work, s = self._searched(self._colour_arg(c))
        if s is None or not s.candidates:
            return ""
        return " ".join(coords.to_gtp(p, work.size) for p in shown(s.candidates)[0].pv)

    # -- Sabaki / Lizzie analysis ------------------------------------------------------------------
    # One command in three spellings each: Leela Zero's, KataGo's and Sabaki's (kata's format).
    cmd_lz_analyze = _flavoured("_analyze_stream", "lz", "lz-analyze")
    cmd_kata_analyze = _flavoured("_analyze_stream", "kata", "kata-analyze")
    cmd_analyze = _flavoured("_analyze_stream", "kata", "analyze")
    cmd_lz_genmove_analyze = _flavoured("_genmove_analyze", "lz", "lz-genmove_analyze")
    cmd_kata_genmove_analyze = _flavoured("_genmove_analyze", "kata", "kata-genmove_analyze")
    cmd_genmove_analyze = _flavoured("_genmove_analyze", "kata", "genmove_analyze")

    def _analyze_stream(self, flavour: str, args: tuple[str, ...]) -> None:
        """``=``, then an info line every interval until any input line (or EOF) arrives, then
        the blank line. The search runs until then (or until the tree is full or the result
        is proven, and the reply then waits for input)."""
        req = parse_analyze_args(args, kata=flavour == "kata")
        work = self._work(req.colour)
        agent = self._network_agent()  # a model error answers '?' before the reply opens
        channel = self.channel
        channel.write_partial("")
        if work.num_legal() > 0:
            from ..engine.search import SearchLimits

            result = self._search(agent, work, SearchLimits(visits=UNLIMITED_VISITS),
                                  analysis=(flavour, req), stop=channel.input_pending)
            self.game.log(f"analyze: {result.visits} visits, {result.playouts} playouts in "
                     f"{result.seconds:.1f}s ({result.reason})")
        channel.input_pending.wait()  # the reply ends when the next command arrives
        return None

    def _genmove_analyze(self, flavour: str, args: tuple[str, ...]) -> str:
        """genmove that also streams info lines; ends with ``play <move|resign>``. Like KataGo,
        input does not stop it (a GoGui ``# interrupt`` does)."""
        req = parse_analyze_args(args, kata=flavour == "kata")
        game = self.game
        colour = req.colour if req.colour is not None else game.board.to_move
        if game.board.num_legal(colour) > 0:
            game.get_agent()  # errors answer '?' before the reply opens
        self.channel.write_partial("")
        self._analysis = (flavour, req)
        self._update_watch()
        try:
            answer = game.generate(colour, play=True)
        finally:
            self._analysis = None
            self._update_watch()
        return f"play {answer}"


def _positive(token: str) -> float:
    v = float(token)
    if not (math.isfinite(v) and v > 0):
        raise ValueError("must be a positive number")
    return v


def _non_negative(token: str) -> float:
    v = float(token)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError("must be a number >= 0")
    return v

"""Tournament specs (YAML): schema, defaults, and errors that name the file, line and field.

Example (every key but ``engines`` is optional)::

    name: baselines            # default: the file name without .yaml
    description: free text
    results: baselines         # the results folder, relative to this spec (default:
                               # tournaments/results/<name>/ in the directory run from);
                               # --out overrides it
    board_size: 9              # 2..19
    format: round_robin        # or gauntlet (then `gauntlet: NAME` plays everyone else)
    games: 4                   # games per pairing; colours alternate (even = balanced)
    jobs: 2                    # games in parallel (the --jobs option overrides)
    threads: 1                 # default thread count per engine (OMP/NUMBA/MKL env vars)
    anchor: random             # Elo anchor (default: the first engine), rated anchor_elo
    anchor_elo: 0
    time: {kind: per_move, seconds: 1, tolerance: 0.5}
    # kinds: sudden_death {main}, byoyomi {main, period, stones}, per_move {seconds},
    #        none {max_move}; all take tolerance (default 0.5 s)
    startup_timeout: 120       # seconds for an engine's first reply (imports, JIT, networks)
    command_timeout: 30        # seconds for any other untimed command (play, boardsize...)
    openings: default          # an opening suite (SGF collection): `default`/`9x9` (shipped),
                               # or a file relative to this spec; each opening played twice,
                               # colours swapped (games 2j and 2j+1 are a pair)
    sprt: {elo0: 0, elo1: 50, alpha: 0.05, beta: 0.05, model: normalized}
                               # two engines only: stop when the test is decided; `games` is
                               # then the most games to play (default 1000; sprt.py: what the
                               # fields mean)
    engines:
      random: nogobot agent random --seed {seed}   # a command line (shell-like quoting) ...
      rollout:                                     # ... or a mapping
        command: [nogobot, agent, rollout, --playouts, "1000"]
        threads: 1
        env: {SOME_VAR: value}
        cwd: .
        time: {kind: sudden_death, main: 15}     # this engine's own clock (time odds)

``{seed}`` in a command is replaced by a seed that differs per game and engine (and is the same
when the tournament is rerun), so seeded engines do not replay one game in every round.
An engine's own ``time`` (the same fields as the top-level one) replaces the tournament's clock
for that engine only: time-odds matches, e.g. an engine at 15 s against another at 60 s.
A command starting with the word ``nogobot`` runs as ``<this python> -m nogobot``, so the
engines use the same installation as the harness. Relative paths (``cwd``, script names) are
relative to the directory the tournament is run from.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .clock import RefereeTimeControl
from .openings import Opening, OpeningError, load_suite, resolve_suite
from .sprt import SprtConfig, SprtError, parse_sprt

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
THREAD_VARS = ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
TOP_KEYS = {"name", "description", "results", "board_size", "format", "gauntlet", "games", "jobs",
            "threads", "anchor", "anchor_elo", "time", "startup_timeout", "command_timeout",
            "engines", "sprt", "openings"}
TIME_KEYS = {"kind", "main", "period", "stones", "seconds", "tolerance", "max_move"}
TIME_KINDS = ("sudden_death", "byoyomi", "per_move", "none")  # clock.py: what each one is
ENGINE_KEYS = {"command", "threads", "env", "cwd", "time"}
SPRT_GAMES = 1000  # games per pairing when an SPRT match names no `games`: the test stops it


class SpecError(ValueError):
    """A spec that cannot be used; the message names file, line and field."""


@dataclass
class EngineSpec:
    name: str
    command: str  # as written (shown in tables, compared on resume)
    argv: list[str]
    threads: int = 1
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    time: RefereeTimeControl | None = None  # its own clock (time odds); None: the tournament's

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        for var in THREAD_VARS:
            env[var] = str(self.threads)
        env.update(self.env)
        return env


@dataclass
class TournamentSpec:
    name: str
    path: str
    engines: dict[str, EngineSpec]
    description: str = ""
    board_size: int = 9
    format: str = "round_robin"
    gauntlet: str | None = None
    games: int = 2
    jobs: int = 1
    anchor: str = ""
    anchor_elo: float = 0.0
    time: RefereeTimeControl = field(default_factory=RefereeTimeControl)
    startup_timeout: float = 120.0
    command_timeout: float = 30.0
    games_given: bool = True  # False: `games` is the default (an --sprt run raises it)
    sprt: SprtConfig | None = None
    openings_path: str | None = None  # the suite file, resolved
    openings: list[Opening] = field(default_factory=list)
    results: str | None = None  # the results folder the spec names, resolved; None: the default

    def opening_of(self, k: int) -> Opening | None:
        """The opening of a pairing's game ``k``: games 2j and 2j+1 share opening j (cycling
        through the suite), so each is played once with each colour."""
        return self.openings[(k // 2) % len(self.openings)] if self.openings else None

    def sprt_engines(self) -> tuple[str, str]:
        """(tested engine, the other) of a two-engine match: a gauntlet's own engine, else the
        first engine listed; TournamentSpec.check_sprt says why it applies only to two."""
        names = list(self.engines)
        test = self.gauntlet if self.format == "gauntlet" else names[0]
        return test, next(n for n in names if n != test)

    def check_sprt(self) -> None:
        """SPRT tests one engine against one other; refuse anything else in one line."""
        if self.sprt is not None and len(self.engines) != 2:
            raise SpecError(f"{self.path}: sprt needs a match between two engines (a gauntlet "
                            f"with one opponent, or a 2-engine round robin); this spec has "
                            f"{len(self.engines)}: {', '.join(self.engines)}")

    def time_of(self, engine: str) -> RefereeTimeControl:
        """The clock ``engine`` plays under: its own (time odds) or the tournament's."""
        own = self.engines[engine].time if engine in self.engines else None
        return own if own is not None else self.time

    def has_time_odds(self) -> bool:
        return any(e.time is not None and e.time != self.time for e in self.engines.values())

    def describe_time(self, engines=None) -> str:
        """The time control in words; with time odds, each engine's (of ``engines``, or all)."""
        names = list(self.engines) if engines is None else list(engines)
        tcs = [self.time_of(n) for n in names]
        if all(tc == tcs[0] for tc in tcs):
            return tcs[0].describe()
        return ", ".join(f"{n} {tc.describe()}" for n, tc in zip(names, tcs))

    def pairings(self) -> list[tuple[str, str]]:
        """Engine pairs (a, b), a before b in name order (a is black in even-numbered games)."""
        names = list(self.engines)
        if self.format == "gauntlet":
            g = self.gauntlet
            return [tuple(sorted((g, n))) for n in names if n != g]
        return [tuple(sorted((a, b))) for i, a in enumerate(names) for b in names[i + 1:]]


def resolve_argv(argv: list[str]) -> list[str]:
    """``nogobot ...`` -> ``<sys.executable> -m nogobot ...`` (same environment as the harness)."""
    if argv and argv[0] == "nogobot":
        return [sys.executable, "-m", "nogobot"] + argv[1:]
    return argv


class _Checker:
    """Validates the loaded data while knowing where each value sits in the YAML text."""

    def __init__(self, path: str, root: yaml.Node):
        self.path = path
        self.root = root

    def node(self, keys: tuple) -> yaml.Node | None:
        node = self.root
        for k in keys:
            if isinstance(node, yaml.MappingNode):
                for kn, vn in node.value:
                    if kn.value == k:
                        node = vn
                        break
                else:
                    return node
            elif isinstance(node, yaml.SequenceNode) and isinstance(k, int) and k < len(
                    node.value):
                node = node.value[k]
            else:
                return node
        return node

    def error(self, keys: tuple, msg: str) -> SpecError:
        node = self.node(keys)
        line = f":{node.start_mark.line + 1}" if node is not None else ""
        where = ".".join(str(k) for k in keys) or "(top level)"
        return SpecError(f"{self.path}{line}: {where}: {msg}")

    def key_error(self, keys: tuple, key: str, allowed: set[str]) -> SpecError:
        parent = self.node(keys)
        line = ""
        if isinstance(parent, yaml.MappingNode):
            for kn, _ in parent.value:
                if kn.value == key:
                    line = f":{kn.start_mark.line + 1}"
        where = ".".join(str(k) for k in keys + (key,))
        return SpecError(f"{self.path}{line}: {where}: unknown field (allowed: "
                         f"{', '.join(sorted(allowed))})")

    def duplicates(self, node: yaml.Node, keys: tuple = ()) -> None:
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for kn, vn in node.value:
                if kn.value in seen:
                    raise SpecError(f"{self.path}:{kn.start_mark.line + 1}: "
                                    f"{'.'.join(map(str, keys + (kn.value,)))}: duplicate key")
                seen.add(kn.value)
                self.duplicates(vn, keys + (kn.value,))
        elif isinstance(node, yaml.SequenceNode):
            for i, vn in enumerate(node.value):
                self.duplicates(vn, keys + (i,))

    def mapping(self, value, keys: tuple, allowed: set[str]) -> dict:
        if not isinstance(value, dict):
            raise self.error(keys, f"must be a mapping, not {_kind(value)}")
        for k in value:
            if k not in allowed:
                raise self.key_error(keys, str(k), allowed)
        return value

    def number(self, d: dict, key: str, keys: tuple, default, *, integer: bool = False,
               lo: float | None = None, hi: float | None = None, positive: bool = False):
        if key not in d or d[key] is None:
            return default
        v = d[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not
                                                                       isinstance(v, int)):
            raise self.error(keys + (key,), f"must be {'an integer' if integer else 'a number'}"
                             f", not {_kind(v)} {v!r}")
        if positive and v <= 0:
            raise self.error(keys + (key,), f"must be > 0, not {v}")
        if lo is not None and v < lo or hi is not None and v > hi:
            rng = f"{lo:g}..{hi:g}" if hi is not None else f">= {lo:g}"
            raise self.error(keys + (key,), f"must be {rng}, not {v}")
        return v

    def string(self, d: dict, key: str, keys: tuple, default, choices=None):
        if key not in d or d[key] is None:
            return default
        v = d[key]
        if not isinstance(v, str):
            raise self.error(keys + (key,), f"must be a string, not {_kind(v)}")
        if choices is not None and v not in choices:
            raise self.error(keys + (key,), f"must be one of {', '.join(choices)}, not {v!r}")
        return v


def _kind(v) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            type(None): "empty"}.get(type(v), type(v).__name__)


def load_spec(path: str | Path) -> TournamentSpec:
    """Read and validate a spec; raises SpecError (or OSError if unreadable)."""
    path = str(path)
    text = Path(path).read_text(encoding="utf-8")
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        ctx, cmark = getattr(e, "context", None), getattr(e, "context_mark", None)
        if ctx and cmark is not None and mark is not None and cmark.line != mark.line:
            problem += f" ({ctx} started at line {cmark.line + 1})"
        raise SpecError(f"{path}{where}: YAML syntax error: {problem}") from None
    return parse_spec(data, path, root)


def parse_spec(data, path: str = "<spec>", root: yaml.Node | None = None) -> TournamentSpec:
    ck = _Checker(path, root if root is not None else yaml.compose(yaml.safe_dump(data)))
    if root is not None:
        ck.duplicates(root)
    if data is None:
        raise SpecError(f"{path}: the spec is empty")
    d = ck.mapping(data, (), TOP_KEYS)
    if "engines" not in d:
        raise SpecError(f"{path}: engines: missing (a mapping of name -> command)")
    threads = ck.number(d, "threads", (), 1, integer=True, lo=1)
    engines = _engines(ck, d["engines"], threads)
    stem = re.sub(r"[^A-Za-z0-9_.+-]+", "-", Path(path).stem).strip("-.")
    name = ck.string(d, "name", (), stem or "tournament")
    if not NAME_RE.match(name):
        raise ck.error(("name",), f"{name!r}: use letters, digits, '_', '.', '+', '-'")
    fmt = ck.string(d, "format", (), "round_robin", ("round_robin", "gauntlet"))
    gauntlet = ck.string(d, "gauntlet", (), None)
    if fmt == "gauntlet":
        if gauntlet is None:
            raise ck.error(("format",), "a gauntlet needs `gauntlet: ENGINE` (who plays all)")
        if gauntlet not in engines:
            raise ck.error(("gauntlet",), f"{gauntlet!r} is not one of the engines")
    elif gauntlet is not None:
        raise ck.error(("gauntlet",), "only used with `format: gauntlet`")
    anchor = ck.string(d, "anchor", (), next(iter(engines)))
    if anchor not in engines:
        raise ck.error(("anchor",), f"{anchor!r} is not one of the engines "
                       f"({', '.join(engines)})")
    board_size = ck.number(d, "board_size", (), 9, integer=True, lo=2, hi=19)
    sprt = None
    if d.get("sprt") is not None:
        ck.mapping(d["sprt"], ("sprt",), {"elo0", "elo1", "alpha", "beta", "model"})
        try:
            sprt = parse_sprt(d["sprt"], where="sprt")
        except SprtError as e:
            raise ck.error(("sprt",), str(e).removeprefix("sprt: ")) from None
    openings_path, openings = None, []
    if d.get("openings") is not None:
        value = ck.string(d, "openings", (), None)
        suite = resolve_suite(value, Path(path).parent)
        try:
            openings = load_suite(suite, board_size)
        except OpeningError as e:
            raise ck.error(("openings",), str(e)) from None
        openings_path = str(suite)
    results = ck.string(d, "results", (), None)
    if results is not None:
        if not results.strip():
            raise ck.error(("results",), "is empty (a folder, relative to the spec)")
        results = str(Path(path).parent / results)
    spec = TournamentSpec(
        name=name, path=path, engines=engines, sprt=sprt, openings_path=openings_path,
        openings=openings, results=results,
        description=ck.string(d, "description", (), ""),
        board_size=board_size,
        format=fmt, gauntlet=gauntlet,
        games=ck.number(d, "games", (), SPRT_GAMES if sprt else 2, integer=True, lo=1),
        games_given=d.get("games") is not None,
        jobs=ck.number(d, "jobs", (), 1, integer=True, lo=1),
        anchor=anchor,
        anchor_elo=float(ck.number(d, "anchor_elo", (), 0.0)),
        time=_time(ck, d.get("time")),
        startup_timeout=float(ck.number(d, "startup_timeout", (), 120.0, positive=True)),
        command_timeout=float(ck.number(d, "command_timeout", (), 30.0, positive=True)),
    )
    if sprt is not None and len(engines) != 2:
        raise ck.error(("sprt",), f"needs a match between two engines (a gauntlet with one "
                       f"opponent, or a 2-engine round robin), not {len(engines)}")
    return spec


def _time(ck: _Checker, value, keys: tuple = ("time",)) -> RefereeTimeControl:
    if value is None:
        return RefereeTimeControl("none")
    t = ck.mapping(value, keys, TIME_KEYS)
    kind = ck.string(t, "kind", keys, None, TIME_KINDS)
    if kind is None:
        raise ck.error(keys, f"missing `kind` (one of {', '.join(TIME_KINDS)})")
    need = {"sudden_death": {"main"}, "byoyomi": {"main", "period"}, "per_move": {"seconds"},
            "none": set()}[kind]
    allowed = need | {"kind", "tolerance"} | ({"stones"} if kind == "byoyomi" else set()) | (
        {"max_move"} if kind == "none" else set())
    for k in t:
        if k not in allowed:
            raise ck.error(keys + (k,), f"not used with kind {kind} (it takes: "
                           f"{', '.join(sorted(allowed - {'kind'}))})")
    for k in need:
        if k not in t:
            raise ck.error(keys, f"kind {kind} needs `{k}`")
    tol = float(ck.number(t, "tolerance", keys, 0.5, lo=0))
    if kind == "sudden_death":
        fields = {"kind": "absolute", "main": float(ck.number(t, "main", keys, 0, positive=True))}
    elif kind == "per_move":
        fields = {"kind": "per_move",
                  "period": float(ck.number(t, "seconds", keys, 0, positive=True))}
    elif kind == "byoyomi":  # Canadian byo-yomi, as GTP's time_settings states it
        fields = {"kind": "canadian", "main": float(ck.number(t, "main", keys, 0, lo=0)),
                  "period": float(ck.number(t, "period", keys, 0, positive=True)),
                  "count": int(ck.number(t, "stones", keys, 1, integer=True, lo=1))}
    else:
        fields = {"kind": "none",
                  "max_move": float(ck.number(t, "max_move", keys, 600.0, positive=True))}
    try:
        return RefereeTimeControl(tolerance=tol, **fields)
    except ValueError as e:  # timecontrol's own checks (e.g. an infinite main time)
        raise ck.error(keys, str(e)) from None


def _engines(ck: _Checker, value, default_threads: int) -> dict[str, EngineSpec]:
    keys = ("engines",)
    if not isinstance(value, dict) or not value:
        raise ck.error(keys, "must be a non-empty mapping of name -> command")
    out: dict[str, EngineSpec] = {}
    for name, e in value.items():
        name = str(name)
        ek = keys + (name,)
        if not NAME_RE.match(name):
            raise ck.error(ek, "engine names use letters, digits, '_', '.', '+', '-'")
        if isinstance(e, (str, list)):
            e = {"command": e}
        e = ck.mapping(e, ek, ENGINE_KEYS)
        cmd = e.get("command")
        if isinstance(cmd, str):
            try:
                argv = shlex.split(cmd)
            except ValueError as err:
                raise ck.error(ek + ("command",), f"cannot split the command line: {err}")
            text = cmd
        elif isinstance(cmd, list) and all(isinstance(a, (str, int, float)) for a in cmd):
            argv = [str(a) for a in cmd]
            text = shlex.join(argv)
        else:
            raise ck.error(ek + ("command",), "must be a command line or a list of arguments")
        if not argv:
            raise ck.error(ek + ("command",), "is empty")
        env = e.get("env") or {}
        if not isinstance(env, dict):
            raise ck.error(ek + ("env",), "must be a mapping of variable -> value")
        cwd = ck.string(e, "cwd", ek, None)
        if cwd is not None and not Path(cwd).is_dir():
            raise ck.error(ek + ("cwd",), f"{cwd!r} is not a directory")
        out[name] = EngineSpec(
            name=name, command=text, argv=resolve_argv(argv),
            threads=int(ck.number(e, "threads", ek, default_threads, integer=True, lo=1)),
            env={str(k): str(v) for k, v in env.items()}, cwd=cwd,
            time=_time(ck, e["time"], ek + ("time",)) if e.get("time") is not None else None)
    if len(out) < 2:
        raise ck.error(keys, "a tournament needs at least two engines")
    return out

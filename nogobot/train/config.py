"""Training configuration: dataclasses for every setting of ``nogobot train`` and YAML loading.

A config file has the sections below; every key is optional (defaults in the dataclasses; the
shipped configs are ``configs/*.yaml``, the campaign's variants ``configs/campaign/``)::

    extends: base.yaml        # optional: start from this config (path relative to this file)
    name: cpu                 # free text (default: the file name; never inherited)
    seed: 0
    board_size: 9             # self-play board (the net itself is size-agnostic)
    generations: 1000         # stop after this many generations
    init_checkpoint: null     # torch checkpoint for stage 0 (runs/bootstrap/model.pt)
    network:   {aux_heads: 2, stages: [{blocks: 6, channels: 32}, {blocks: 8, channels: 48}]}
    selfplay:  {games_per_generation, playouts, playout_cap_randomisation, full_search_fraction,
                fast_playouts, policy_target_pruning, temperature_moves, ...}
    replay:    {window_games}
    training:  {optimizer, lr, momentum, l2, batch_size, steps_per_generation, loss weights...}
    gating:    {games, playouts, threshold, temperature_moves, elo_k}
    curriculum: {plateau_failures, train_next_stage}
    export:    {parity_sizes}

``extends`` merges the file over its base, recursively for mappings: the file's value wins, a
list (``network.stages``, ``export.parity_sizes``) replaces the base's whole, and a base may itself
extend another. So ``cpu-continue.yaml`` is ``extends: cpu.yaml`` plus the one line it changes.

Errors (``ConfigError``) name the file, the line, the field and the problem, e.g.
``cpu.yaml:12: selfplay.playouts: expected an integer >= 1, got 'many'``; a bad value inherited
from a base is reported at the base's line.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A training config that cannot be used; the message names file, line and field."""


@dataclass
class StageConfig:
    """One curriculum stage: a network shape (the paper: 5×32 -> ... -> 20×128)."""

    blocks: int = 6
    channels: int = 32
    garb: bool = True  # False: plain residual blocks only (ablation)
    liberty_features: bool = True  # False: the net never sees input planes 4-7 (ablation)
    head_channels: int = 32
    value_hidden: int = 64


@dataclass
class NetworkConfig:
    aux_heads: int = 2  # next-move auxiliary policy planes (darkforest); 0 switches them off
    soft_policy: bool = False  # KataGo's soft policy head (trained on policy^(1/4); not exported)
    stages: list[StageConfig] = field(default_factory=lambda: [StageConfig()])


@dataclass
class SelfPlayConfig:
    games_per_generation: int = 100
    playouts: int = 200  # playouts of a full search
    playout_cap_randomisation: bool = True  # KataGo: only some moves get a full search
    full_search_fraction: float = 0.25  # probability that a move gets the full search
    fast_playouts: int = 50  # playouts of the other moves (not used as policy targets)
    policy_target_pruning: bool = True  # KataGo: drop exploration visits from policy targets
    temperature_moves: int = 8  # plies played ∝ visits^(1/temperature); then most visited
    temperature: float = 1.0
    dirichlet_weight: float = 0.25  # root noise (full searches only)
    dirichlet_alpha_81: float = 0.03  # alpha = 0.03·81/N_legal
    root_policy_temp: float = 1.03
    c_puct: float = 1.1
    batch_size: int = 8  # leaves per game per network call
    concurrent_games: int = 1  # games per worker sharing each network call (GPU: 64-256)
    max_tree_mb: int = 16  # memory bound of each game's search tree
    use_solver: bool = True
    # Which encoding CPU workers play each net in: "auto" its int8 encoding where the CPU has
    # int8 dot-product instructions (about twice the evaluations a second), "always", "never".
    int8: str = "never"
    # Gumbel AlphaZero's root for the full searches (nogobot.engine.gumbel): m candidates sampled with
    # Gumbel noise, sequential halving, the improved policy as the target.
    gumbel: bool = False
    gumbel_m: int = 16
    gumbel_c_visit: float = 50.0
    gumbel_c_scale: float = 1.0


@dataclass
class ReplayConfig:
    window_games: int = 2000  # train on the most recent games only
    # Game records trained on beside the window, every generation (folders or files of .npz
    # shards and SGFs, as --from-games reads them; relative to the working directory): e.g.
    # the teacher's late-position games (``nogobot selfplay --player rave --positions``).
    extra_games: list[str] = field(default_factory=list)


@dataclass
class TrainingConfig:
    optimizer: str = "sgd"  # sgd | adamw
    lr: float = 1e-3
    momentum: float = 0.8
    l2: float = 1e-5  # coefficient c of c·‖θ‖² (weight decay 2c)
    batch_size: int = 128
    steps_per_generation: int = 200
    value_weight: float = 1.5
    dominion_weight: float = 0.5
    score_weight: float = 0.25
    aux_weight: float = 0.25
    soft_policy_weight: float = 8.0  # KataGo's weight for the soft policy target (with the head)
    value_target_mix: float = 0.0  # λ: value target = (1-λ)·game result + λ·root search value
    # d: the net that plays (exported, gated, self-play's generator) is an exponential moving
    # average of the trained weights, moved (1-d) of the way to them after each generation's
    # steps; 0 = the trained weights play. At 0.9 the last 20 generations carry 88% of the weight.
    average_decay: float = 0.0
    symmetries: bool = True  # a random one of the 8 board symmetries per batch
    log_every: int = 50  # steps between rows of metrics.csv


@dataclass
class GatingConfig:
    games: int = 20  # colours alternate; 0 accepts every candidate
    playouts: int = 100
    threshold: float = 0.55  # the candidate replaces the best if it scores at least this
    temperature_moves: int = 4  # opening plies sampled ∝ visits so games differ
    elo_k: float = 16.0
    # A stage switch is decided at equal network cost, not equal playouts: the bigger net gets
    # playouts × (the best net's eval time / its own), measured at gating. A bigger net must be
    # stronger per second of search, not per playout, to take over self-play.
    equal_compute: bool = False
    stage_switch_games: int = 0  # games when the candidate is the next stage's (0 = ``games``)


@dataclass
class CurriculumConfig:
    plateau_failures: int = 3  # gating failures in a row that mean "this stage has plateaued"
    train_next_stage: bool = True  # the small net's games also train the next stage's net
    # The next stage's net also learns the current best net's policy and value on every replay
    # position (targets (1-w)·search + w·teacher), so it starts the stage switch at the
    # generator's strength instead of from scratch on too little data.
    distill_weight: float = 0.0
    # Also try the next stage every N generations, plateau or not (0 = only after a plateau):
    # with gating.games 0 (every same-stage candidate accepted) nothing else ever plateaus.
    try_next_every: int = 0


@dataclass
class ExportConfig:
    parity_sizes: list[int] = field(default_factory=lambda: [9])


@dataclass
class TrainConfig:
    name: str = "train"
    seed: int = 0
    board_size: int = 9
    generations: int = 1000
    init_checkpoint: str | None = None
    network: NetworkConfig = field(default_factory=NetworkConfig)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    gating: GatingConfig = field(default_factory=GatingConfig)
    curriculum: CurriculumConfig = field(default_factory=CurriculumConfig)
    export: ExportConfig = field(default_factory=ExportConfig)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


# Value checks beyond the type: (predicate, description) per "section.field".
_CHECKS: dict[str, tuple] = {
    "board_size": (lambda v: 5 <= v <= 19, "an integer in 5..19"),
    "generations": (lambda v: v >= 1, "an integer >= 1"),
    "network.aux_heads": (lambda v: 0 <= v <= 8, "an integer in 0..8"),
    "network.stages": (lambda v: len(v) >= 1, "a non-empty list of stages"),
    "stage.blocks": (lambda v: v >= 1, "an integer >= 1"),
    "stage.channels": (lambda v: v >= 2 and v % 2 == 0, "an even integer >= 2"),
    "stage.head_channels": (lambda v: v >= 1, "an integer >= 1"),
    "stage.value_hidden": (lambda v: v >= 1, "an integer >= 1"),
    "selfplay.games_per_generation": (lambda v: v >= 1, "an integer >= 1"),
    "selfplay.playouts": (lambda v: v >= 1, "an integer >= 1"),
    "selfplay.fast_playouts": (lambda v: v >= 1, "an integer >= 1"),
    "selfplay.full_search_fraction": (lambda v: 0 < v <= 1, "a number in (0, 1]"),
    "selfplay.temperature_moves": (lambda v: v >= 0, "an integer >= 0"),
    "selfplay.temperature": (lambda v: v > 0, "a number > 0"),
    "selfplay.dirichlet_weight": (lambda v: 0 <= v <= 1, "a number in [0, 1]"),
    "selfplay.dirichlet_alpha_81": (lambda v: v > 0, "a number > 0"),
    "selfplay.root_policy_temp": (lambda v: v > 0, "a number > 0"),
    "selfplay.c_puct": (lambda v: v > 0, "a number > 0"),
    "selfplay.batch_size": (lambda v: 1 <= v <= 1024, "an integer in 1..1024"),
    "selfplay.concurrent_games": (lambda v: 1 <= v <= 4096, "an integer in 1..4096"),
    "selfplay.max_tree_mb": (lambda v: v >= 1, "an integer >= 1 (MB)"),
    "selfplay.int8": (lambda v: v in ("auto", "always", "never"), "'auto', 'always' or 'never'"),
    "replay.window_games": (lambda v: v >= 1, "an integer >= 1"),
    "training.optimizer": (lambda v: v in ("sgd", "adamw"), "'sgd' or 'adamw'"),
    "training.lr": (lambda v: v > 0, "a number > 0"),
    "training.momentum": (lambda v: 0 <= v < 1, "a number in [0, 1)"),
    "training.l2": (lambda v: v >= 0, "a number >= 0"),
    "training.batch_size": (lambda v: v >= 1, "an integer >= 1"),
    "training.steps_per_generation": (lambda v: v >= 1, "an integer >= 1"),
    "training.log_every": (lambda v: v >= 1, "an integer >= 1"),
    "gating.games": (lambda v: v >= 0, "an integer >= 0"),
    "gating.playouts": (lambda v: v >= 1, "an integer >= 1"),
    "gating.threshold": (lambda v: 0 <= v <= 1, "a number in [0, 1]"),
    "gating.temperature_moves": (lambda v: v >= 0, "an integer >= 0"),
    "gating.elo_k": (lambda v: v > 0, "a number > 0"),
    "curriculum.plateau_failures": (lambda v: v >= 1, "an integer >= 1"),
    "export.parity_sizes": (lambda v: len(v) >= 1 and all(5 <= s <= 19 for s in v),
                            "a non-empty list of board sizes in 5..19"),
}
_CHECKS["selfplay.gumbel_m"] = (lambda v: 1 <= v <= 361, "an integer in 1..361")
_CHECKS["selfplay.gumbel_c_visit"] = (lambda v: v >= 0, "a number >= 0")
_CHECKS["selfplay.gumbel_c_scale"] = (lambda v: v > 0, "a number > 0")
_CHECKS["training.value_target_mix"] = (lambda v: 0 <= v <= 1, "a number in [0, 1]")
_CHECKS["training.average_decay"] = (lambda v: 0 <= v < 1, "a number in [0, 1)")
_CHECKS["curriculum.distill_weight"] = (lambda v: 0 <= v <= 1, "a number in [0, 1]")
_CHECKS["gating.stage_switch_games"] = (lambda v: v >= 0, "an integer >= 0")
_CHECKS["curriculum.try_next_every"] = (lambda v: v >= 0, "an integer >= 0")
for _k in ("value_weight", "dominion_weight", "score_weight", "aux_weight", "soft_policy_weight"):
    _CHECKS[f"training.{_k}"] = (lambda v: v >= 0, "a number >= 0")


class _Ctx:
    """Where we are in the file, for error messages."""

    def __init__(self, path: Path, lines: dict):
        self.path, self.lines = path, lines

    def error(self, key: str, problem: str) -> ConfigError:
        line = self.lines.get(key)
        while line is None and "." in key:  # fall back to the enclosing section
            key_parent = key.rsplit(".", 1)[0]
            line = self.lines.get(key_parent)
            if line is not None:
                break
            key = key_parent
        if isinstance(line, str):  # a --set override, not a line of the file
            where = f"{self.path} {line}"
        elif isinstance(line, tuple):  # (base file, line): a value inherited through ``extends``
            where = f"{line[0]}:{line[1]}"
        else:
            where = f"{self.path}:{line}" if line else f"{self.path}"
        return ConfigError(f"{where}: {problem}")


def _key_lines(node, prefix: str, out: dict) -> None:
    """Map dotted key paths (list items as [i]) to 1-based line numbers from the YAML nodes."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = f"{prefix}.{k.value}" if prefix else str(k.value)
            out[key] = k.start_mark.line + 1
            _key_lines(v, key, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            key = f"{prefix}[{i}]"
            out[key] = v.start_mark.line + 1
            _key_lines(v, key, out)


def _convert(value: Any, typ, key: str, ctx: _Ctx):
    """Check/convert one scalar to the dataclass field's type."""
    shown = f"{value!r}"
    if typ in ("int", int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ctx.error(key, f"{key}: expected an integer, got {shown}")
        return value
    if typ in ("float", float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ctx.error(key, f"{key}: expected a number, got {shown}")
        return float(value)
    if typ in ("bool", bool):
        if not isinstance(value, bool):
            raise ctx.error(key, f"{key}: expected true or false, got {shown}")
        return value
    if typ in ("str", str):
        if not isinstance(value, str):
            raise ctx.error(key, f"{key}: expected a string, got {shown}")
        return value
    if typ == "str | None":
        if value is not None and not isinstance(value, str):
            raise ctx.error(key, f"{key}: expected a path (string) or null, got {shown}")
        return value
    if typ == "list[str]":
        if not isinstance(value, list) or any(not isinstance(v, str) for v in value):
            raise ctx.error(key, f"{key}: expected a list of paths (strings), got {shown}")
        return list(value)
    if typ == "list[int]":
        if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int)
                                              for v in value):
            raise ctx.error(key, f"{key}: expected a list of integers, got {shown}")
        return list(value)
    raise AssertionError(f"unhandled type {typ} for {key}")


def _build(cls, data: Any, key: str, ctx: _Ctx, check_prefix: str):
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ctx.error(key, f"{key or 'the file'}: expected a mapping of settings, got "
                             f"{type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = [k for k in data if k not in fields]
    if unknown:
        k = unknown[0]
        full = f"{key}.{k}" if key else str(k)
        raise ctx.error(full, f"unknown setting {full!r} (known in "
                              f"{key or 'the top level'}: {', '.join(sorted(fields))})")
    kwargs = {}
    for name, value in data.items():
        f = fields[name]
        full = f"{key}.{name}" if key else name
        sub = {"network": NetworkConfig, "selfplay": SelfPlayConfig, "replay": ReplayConfig,
               "training": TrainingConfig, "gating": GatingConfig,
               "curriculum": CurriculumConfig, "export": ExportConfig}.get(name) \
            if cls is TrainConfig else None
        if sub is not None:
            kwargs[name] = _build(sub, value, full, ctx, name)
            continue
        if cls is NetworkConfig and name == "stages":
            if not isinstance(value, list):
                raise ctx.error(full, f"{full}: expected a list of stages "
                                      "(each {blocks: B, channels: C}), got " f"{value!r}")
            kwargs[name] = [_build(StageConfig, v, f"{full}[{i}]", ctx, "stage")
                            for i, v in enumerate(value)]
        else:
            kwargs[name] = _convert(value, f.type, full, ctx)
        check = _CHECKS.get(f"{check_prefix}.{name}" if check_prefix else name)
        if check is not None and not check[0](kwargs[name]):
            raise ctx.error(full, f"{full}: expected {check[1]}, got {value!r}")
    return cls(**kwargs)


def apply_overrides(data: dict, overrides, path: Path, lines: dict) -> None:
    """Apply ``KEY=VALUE`` overrides (``--set``) to the parsed YAML ``data`` in place.

    KEY is a dotted path, list items by index (``network.stages.0.garb=false``); VALUE is read as
    YAML (``true``, ``0.5``, ``[9]``). The keys are recorded in ``lines`` so that a bad value is
    reported as ``--set KEY=VALUE`` rather than as a line of the file."""
    for item in overrides:
        key, sep, text = item.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(parts):
            raise ConfigError(f"{path}: --set {item!r}: expected KEY=VALUE, e.g. "
                              "training.lr=0.01 or network.stages.0.garb=false")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            raise ConfigError(f"{path}: --set {item!r}: the value is not valid YAML") from None
        node, dotted = data, ""
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    raise ConfigError(f"{path}: --set {item!r}: {dotted} has no item {part!r} "
                                      f"(it has {len(node)})")
                part = int(part)
                dotted = f"{dotted}[{part}]"
            else:
                dotted = f"{dotted}.{part}" if dotted else part
            if last:
                node[part] = value
            else:
                if isinstance(node, dict) and part not in node:
                    node[part] = {}
                node = node[part]
                if not isinstance(node, (dict, list)):
                    raise ConfigError(f"{path}: --set {item!r}: {dotted} is not a section")
            lines[dotted] = f"--set {item}"


def _read_yaml(path: Path):
    """Parse one config file: (data, {dotted key: line}); ConfigError when unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the config ({e})") from None
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = getattr(e, "problem", None) or str(e)
        raise ConfigError(f"{where}: not valid YAML ({problem})") from None
    lines: dict = {}
    if node is not None:
        _key_lines(node, "", lines)
    return ({} if data is None else data), lines


def _merge(base: dict, over: dict, prefix: str, lines: dict) -> dict:
    """``over`` merged onto ``base``: mappings recursively, anything else replaced whole.

    ``lines`` holds the base's key lines; those of a replaced value's children are dropped so that
    an error can never point into a base value that is no longer there."""
    out = dict(base)
    for k, v in over.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v, key, lines)
            continue
        out[k] = v
        for stale in [s for s in lines if s.startswith((f"{key}.", f"{key}["))]:
            del lines[stale]
    return out


def _resolve(path: Path, chain: tuple[Path, ...] = ()):
    """The file's settings with its ``extends`` chain merged in: (data, key lines).

    Lines of the file itself are ints; those inherited from a base are (base path, line), so
    that errors name the file a value comes from."""
    data, lines = _read_yaml(path)
    if not isinstance(data, dict) or "extends" not in data:
        return data, lines
    base_name = data.pop("extends")
    where = f"{path}:{lines.pop('extends', '?')}"
    if not isinstance(base_name, str) or not base_name:
        raise ConfigError(f"{where}: extends: expected the path of a base config, got "
                          f"{base_name!r}")
    base_path = path.parent / base_name
    here = path.resolve()
    if base_path.resolve() in (*chain, here):
        cycle = " -> ".join(str(p) for p in (*chain, here, base_path.resolve()))
        raise ConfigError(f"{where}: extends: {base_name} makes a cycle ({cycle})")
    if not base_path.is_file():
        raise ConfigError(f"{where}: extends: no such base config {base_path}")
    base, base_lines = _resolve(base_path, (*chain, here))
    if not isinstance(base, dict):
        raise ConfigError(f"{base_path}: expected a mapping of settings (the base of {path})")
    base.pop("name", None)  # a config is named after itself (or its file), not after its base
    merged_lines = {k: (v if isinstance(v, tuple) else (base_path, v))
                    for k, v in base_lines.items() if k != "name"}
    merged = _merge(base, data, "", merged_lines)
    merged_lines.update(lines)
    return merged, merged_lines


def load_config(path, overrides=()) -> TrainConfig:
    """Read and validate a training config (its ``extends`` chain merged in), then apply
    ``overrides`` (``KEY=VALUE`` strings, see ``apply_overrides``); raises ConfigError naming file,
    line (or override) and field."""
    path = Path(path)
    data, lines = _resolve(path)
    if overrides:
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of settings")
        apply_overrides(data, overrides, path, lines)
    ctx = _Ctx(path, lines)
    cfg = _build(TrainConfig, data, "", ctx, "")
    if "name" not in data:
        cfg.name = path.stem
    return cfg

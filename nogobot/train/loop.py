"""The NoGoZero+ generation loop: self-play -> train -> export -> gate, with network curriculum.

One generation g (state.json ``phase`` says which step is next, so a killed run resumes there):

1. **selfplay**: the best net plays ``games_per_generation`` games into ``games/gen{g}/``
   (one shard per game, atomic; a resumed generation plays only the missing ones).
2. **train**: the current stage's net, and the next stage's net when ``train_next_stage`` (the
   small net's games also train the big one), train ``steps_per_generation`` steps on the replay
   window; each checkpoint ``ckpt/stage{s}.pt`` records the generation it was trained for, so a
   rerun never trains twice. Loss rows go to ``metrics.csv``.
3. **export + gate**: the candidate is exported to ``nets/gen{g}-s{s}.onnx`` (parity-checked) and
   plays ``gating.games`` games against the best; it becomes the best if it scores
   >= ``gating.threshold``. Elo (K = 16 updates, the best's rating carried over) goes to
   ``elo.csv``, the generation summary to ``generations.csv`` and stderr.

**Curriculum** (config ``network.stages``): a stage has *plateaued* after
``curriculum.plateau_failures`` gating failures in a row; from then on the candidate gated is the
next stage's net (trained all along on the same games), and when it wins, generation switches to
it (``stage`` += 1). Run-directory layout: ``state.json``, ``config.yaml`` (the effective
config), ``games/``, ``ckpt/`` (``stage{s}.pt`` latest per stage, ``best.pt`` the best net's
weights), ``nets/``, ``metrics.csv``, ``elo.csv``, ``generations.csv``.

**A window carried over** (``--window-from RUN``): a fresh run that goes on from another run's
net would otherwise train its first generations' full steps on a window of 48, 96, ... games,
sampling each early position many times over. ``seed_window`` copies the other run's newest
``replay.window_games`` games into ``games/gen0000/``, where they sort before generation 1's and
leave the window as new games come, as they would have in the run they came from.

This module owns the generation loop and the run's state; whether a candidate wins its gating
is gating.py's, how the run's CSV and JSON files are written is runfiles.py's.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import yaml

from ..core.atomicio import write_atomic
from .backend import LocalBackend, plays_int8
from .config import ConfigError, TrainConfig
from .gating import gating_result
from .runfiles import append_csv, log, read_csv, write_json

STATE_VERSION = 1
METRIC_FIELDS = ["generation", "stage", "net", "step", "total", "policy", "value", "dominion",
                 "score", "aux", "positions", "games_total"]
# generations.csv: "stage" is the stage of the candidate gated in that generation.
GEN_FIELDS = ["generation", "stage", "games", "positions", "mean_plies", "black_win_rate",
              "selfplay_s", "train_s", "gate_s", "gate_score", "accepted", "best", "best_elo",
              "games_total"]


class Progress:
    """A rich progress bar on stderr (plain, occasional lines when stderr is not a terminal)."""

    def __init__(self, label: str, total: int):
        self.label, self.total, self.done = label, total, 0
        self.t0 = time.perf_counter()
        self._bar = None
        self._last = 0.0
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RP

            console = Console(stderr=True)
            if console.is_terminal:
                self._bar = RP("[bold]{task.description}", BarColumn(), MofNCompleteColumn(),
                               TimeElapsedColumn(), TimeRemainingColumn(), console=console,
                               transient=True)
                self._task = self._bar.add_task(label, total=total)
                self._bar.start()
        except ImportError:
            pass

    def __call__(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(self._task, advance=n)
        elif time.perf_counter() - self._last > 30 or self.done == self.total:
            self._last = time.perf_counter()
            log(f"  {self.label}: {self.done}/{self.total} "
                f"({time.perf_counter() - self.t0:.0f} s)")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


class TrainingRun:
    """A run directory and its state; ``run()`` executes generations until a limit."""

    def __init__(self, cfg: TrainConfig, run_dir, device: str = "cpu", workers: int = 1,
                 config_path=None, backend=None):
        self.cfg = cfg
        self.dir = Path(run_dir)
        missing = [p for p in cfg.replay.extra_games if not Path(p).exists()]
        if missing:  # before anything is written to the run directory
            raise ConfigError(f"{config_path or self.dir / 'config.yaml'}: replay.extra_games: "
                              f"{missing[0]}: no such file or folder")
        self.device = device
        self.workers = workers
        # Where self-play and gating games are played (backend.py): worker processes here, or
        # Ray actors across a cluster (nogobot.cluster).
        self.backend = backend if backend is not None else LocalBackend(
            workers, device, int8=plays_int8(cfg.selfplay.int8, device))
        self.dir.mkdir(parents=True, exist_ok=True)
        for sub in ("games", "ckpt", "nets"):
            (self.dir / sub).mkdir(exist_ok=True)
        for tmp in self.dir.rglob("*.tmp"):  # half-written files of a killed run
            tmp.unlink(missing_ok=True)
        if config_path is not None and not (self.dir / "config.yaml").exists():
            # The effective config (after any --set overrides), named after its source.
            text = f"# effective config of {config_path}\n" + yaml.safe_dump(
                cfg.to_dict(), sort_keys=False)
            write_atomic(self.dir / "config.yaml", text)
        self.state_path = self.dir / "state.json"
        self.state = json.loads(self.state_path.read_text()) if self.state_path.exists() else None
        from .replay import ReplayBuffer

        self.replay = ReplayBuffer(self.dir / "games", cfg.replay.window_games)
        self._extra_games: list[dict] | None = None
        self._trainers: dict[int, object] = {}

    def extra_games(self) -> list[dict]:
        """The games of ``replay.extra_games``, read once: they sit beside the window in every
        generation's training data (positions drawn in proportion to their number)."""
        if self._extra_games is None:
            from .replay import load_games

            self._extra_games = []
            for path in self.cfg.replay.extra_games:
                games, counts = load_games(path)
                self._extra_games += games
                log(f"replay.extra_games: {path}: {counts['npz'] + counts['sgf']} games"
                    + (f" ({counts['skipped']} skipped)" if counts["skipped"] else ""))
        return self._extra_games

    # -- state ----------------------------------------------------------------------------
    def save_state(self) -> None:
        self.state["updated"] = time.strftime("%Y-%m-%d %H:%M:%S")
        write_json(self.state_path, self.state)

    def ckpt(self, stage: int) -> Path:
        return self.dir / "ckpt" / f"stage{stage}.pt"

    def trainer(self, stage: int):
        """The stage's trainer: from memory, its checkpoint, or new (stage 0 from the init)."""
        from .trainer import Trainer, net_config

        t = self._trainers.get(stage)
        if t is not None:
            return t
        cfg = self.cfg
        path = self.ckpt(stage)
        if path.exists():
            t = Trainer.resume(path, cfg.training, self.device, cfg.seed + stage)
        else:
            from .campaign import is_campaign, stage_checkpoint

            ncfg = net_config(cfg.network.stages[stage], cfg.network.aux_heads,
                              cfg.network.soft_policy)
            t = Trainer(ncfg, cfg.training, self.device, cfg.seed + stage)
            init = None
            if is_campaign(cfg.init_checkpoint):  # every stage the campaign kept
                init = stage_checkpoint(cfg.init_checkpoint, stage)
            elif stage == 0 and cfg.init_checkpoint:
                init = cfg.init_checkpoint
            if init is not None:
                from .model import load_checkpoint

                if load_checkpoint(init)[0].cfg == ncfg:  # the same net: optimiser and counters too
                    t = Trainer.resume(init, cfg.training, self.device, cfg.seed + stage)
                else:
                    skipped = t.init_from(init)
                    if skipped:
                        log(f"init: {init}: {len(skipped)} tensors not copied (shape differs "
                            f"from stage {stage}): {', '.join(skipped[:4])}...")
        self._trainers[stage] = t
        return t

    def export(self, stage: int, generation: int) -> Path:
        from .export import export_net

        out = self.dir / "nets" / f"gen{generation:04d}-s{stage}.onnx"
        if out.exists() and out.with_suffix(".yaml").exists():
            return out
        t = self.trainer(stage)
        training = {"run": str(self.dir), "config": self.cfg.name, "generation": generation,
                    "stage": stage, "steps": t.meta["steps"], "samples": t.meta["samples"],
                    "selfplay_games": (self.state["games_total"] + self.state.get("games_before", 0)
                                       if self.state else 0),
                    "board_sizes": [self.cfg.board_size]}
        export_net(t.cpu_model(), out, training=training,
                   sizes=tuple(self.cfg.export.parity_sizes))
        return out

    def seed_window(self, source) -> int:
        """Copy the newest ``replay.window_games`` finished games (``.npz`` shards with their
        ``.sgf``) of run directory ``source`` into ``games/gen0000/``, keeping their order;
        return how many. Only a run with no games of its own may be seeded."""
        from .replay import ReplayBuffer

        source = Path(source)
        if source.resolve() == self.dir.resolve():
            raise ValueError(f"--window-from {source}: that is this run directory")
        if not (source / "games").is_dir():
            raise FileNotFoundError(f"--window-from {source}: no games/ folder there")
        shards = ReplayBuffer(source / "games", self.cfg.replay.window_games).shard_paths()
        shards = shards[-self.cfg.replay.window_games:]
        if not shards:
            raise ValueError(f"--window-from {source}: its games/ folder holds no finished game")
        dest_root = self.dir / "games" / "gen0000"
        if any(not p.is_relative_to(dest_root) for p in (self.dir / "games").rglob("*.npz")):
            raise ValueError(f"{self.dir}: holds games already; --window-from seeds a new run")
        for shard in shards:
            rel = shard.relative_to(source / "games")
            for src in (shard, shard.with_suffix(".sgf")):
                if src.exists():
                    dest = dest_root / rel.with_suffix(src.suffix)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    write_atomic(dest, src.read_bytes())
        log(f"window: {len(shards)} games of {source} in {dest_root} (they leave the window as "
            f"the run's own games come)")
        return len(shards)

    def initialise(self, from_games=None, from_games_steps: int = 1000) -> None:
        """Generation 0: the initial net (init checkpoint, supervised on records, or random)."""
        from .campaign import is_campaign, read_campaign, stage_checkpoint

        cfg = self.cfg
        if cfg.init_checkpoint and not Path(cfg.init_checkpoint).exists():
            raise FileNotFoundError(f"init_checkpoint {cfg.init_checkpoint}: no such file")
        stage, before = 0, {"games_before": 0, "generations_before": 0}
        campaign = is_campaign(cfg.init_checkpoint)
        if campaign:  # go on where the committed campaign stopped
            camp = read_campaign(cfg.init_checkpoint)
            stage = camp["stage"]
            if stage >= len(cfg.network.stages):
                raise ValueError(f"{cfg.init_checkpoint}: generator stage {stage}, but the config "
                                 f"has {len(cfg.network.stages)} stages")
            before = {"games_before": int(camp.get("selfplay_games", 0)),
                      "generations_before": int(camp.get("generations", 0))}
        t = self.trainer(stage)
        info = {}
        if from_games:
            info = self.supervised(from_games, from_games_steps)
        t.save(self.ckpt(stage), generation=0, extra={"from_games": info or None})
        for s in range(stage + 1, len(cfg.network.stages)):  # kept next stages, if any
            if campaign and stage_checkpoint(cfg.init_checkpoint, s):
                self.trainer(s).save(self.ckpt(s), generation=0)
        self.state = {"version": STATE_VERSION, "generation": 1, "phase": "selfplay",
                      "stage": stage, "best": None, "best_elo": 0.0, "failures": 0,
                      "games_total": 0, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                      "seconds": 0.0, "from_games": info or None, **before}
        best = self.export(stage, 0)
        write_atomic(self.dir / "ckpt" / "best.pt", self.ckpt(stage).read_bytes())
        self.state["best"] = str(best.relative_to(self.dir))
        self.save_state()
        log(f"initialised {self.dir}: stage {stage} {cfg.network.stages[stage].blocks}x"
            f"{cfg.network.stages[stage].channels}, best = {self.state['best']}"
            + (f", after {before['games_before']} campaign games" if before["games_before"] else ""))

    def supervised(self, path, steps: int) -> dict:
        """Train the stage-0 net on existing game records (SGF or .npz shards)."""
        from .data import concat, positions
        from .replay import load_games

        games, counts = load_games(path)
        data = concat(games)
        if not data:
            raise ValueError(f"{path}: no usable game records ({counts})")
        n = positions(data)
        log(f"supervised: {len(games)} games ({counts}), {n} positions, {steps} steps")
        t = self.trainer(0)
        bar = Progress("supervised", steps)
        rows = t.train(data, steps, progress=bar)
        bar.close()
        append_csv(self.dir / "metrics.csv", METRIC_FIELDS,
                   [{"generation": 0, "stage": 0, "net": "supervised", **r, "positions": n,
                     "games_total": 0} for r in rows])
        return {"path": str(path), "games": len(games), "positions": n, "steps": steps,
                **counts}

    # -- one generation ---------------------------------------------------------------------
    def gate_stage(self) -> int:
        """The stage whose candidate is gated: the next stage's once the current one has
        plateaued or when a try is scheduled, but only where the next stage is trained (an
        untrained checkpoint would be gated in place of the current stage's every time)."""
        st, n, cur = self.state, len(self.cfg.network.stages), self.cfg.curriculum
        if not cur.train_next_stage:
            return st["stage"]
        plateau = st["failures"] >= cur.plateau_failures
        scheduled = cur.try_next_every > 0 and st["generation"] % cur.try_next_every == 0
        return st["stage"] + 1 if (plateau or scheduled) and st["stage"] + 1 < n else st["stage"]

    def selfplay(self, g: int) -> dict:
        cfg, sp = self.cfg, self.cfg.selfplay
        folder = self.dir / "games" / f"gen{g:04d}"
        stems = [folder / f"g{i:05d}" for i in range(sp.games_per_generation)]
        have = sum(s.with_suffix(".npz").exists() for s in stems)
        t0 = time.perf_counter()
        bar = Progress(f"gen {g} self-play", len(stems))
        bar(have)
        seed = int(np.random.SeedSequence([cfg.seed, g, have]).generate_state(1)[0] % 2**31)
        self.backend.generate_games(str(self.dir / self.state["best"]), stems, cfg.board_size,
                                    sp, seed, progress=bar,
                                    checkpoint=str(self.dir / "ckpt" / "best.pt"))
        bar.close()
        plies, black = [], []
        for s in stems:
            with np.load(s.with_suffix(".npz")) as z:
                plies.append(int(z["plies"]))
                black.append(int(z["winner"]) == 1)
        return {"games": len(stems), "positions": int(sum(plies)),
                "mean_plies": round(float(np.mean(plies)), 1),
                "black_win_rate": round(float(np.mean(black)), 3),
                "selfplay_s": round(time.perf_counter() - t0, 1)}

    def train(self, g: int) -> float:
        from .trainer import checkpoint_generation

        cfg = self.cfg
        stage = self.state["stage"]
        stages = [stage]
        if cfg.curriculum.train_next_stage and stage + 1 < len(cfg.network.stages):
            stages.append(stage + 1)
        t0 = time.perf_counter()
        data = None
        for s in stages:
            if checkpoint_generation(self.ckpt(s)) >= g:
                continue  # trained for this generation before a kill
            if data is None:
                from .data import positions

                data = self.replay.load(self.extra_games())
                n = positions(data)
            t = self.trainer(s)
            steps = cfg.training.steps_per_generation
            teacher, w = None, cfg.curriculum.distill_weight
            if s > stage and w > 0:  # the next stage learns from the generator too
                from .model import load_checkpoint

                teacher, _ = load_checkpoint(self.dir / "ckpt" / "best.pt")
            bar = Progress(f"gen {g} train stage {s}", steps)
            rows = t.train(data, steps, progress=bar, teacher=teacher, distill=w)
            bar.close()
            t.save(self.ckpt(s), generation=g)
            stg = cfg.network.stages[s]
            append_csv(self.dir / "metrics.csv", METRIC_FIELDS,
                       [{"generation": g, "stage": s, "net": f"b{stg.blocks}c{stg.channels}",
                         **r, "positions": n, "games_total": self.state["games_total"]}
                        for r in rows])
        return round(time.perf_counter() - t0, 1)

    def gate(self, g: int) -> dict:
        cfg, st = self.cfg, self.state
        s = self.gate_stage()
        t0 = time.perf_counter()
        cand = self.export(s, g)
        wins, losses, accepted, elo_c = gating_result(
            self.dir, self.backend, cfg, st, s, cand, g,
            lambda games: Progress(f"gen {g} gating", games))
        score = wins / (wins + losses) if wins + losses else 1.0
        if accepted:
            st["best"] = str(cand.relative_to(self.dir))
            st["best_elo"] = elo_c
            # Keep the best net's weights too (ckpt/stage*.pt moves on with later candidates).
            best_ckpt = self.dir / "ckpt" / "best.pt"
            write_atomic(best_ckpt, self.ckpt(s).read_bytes())
            if s != st["stage"]:
                log(f"curriculum: stage {s} net wins gating; self-play switches to stage {s}")
                st["stage"] = s
            st["failures"] = 0
        else:
            st["failures"] += 1
        return {"gate_score": round(score, 3), "accepted": accepted,
                "gate_s": round(time.perf_counter() - t0, 1), "gated_stage": s}

    # -- driver -------------------------------------------------------------------------------
    def run(self, generations: int | None = None, max_minutes: float | None = None) -> int:
        """Run generations until ``generations`` (total, counting from 1) or the time limit.

        Returns the number of generations completed in this call."""
        cfg = self.cfg
        last = generations if generations is not None else cfg.generations
        t_start = time.perf_counter()
        completed = 0
        summary: dict = self.state.get("current", {}) or {}
        while self.state["generation"] <= last:
            g = self.state["generation"]
            if max_minutes is not None and (time.perf_counter() - t_start) / 60 >= max_minutes:
                log(f"time limit of {max_minutes} min reached before generation {g} "
                    f"({self.state['phase']}); rerun to continue")
                break
            phase_t0 = time.perf_counter()
            if self.state["phase"] == "selfplay":
                summary = self.selfplay(g)
                self.state["games_total"] += summary["games"]
                self.state["phase"] = "train"
                self.state["current"] = summary
            elif self.state["phase"] == "train":
                summary["train_s"] = self.train(g)
                self.state["phase"] = "gate"
                self.state["current"] = summary
            else:
                summary.update(self.gate(g))
                row = {"generation": g, "stage": summary.get("gated_stage"), **summary,
                       "best": Path(self.state["best"]).stem,
                       "best_elo": round(self.state["best_elo"], 1),
                       "games_total": self.state["games_total"]}
                if not any(int(r["generation"]) == g
                           for r in read_csv(self.dir / "generations.csv")):
                    append_csv(self.dir / "generations.csv", GEN_FIELDS, [row])
                self.state["generation"] = g + 1
                self.state["phase"] = "selfplay"
                self.state["current"] = {}
                completed += 1
                log(f"gen {g}: {summary.get('games', '?')} games ({summary.get('mean_plies')} "
                    f"plies, black {summary.get('black_win_rate')}), self-play "
                    f"{summary.get('selfplay_s')} s, train {summary.get('train_s')} s; candidate "
                    f"stage {summary['gated_stage']} scored {summary['gate_score']:.2f} -> "
                    f"{'ACCEPTED' if summary['accepted'] else 'rejected'}; best "
                    f"{row['best']} (Elo {row['best_elo']}), {self.state['games_total']} games "
                    f"total, stage {self.state['stage']}, failures {self.state['failures']}")
                summary = {}
            self.state["seconds"] = round(self.state.get("seconds", 0.0)
                                          + time.perf_counter() - phase_t0, 1)
            self.save_state()
        return completed


def train_command(cfg: TrainConfig, run_dir, device: str = "cpu", workers: int = 1,
                  config_path=None, from_games=None, from_games_steps: int = 1000,
                  generations: int | None = None, max_minutes: float | None = None,
                  torch_threads: int = 1, backend=None, window_from=None) -> int:
    """What ``nogobot train CONFIG --run-dir DIR`` does (resume included). ``device`` may be
    "auto": CUDA when torch sees a GPU, else the CPU. ``backend`` plays the games (backend.py;
    default: ``workers`` processes here). ``window_from``: a run directory whose newest window
    of games a new run starts with (``seed_window``)."""
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"

    torch.set_num_threads(max(1, torch_threads))
    run = TrainingRun(cfg, run_dir, device=device, workers=workers, config_path=config_path,
                      backend=backend)
    if run.state is None:
        if window_from:
            run.seed_window(window_from)
        run.initialise(from_games, from_games_steps)
    else:
        if window_from:
            log("note: --window-from ignored: this run directory has started already "
                "(use a new --run-dir)")
        if from_games and not run.state.get("from_games"):
            log("note: --from-games ignored: this run directory was initialised without it "
                "(use a new --run-dir)")
        log(f"resuming {run.dir}: generation {run.state['generation']} "
            f"({run.state['phase']}), stage {run.state['stage']}, best {run.state['best']}, "
            f"{run.state['games_total']} self-play games")
    return run.run(generations, max_minutes)

"""Training steps on the replay window: NoGoZero+ loss, optimiser, resumable checkpoints.

Loss (NoGoZero+): policy CE + 1.5·value CE + 0.5·dominion BCE + 0.25·score MSE (+ 0.25·aux CE
of the next-move heads) + c·‖θ‖². The L2 term is the optimiser's weight decay 2c (the
gradient of c·‖θ‖² is 2c·θ). Every weight is a config value (``training.*_weight``); 0
switches a term off (``aux_weight: 0`` leaves the next-move heads untrained).

A ``Trainer`` owns one network (one curriculum stage), its optimiser and its step count; its
checkpoint (``model.save_checkpoint``: atomic, config embedded) also carries the optimiser state
and ``training`` metadata (generation, steps, samples), so a killed run continues exactly.

**The net that plays** (``training.average_decay`` d > 0): an exponential moving average of the
trained weights, BatchNorm statistics included, moved (1-d) of the way to them after each
``train`` call (a generation's steps), as KataGo plays and ships averaged weights: single
generators measure up and down by tens of Elo against a fixed anchor, and the average of a
stretch of them keeps what they share. It is what ``cpu_model`` exports, and the checkpoint's
``model``, so everything that loads a checkpoint to play (the torch evaluator, a distillation
teacher, a snapshot, ``grow``) gets it; the optimiser's own weights go beside it as ``trained``,
and ``resume`` trains on from those.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from .config import StageConfig, TrainingConfig
from .model import NetConfig, NogoNet, build_model, load_checkpoint, multitask_loss, save_checkpoint
from .replay import sample_batch


def net_config(stage: StageConfig, aux_heads: int, soft_policy: bool = False) -> NetConfig:
    return NetConfig(blocks=stage.blocks, channels=stage.channels, garb=stage.garb,
                     liberty_features=stage.liberty_features, aux_heads=aux_heads,
                     soft_policy=soft_policy, head_channels=stage.head_channels,
                     value_hidden=stage.value_hidden)


def load_compatible(model: NogoNet, state: dict) -> list[str]:
    """Copy ``state`` into ``model`` where shapes agree; where only the first dimension differs
    (e.g. a different number of auxiliary policy planes) copy the overlap. Returns the names
    that could not be copied at all."""
    own = model.state_dict()
    skipped = []
    for name, t in own.items():
        src = state.get(name)
        if src is None or src.dim() != t.dim():
            skipped.append(name)
        elif src.shape == t.shape:
            t.copy_(src)
        elif src.shape[1:] == t.shape[1:]:
            k = min(src.shape[0], t.shape[0])
            t[:k].copy_(src[:k])
        else:
            skipped.append(name)
    return skipped


def loss_weights(tc: TrainingConfig) -> dict:
    return {"policy": 1.0, "value": tc.value_weight, "dominion": tc.dominion_weight,
            "score": tc.score_weight, "aux": tc.aux_weight, "soft_policy": tc.soft_policy_weight}


def compute_loss(model: NogoNet, batch: dict, weights: dict) -> tuple[torch.Tensor, dict]:
    """The NoGoZero+ multitask loss of ``model`` on a batch (``replay.sample_batch``)."""
    out = model(batch["planes"])
    aux = out["aux_policy"].shape[1]
    tgt = dict(batch)
    if aux and "aux_policy" in tgt:
        tgt["aux_policy"] = tgt["aux_policy"][:, :aux]
        tgt["aux_mask"] = tgt["aux_mask"][:, :aux]
    if weights.get("aux", 0) == 0:
        tgt.pop("aux_policy", None)
    return multitask_loss(out, tgt, weights)


class Trainer:
    """One network + optimiser; ``train(data, steps)`` runs SGD steps on replay arrays."""

    def __init__(self, cfg: NetConfig, tc: TrainingConfig, device: str = "cpu", seed: int = 0):
        torch.manual_seed(seed)
        self.device = torch.device(device)
        self.tc = tc
        self.model = build_model(cfg).to(self.device)
        self.opt = self._optimizer()
        self.meta: dict = {"steps": 0, "samples": 0, "generation": -1, "seconds": 0.0}
        self.rng = np.random.default_rng(seed)
        self.average: NogoNet | None = self._copy(self.model) if tc.average_decay > 0 else None

    @staticmethod
    def _copy(model: NogoNet) -> NogoNet:
        import copy

        return copy.deepcopy(model).eval()

    def _update_average(self) -> None:
        """Move the average (1-d) of the way to the trained weights (integer buffers, such as
        BatchNorm's batch count, are copied)."""
        d = self.tc.average_decay
        with torch.no_grad():
            trained = self.model.state_dict()
            for name, t in self.average.state_dict().items():
                if t.is_floating_point():
                    t.mul_(d).add_(trained[name], alpha=1.0 - d)
                else:
                    t.copy_(trained[name])

    def _optimizer(self):
        tc = self.tc
        params = self.model.parameters()
        if tc.optimizer == "adamw":
            return torch.optim.AdamW(params, lr=tc.lr, weight_decay=2 * tc.l2)
        return torch.optim.SGD(params, lr=tc.lr, momentum=tc.momentum, weight_decay=2 * tc.l2)

    @classmethod
    def resume(cls, path, tc: TrainingConfig, device: str = "cpu",
               seed: int = 0) -> "Trainer":
        """A trainer from a checkpoint written by ``save`` (model, optimiser, counters)."""
        model, state = load_checkpoint(path)
        t = cls(model.cfg, tc, device, seed)
        # ``model`` is the net that plays; with an average kept, ``trained`` holds the weights
        # the optimiser moves. A checkpoint without an average starts one at its weights.
        t.model.load_state_dict(state.get("trained", state["model"]))
        t.model.to(t.device)
        if t.average is not None:
            t.average.load_state_dict(model.state_dict())
            t.average.to(t.device)
        if "optimizer" in state and state.get("training", {}).get("optimizer") == tc.optimizer:
            try:
                t.opt.load_state_dict(state["optimizer"])
                for g in t.opt.param_groups:  # the config's values win over the saved ones
                    g["lr"] = tc.lr
                    if "momentum" in g:
                        g["momentum"] = tc.momentum
                    g["weight_decay"] = 2 * tc.l2
            except (ValueError, KeyError):
                pass  # a different shape of optimiser state: start it afresh
        t.meta.update({k: v for k, v in state.get("training", {}).items() if k in t.meta})
        t.rng = np.random.default_rng([seed, int(t.meta["steps"])])
        return t

    def init_from(self, path) -> list[str]:
        """Start from another checkpoint's weights (e.g. the bootstrap net): a smaller trunk
        with the same heads grows into this one computing what it computed (``grow``);
        otherwise whatever tensors fit are copied."""
        from .grow import GrowError, grow

        model, _ = load_checkpoint(path)
        with torch.no_grad():
            try:
                grown = grow(model, self.model.cfg)
            except GrowError:
                skipped = load_compatible(self.model, model.state_dict())
            else:
                self.model.load_state_dict(grown.state_dict())
                skipped = []
            if self.average is not None:  # the average starts at the weights it starts from
                self.average.load_state_dict(self.model.state_dict())
        return skipped

    def save(self, path, generation: int, extra: dict | None = None) -> None:
        self.meta["generation"] = generation
        training = {**self.meta, "optimizer": self.tc.optimizer, **(extra or {})}
        # Checkpoints are always loadable on the CPU.
        trained = None if self.average is None else self._copy(self.model).cpu()
        save_checkpoint(path, self.cpu_model(), training=training, optimizer=self.opt,
                        trained=trained)

    def cpu_model(self) -> NogoNet:
        """The net that plays, on the CPU in eval mode: the average when one is kept."""
        return self._copy(self.average if self.average is not None else self.model).cpu()

    def train(self, data: dict, steps: int, progress=None, teacher: NogoNet | None = None,
              distill: float = 0.0) -> list[dict]:
        """``steps`` optimiser steps on random symmetric batches of ``data``; returns one row of
        mean losses per ``log_every`` steps (and one for the remainder). With a ``teacher`` net
        and ``distill`` = w > 0, the targets become (1-w)·search + w·teacher (``distill_targets``)."""
        tc = self.tc
        weights = loss_weights(tc)
        self.model.train()
        if teacher is not None:
            teacher = teacher.to(self.device).eval()
        rows, acc, n_acc = [], {}, 0
        t0 = time.perf_counter()
        for i in range(steps):
            batch = sample_batch(data, tc.batch_size, self.rng, tc.symmetries,
                                 value_mix=tc.value_target_mix)
            batch = {k: v.to(self.device) for k, v in batch.items()}
            if teacher is not None and distill > 0:
                batch = distill_targets(teacher, batch, distill)
            loss, terms = compute_loss(self.model, batch, weights)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            self.meta["steps"] += 1
            self.meta["samples"] += tc.batch_size
            terms["total"] = float(loss.detach())
            for k, v in terms.items():
                acc[k] = acc.get(k, 0.0) + v
            n_acc += 1
            if progress is not None:
                progress(1)
            if n_acc == tc.log_every or i == steps - 1:
                rows.append({"step": self.meta["steps"],
                             **{k: round(v / n_acc, 5) for k, v in acc.items()}})
                acc, n_acc = {}, 0
        self.meta["seconds"] = round(self.meta["seconds"] + time.perf_counter() - t0, 1)
        self.model.eval()
        if self.average is not None:
            self._update_average()
        return rows


def distill_targets(teacher: NogoNet, batch: dict, w: float) -> dict:
    """Mix the teacher's outputs into a batch's targets: policy (1-w)·search + w·teacher's
    softmax over the legal moves (input plane 2), value (1-w)·target + w·teacher's win
    probability. Positions without a search target (fast searches, weight 0) get the
    teacher's policy at weight w, so every position teaches the student something."""
    with torch.no_grad():
        out = teacher(batch["planes"])
        legal = batch["planes"][:, 2].flatten(1) > 0
        logits = out["policy"].masked_fill(~legal, float("-inf"))
        p_teacher = torch.softmax(logits, dim=1).nan_to_num(0.0)
        v_teacher = torch.sigmoid(out["value_logit"])
    batch = dict(batch)
    batch["policy"] = (1.0 - w) * batch["policy"] + w * p_teacher
    batch["value"] = (1.0 - w) * batch["value"] + w * v_teacher
    return batch


def checkpoint_generation(path) -> int:
    """The generation recorded in a trainer checkpoint (-1 if absent or unreadable)."""
    if not Path(path).exists():
        return -1
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        return int(state.get("training", {}).get("generation", -1))
    except Exception:  # noqa: BLE001 - a damaged checkpoint is simply not this generation's
        return -1

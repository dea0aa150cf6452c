"""The nogobot network (torch): the only place the architecture is defined.

NoGoZero+ (Gao & Wu, §3.2) on a fully convolutional body (Schaul & Schmidhuber), so one net
runs on any board size 5..19:

* **Trunk:** 3×3 stem convolution, then ``blocks`` pre-activation residual blocks of ``channels``
  channels, GARB blocks alternating with ordinary ones (blocks 1, 3, 5, ... are GARB when
  ``garb``), then a final BN + ReLU.
* **GARB** (global attention residual block): BN-ReLU of the block input is split by two 3×3
  convolutions into X (2·C3 = channels) and G (C3 = channels/2); G -> BN -> ReLU -> global
  pooling (mean and max per channel: 2·C3 values) -> fully connected -> C1 = 2·C3 values added to X
  channel-wise (no dimensionality reduction), then BN-ReLU-conv3×3 and the skip connection.
  This is KataGo's global pooling block in the paper's proportions.
* **Input mask:** with ``liberty_features`` off, the liberty planes (4-7) are zeroed inside the
  graph, so the ablation net keeps the 12-plane ONNX contract and the engine runs it unchanged.
* **Policy head:** 1×1 convs to P and G, global-pooling bias from G added to P (the policy also
  needs global context, e.g. move parity), BN-ReLU, 1×1 conv to 1 + ``aux_heads`` logit planes.
  Logits are NOT masked: the engine masks illegal moves. The extra planes predict the next
  ``aux_heads`` moves after the one to play (darkforest, Tian & Zhu): training signal only, never
  exported.
* **Value head:** 1×1 conv -> BN-ReLU -> V; global pooling of V -> FC -> ReLU -> FC -> (value
  logit, score pre-activation). Score = 5·tanh (the final margin clipped to ±5). **Dominion:** 1×1
  conv of V -> one logit per point; P(point is own at the end) = sigmoid, exported as
  tanh(logit/2) = 2·sigmoid − 1 in [−1, 1] from the side-to-move view.

Everything is seen from the side to move. Checkpoints embed the ``NetConfig`` (KataGo style) and
are written atomically (tmp + os.replace), so ``load_checkpoint`` needs nothing else.
"""

from __future__ import annotations

import dataclasses
import io
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from ..core.atomicio import write_atomic
from ..net.features import FEATURE_VERSION, LIBERTY_PLANES, NUM_PLANES

CHECKPOINT_FORMAT = "nogobot-checkpoint"
CHECKPOINT_VERSION = 1
SCORE_SCALE = 5.0


@dataclass(frozen=True)
class NetConfig:
    """Network shape. Sizes in the paper's curriculum: 5×32 -> ... -> 20×128."""

    blocks: int = 6
    channels: int = 48
    garb: bool = True
    liberty_features: bool = True  # False zeroes the NoGoZero+ liberty planes (ablation)
    aux_heads: int = 2  # future-move policy planes used in training only (0 = none)
    soft_policy: bool = False  # one more policy plane for KataGo's soft target (training only)
    head_channels: int = 32  # channels of the policy and value heads
    value_hidden: int = 64  # width of the value/score fully connected layer
    input_planes: int = NUM_PLANES
    feature_version: int = FEATURE_VERSION

    def __post_init__(self):
        if self.blocks < 1 or self.channels < 2 or self.channels % 2:
            raise ValueError("need blocks >= 1 and an even number of channels >= 2")
        if self.head_channels < 1 or self.value_hidden < 1 or self.aux_heads < 0:
            raise ValueError("head sizes must be positive and aux_heads >= 0")

    @property
    def name(self) -> str:
        return f"b{self.blocks}c{self.channels}"

    @classmethod
    def from_dict(cls, d: dict) -> "NetConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown NetConfig fields: {sorted(unknown)}")
        return cls(**d)


def global_pool(x: torch.Tensor) -> torch.Tensor:
    """Mean and max of every channel over the board: [B, C, H, W] -> [B, 2C]."""
    return torch.cat([x.mean(dim=(2, 3)), x.amax(dim=(2, 3))], dim=1)


def conv3(cin: int, cout: int) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, 3, padding=1, bias=False)


def conv1(cin: int, cout: int, bias: bool = False) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, 1, bias=bias)


class ResBlock(nn.Module):
    """Ordinary pre-activation block: x + conv(relu(bn(conv(relu(bn(x))))))."""

    def __init__(self, c: int):
        super().__init__()
        self.bn1, self.conv1 = nn.BatchNorm2d(c), conv3(c, c)
        self.bn2, self.conv2 = nn.BatchNorm2d(c), conv3(c, c)

    def forward(self, x):
        y = self.conv1(F.relu(self.bn1(x)))
        return x + self.conv2(F.relu(self.bn2(y)))


class GARB(nn.Module):
    """Global attention residual block (NoGoZero+ Fig. 3), pre-activation form."""

    def __init__(self, c: int):
        super().__init__()
        g = c // 2  # C3; X has 2·C3 = c channels
        self.bn1 = nn.BatchNorm2d(c)
        self.conv_x, self.conv_g = conv3(c, c), conv3(c, g)
        self.bn_g = nn.BatchNorm2d(g)
        self.fc = nn.Linear(2 * g, c)  # 2·C3 pooled values -> C1 = 2·C3 biases
        self.bn2, self.conv2 = nn.BatchNorm2d(c), conv3(c, c)

    def forward(self, x):
        h = F.relu(self.bn1(x))
        gp = global_pool(F.relu(self.bn_g(self.conv_g(h))))
        y = self.conv_x(h) + self.fc(gp)[:, :, None, None]
        return x + self.conv2(F.relu(self.bn2(y)))


class PolicyHead(nn.Module):
    def __init__(self, c: int, hc: int, planes: int):
        super().__init__()
        self.conv_p, self.conv_g = conv1(c, hc), conv1(c, hc)
        self.bn_g = nn.BatchNorm2d(hc)
        self.fc = nn.Linear(2 * hc, hc)
        self.bn_p = nn.BatchNorm2d(hc)
        self.conv_out = conv1(hc, planes, bias=True)

    def forward(self, x, main_only: bool = False):
        gp = global_pool(F.relu(self.bn_g(self.conv_g(x))))
        h = F.relu(self.bn_p(self.conv_p(x) + self.fc(gp)[:, :, None, None]))
        if main_only:  # the exported graph: the move to play only, no auxiliary planes
            return F.conv2d(h, self.conv_out.weight[:1], self.conv_out.bias[:1])
        return self.conv_out(h)  # [B, planes, H, W]


class ValueHead(nn.Module):
    def __init__(self, c: int, hc: int, hidden: int):
        super().__init__()
        self.conv = conv1(c, hc)
        self.bn = nn.BatchNorm2d(hc)
        self.fc1 = nn.Linear(2 * hc, hidden)
        self.fc2 = nn.Linear(hidden, 2)  # value logit, score pre-tanh
        self.conv_dom = conv1(hc, 1, bias=True)

    def forward(self, x):
        v = F.relu(self.bn(self.conv(x)))
        out = self.fc2(F.relu(self.fc1(global_pool(v))))
        return out[:, 0], out[:, 1], self.conv_dom(v)[:, 0]


class NogoNet(nn.Module):
    """Input planes [B, C, H, W] -> dict of raw training outputs (see ``forward``)."""

    def __init__(self, cfg: NetConfig):
        super().__init__()
        self.cfg = cfg
        c = cfg.channels
        mask = torch.ones(cfg.input_planes)
        if not cfg.liberty_features:
            mask[list(LIBERTY_PLANES)] = 0.0
        # A non-persistent buffer: rebuilt from the config, never trained; exported as a Mul.
        self.register_buffer("input_mask", mask.view(1, -1, 1, 1), persistent=False)
        self.stem = conv3(cfg.input_planes, c)
        self.blocks = nn.ModuleList(
            GARB(c) if cfg.garb and i % 2 == 1 else ResBlock(c) for i in range(cfg.blocks)
        )
        self.bn_out = nn.BatchNorm2d(c)
        # Planes: the move to play, the aux next-move planes, then the soft policy plane last,
        # so a checkpoint without it loads into one with it (``trainer.load_compatible``).
        self.policy = PolicyHead(c, cfg.head_channels, 1 + cfg.aux_heads + int(cfg.soft_policy))
        self.value = ValueHead(c, cfg.head_channels, cfg.value_hidden)

    def trunk(self, x):
        if not self.cfg.liberty_features:
            x = x * self.input_mask
        x = self.stem(x)
        for blk in self.blocks:
            x = blk(x)
        return F.relu(self.bn_out(x))

    def forward(self, planes):
        """Returns ``policy`` [B, H*W] logits, ``aux_policy`` [B, aux, H*W] logits,
        ``value_logit`` [B], ``score`` [B] in [-5, 5], ``dominion_logit`` [B, H, W], and with
        ``cfg.soft_policy`` also ``soft_policy`` [B, H*W] logits."""
        x = self.trunk(planes)
        p = self.policy(x)
        value_logit, score_raw, dom = self.value(x)
        aux_end = 1 + self.cfg.aux_heads
        out = {
            "policy": p[:, 0].flatten(1),
            "aux_policy": p[:, 1:aux_end].flatten(2),
            "value_logit": value_logit,
            "score": SCORE_SCALE * torch.tanh(score_raw),
            "dominion_logit": dom,
        }
        if self.cfg.soft_policy:
            out["soft_policy"] = p[:, aux_end].flatten(1)
        return out


class ExportNet(nn.Module):
    """The exported contract: policy logits, win probability, dominion in [-1,1], score."""

    def __init__(self, net: NogoNet):
        super().__init__()
        self.net = net

    def forward(self, planes):
        x = self.net.trunk(planes)
        p = self.net.policy(x, main_only=True)
        value_logit, score_raw, dom = self.net.value(x)
        return (
            p[:, 0].flatten(1),
            torch.sigmoid(value_logit),
            torch.tanh(0.5 * dom),
            SCORE_SCALE * torch.tanh(score_raw),
        )


EXPORT_OUTPUTS = ("policy", "value", "dominion", "score")


# --------------------------------------------------------------------------------------------
# Loss (NoGoZero+ weights) and checkpoints
# --------------------------------------------------------------------------------------------

LOSS_WEIGHTS = {"policy": 1.0, "value": 1.5, "dominion": 0.5, "score": 0.25, "aux": 0.25,
                "soft_policy": 8.0}
SOFT_POLICY_POWER = 0.25  # KataGo: the soft target is the policy target ^ (1/4), renormalised


def soft_policy_target(policy: torch.Tensor) -> torch.Tensor:
    """KataGo's soft policy target: each row ^(1/4), renormalised to the row's own mass (the
    replay sampler scales rows by their policy weight, and a row of zeros stays zeros)."""
    mass = policy.sum(1, keepdim=True)
    soft = policy.clamp(min=0) ** SOFT_POLICY_POWER
    return soft / soft.sum(1, keepdim=True).clamp(min=1e-12) * mass


def multitask_loss(out: dict, tgt: dict, weights: dict | None = None) -> tuple[torch.Tensor, dict]:
    """Policy CE + 1.5·value BCE + 0.5·dominion BCE + 0.25·score MSE (+ aux CE); L2 is left to
    the optimiser's weight decay.

    Targets: ``policy`` [B, H*W] distribution; ``value`` [B] in {0, 1} (win for the side to move);
    ``dominion`` [B, H, W] in {-1, 0, 1}; ``score`` [B] in [-1, 1] (margin / 5); optional
    ``aux_policy`` [B, aux, H*W] distributions with ``aux_mask`` [B, aux] (0 where the game ended).
    The value target may be soft (``replay.sample_batch``'s ``value_mix``). When the net has a
    soft policy plane, it learns ``soft_policy_target(policy)`` (KataGo: it sharpens what the
    trunk learns about the moves the search considered second-best).
    """
    w = {**LOSS_WEIGHTS, **(weights or {})}
    terms = {
        "policy": -(tgt["policy"] * F.log_softmax(out["policy"], dim=1)).sum(1).mean(),
        "value": F.binary_cross_entropy_with_logits(out["value_logit"], tgt["value"]),
        "dominion": F.binary_cross_entropy_with_logits(
            out["dominion_logit"], (tgt["dominion"] + 1) / 2),
        "score": ((out["score"] / SCORE_SCALE - tgt["score"]) ** 2).mean(),
    }
    if "aux_policy" in tgt and out["aux_policy"].shape[1] > 0:
        ce = -(tgt["aux_policy"] * F.log_softmax(out["aux_policy"], dim=2)).sum(2)
        mask = tgt.get("aux_mask", torch.ones_like(ce))
        terms["aux"] = (ce * mask).sum() / mask.sum().clamp(min=1)
    if "soft_policy" in out:
        soft = soft_policy_target(tgt["policy"])
        terms["soft_policy"] = -(soft * F.log_softmax(out["soft_policy"], dim=1)).sum(1).mean()
    total = sum(w[k] * v for k, v in terms.items())
    return total, {k: float(v.detach()) for k, v in terms.items()}


def build_model(cfg: NetConfig) -> NogoNet:
    return NogoNet(cfg)


def save_checkpoint(path, model: NogoNet, training: dict | None = None,
                    optimizer: torch.optim.Optimizer | None = None,
                    trained: NogoNet | None = None) -> None:
    """Write a self-describing checkpoint atomically (``nogobot.core.atomicio``): ``model`` is the
    net that plays; ``trained``, where the two differ (a weight average plays), the weights the
    optimiser moves."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "config": asdict(model.cfg),
        "model": model.state_dict(),
        "training": dict(training or {}),
    }
    if optimizer is not None:
        state["optimizer"] = optimizer.state_dict()
    if trained is not None:
        state["trained"] = trained.state_dict()
    buf = io.BytesIO()
    torch.save(state, buf)
    write_atomic(path, buf.getvalue())


def load_checkpoint(path) -> tuple[NogoNet, dict]:
    """(model in eval mode, the raw checkpoint dict). Raises ValueError with the file named."""
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such checkpoint") from None
    except Exception as e:  # truncated, not a torch file, ...
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:100]
        raise ValueError(f"{path}: not a readable checkpoint (truncated, corrupt or not a torch "
                         f"file; torch said: {first})") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: not a nogobot checkpoint")
    if state.get("version") != CHECKPOINT_VERSION:
        raise ValueError(f"{path}: unknown checkpoint version {state.get('version')}")
    cfg = NetConfig.from_dict(state["config"])
    if cfg.feature_version != FEATURE_VERSION:
        raise ValueError(f"{path}: feature version {cfg.feature_version}, this code has "
                         f"{FEATURE_VERSION}")
    model = NogoNet(cfg)
    model.load_state_dict(state["model"])
    model.eval()
    return model, state

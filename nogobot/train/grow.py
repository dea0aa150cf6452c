"""Growing a net without forgetting (``nogobot train grow``): a deeper or wider trunk that
computes exactly what the smaller net computes, so a bigger stage starts at the smaller net's
strength instead of from random weights (Net2Net's aim, Chen et al. 2016, by zero paths).

- **Deeper.** New blocks go after the old ones (the GARB/plain alternation of ``NogoNet`` keeps
  every old block's kind) with their last convolution zero: each is the identity, and learns
  from the first step, since that convolution's gradient reads the block's nonzero activations.
- **Wider.** New channels of the residual stream, of each block's inner width and of the GARB
  pools are randomly initialised as usual, but every weight from a new channel to an old one is
  zero: old channels never read new ones, so the heads (which read only old channels at first)
  see what they saw. The zero weights are not frozen: their gradients (the old output's error
  times the new channel's activation) are nonzero, so training starts using the new channels.
  BatchNorm is per channel, in training as in evaluation, so new channels leave old ones alone.

Only the trunk grows: the heads' sizes, the auxiliary planes and the features must match."""

from __future__ import annotations

import torch

from .model import GARB, NetConfig, NogoNet

# Head and input settings that must be equal for a net to grow into another.
_SAME = ("garb", "liberty_features", "aux_heads", "soft_policy", "head_channels", "value_hidden",
         "input_planes", "feature_version")


class GrowError(ValueError):
    """The net cannot grow into that shape (one line: why)."""


def check_growable(old: NetConfig, new: NetConfig) -> None:
    """Raise ``GrowError`` unless ``new`` is ``old`` with at least as many blocks and channels."""
    for name in _SAME:
        if getattr(old, name) != getattr(new, name):
            raise GrowError(f"{name} differs ({getattr(old, name)} -> {getattr(new, name)}): "
                            "only the trunk's blocks and channels grow")
    if new.blocks < old.blocks or new.channels < old.channels:
        raise GrowError(f"{old.name} cannot shrink to {new.name}")


def _pool_index(n_old: int, n_new: int) -> torch.Tensor:
    """Where each of a global pool's 2·n_old inputs (means, then maxima) sits among 2·n_new."""
    idx = torch.arange(2 * n_old)
    return torch.where(idx < n_old, idx, idx - n_old + n_new)


def _pooled_inputs(name: str, net: NogoNet) -> bool:
    """Whether parameter ``name`` is a fully connected layer reading a trunk-sized global pool
    (a GARB's ``fc``): its input axis is (means, maxima) of the pooled channels."""
    parts = name.split(".")
    if parts[0] != "blocks" or parts[-2:] != ["fc", "weight"]:
        return False
    return isinstance(net.blocks[int(parts[1])], GARB)


@torch.no_grad()
def grow(old: NogoNet, cfg: NetConfig, seed: int = 0) -> NogoNet:
    """A net of shape ``cfg`` (in eval mode) that computes what ``old`` does."""
    check_growable(old.cfg, cfg)
    with torch.random.fork_rng():  # the caller's random state is left as it was
        torch.manual_seed(seed)
        new = NogoNet(cfg)
    old_state = old.state_dict()
    for name, t in new.state_dict().items():
        src = old_state.get(name)
        if src is None:  # a new block: the identity while its last convolution is zero
            if name.endswith("conv2.weight"):
                t.zero_()
            continue
        if t.dim() == 0 or src.shape == t.shape:
            t.copy_(src)
            continue
        # The old tensor fills the leading slice of each axis; a GARB's fc reads its pool's
        # means then maxima, each block of which moves as the pooled channels grow.
        index = [torch.arange(n) for n in src.shape]
        if t.dim() >= 2 and _pooled_inputs(name, new):
            index[1] = _pool_index(src.shape[1] // 2, t.shape[1] // 2)
        if t.dim() >= 2:  # a weight [out, in, ...]: nothing from a new input into an old output
            new_in = torch.ones(t.shape[1], dtype=torch.bool)
            new_in[index[1]] = False
            t[: src.shape[0], new_in] = 0
        t[torch.meshgrid(*index, indexing="ij")] = src
    new.eval()
    return new


def largest_difference(a: NogoNet, b: NogoNet, positions: int = 64, seed: int = 0) -> float:
    """The largest absolute difference of the two nets' outputs (policy logits, value logit,
    score, dominion) on random input planes, both in eval mode."""
    g = torch.Generator().manual_seed(seed)
    planes = (torch.rand(positions, a.cfg.input_planes, 9, 9, generator=g) < 0.3).float()
    a.eval(), b.eval()
    with torch.no_grad():
        oa, ob = a(planes), b(planes)
    return max(float((oa[k] - ob[k]).abs().max()) for k in
               ("policy", "value_logit", "score", "dominion_logit"))

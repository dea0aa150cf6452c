"""Net files from nets: `train average` (a weight average), `train grow` (a bigger net that plays
the same), `train quantize` (int8 for the CPU) and `export` (a training checkpoint to ONNX)."""

from __future__ import annotations

import click

from .options import comma_ints, train_extra
from .train import train_group

@train_group.command("average")
@click.argument("nets", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False),
                metavar="NETS...")
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
              help="Output NAME.onnx (NAME.yaml sidecar written beside it).")
@click.option("--note", default="", help="A line kept in the sidecar's training section.")
def train_average_cmd(nets, out, note) -> None:
    """The weight average of several ONNX NETS of one architecture (a stretch of a run's
    generators, runs/NAME/nets/genNNNN-s0.onnx), written with its sidecar: stochastic weight
    averaging, as KataGo ships its nets."""
    try:
        from ..train.average import AverageError, average_nets
    except ImportError as e:
        raise train_extra("train average", e) from None
    try:
        meta = average_nets(nets, out, note or None)
    except AverageError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"wrote {out} and its sidecar: the mean of {len(nets)} nets, "
               f"{meta['blocks']}x{meta['channels']}")


@train_group.command("grow")
@click.argument("checkpoint", type=click.Path(exists=True, dir_okay=False), metavar="CHECKPOINT")
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
              help="The grown torch checkpoint to write (a config's init_checkpoint).")
@click.option("--blocks", type=click.IntRange(min=1), default=None,
              help="Blocks of the grown trunk (default: as many as CHECKPOINT's).")
@click.option("--channels", type=click.IntRange(min=2), default=None,
              help="Channels of the grown trunk (default: as many as CHECKPOINT's).")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seed of the new channels' and blocks' random weights.")
def train_grow_cmd(checkpoint, out, blocks, channels, seed) -> None:
    """A deeper or wider net that computes what CHECKPOINT's net computes, so a bigger stage
    starts at its strength: new blocks are the identity and no new channel feeds an old one
    until training says so. Checked on random positions before it is written."""
    try:
        from ..train import require_torch

        require_torch()
        from ..train.grow import grow, largest_difference
        from ..train.model import load_checkpoint, save_checkpoint
    except ImportError as e:
        raise train_extra("train grow", e) from None
    import dataclasses

    try:
        old, state = load_checkpoint(checkpoint)
        cfg = dataclasses.replace(old.cfg, blocks=blocks or old.cfg.blocks,
                                  channels=channels or old.cfg.channels)
        new = grow(old, cfg, seed=seed)
    except ValueError as e:  # GrowError, an unreadable checkpoint, an odd channel count
        raise click.ClickException(str(e)) from None
    diff = largest_difference(old, new)
    if diff > 1e-4:
        raise click.ClickException(f"the grown net differs from {checkpoint} by {diff:.2e}")
    training = {"grown_from": str(checkpoint), "grown_from_net": old.cfg.name, "seed": seed,
                **{k: v for k, v in state.get("training", {}).items()
                   if k in ("selfplay_games", "generation", "run")}}
    save_checkpoint(out, new, training=training)
    click.echo(f"wrote {out}: {old.cfg.name} grown to {cfg.name}, largest output difference "
               f"{diff:.1e} on 64 random positions")


@train_group.command("quantize")
@click.argument("net", type=click.Path(exists=True, dir_okay=False), metavar="NET.onnx")
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
              help="Output NAME.onnx (NAME.yaml sidecar written beside it).")
@click.option("--games", default=64, show_default=True, type=click.IntRange(min=2),
              help="Games the net plays by its own policy: half calibrate, half check.")
@click.option("--positions", default=512, show_default=True, type=click.IntRange(min=1),
              help="Positions taken from each half.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed for the games.")
@click.option("--min-agreement", default=0.9, show_default=True,
              type=click.FloatRange(0, 1),
              help="Refuse a net whose best move is fp32's in fewer checked positions.")
def train_quantize_cmd(net, out, games, positions, seed, min_agreement) -> None:
    """The int8 net of an exported NET for the CPU (its tower's convolutions in int8), written
    with its sidecar, which records how often its best move is the fp32 net's."""
    try:
        from ..train.quantize import QuantizeError, quantize_net
    except ImportError as e:
        raise train_extra("train quantize", e) from None
    try:
        meta = quantize_net(net, out, games=games, positions=positions, seed=seed,
                            min_agreement=min_agreement)
    except QuantizeError as e:
        raise click.ClickException(str(e)) from None
    agreed = meta["quantization"]["agreement"]
    click.echo(f"wrote {out} and its sidecar: best move as fp32's in {agreed['top1']:.1%} of "
               f"{agreed['positions']} positions of {agreed['games']} games, policy distance "
               f"{agreed['policy_tv_mean']:.3f}, value within {agreed['value_diff_mean']:.3f} "
               f"(largest {agreed['value_diff_max']:.3f})")


@click.command("export")
@click.argument("checkpoint", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False),
              help="Output models/NAME.onnx (NAME.yaml sidecar written beside it).")
@click.option("--sizes", default="7,9,13", show_default=True,
              help="Board sizes of the onnxruntime-vs-torch parity check.")
@click.option("--tol", default=1e-4, show_default=True, help="Max abs difference allowed.")
def export_cmd(checkpoint: str, out: str, sizes: str, tol: float) -> None:
    """Export a training CHECKPOINT to ONNX + YAML sidecar (needs the train extra)."""
    try:
        from ..train.export import ExportError, export_checkpoint
    except ImportError as e:
        raise train_extra("export", e) from None
    try:
        meta = export_checkpoint(checkpoint, out, sizes=comma_ints(sizes), tol=tol)
    except ExportError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"wrote {out} and its sidecar: {meta['blocks']}x{meta['channels']}, parity "
               f"{meta['export']['parity_max_abs_diff']:.2e}")


COMMANDS = [export_cmd]

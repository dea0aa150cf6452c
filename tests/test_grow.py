"""Growing a net (``nogobot train grow``, ``Trainer.init_from``): the grown net computes what the
small one did, in evaluation and in training mode, and its new weights learn."""

import dataclasses

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from nogobot.cli import main  # noqa: E402
from nogobot.train.config import TrainingConfig  # noqa: E402
from nogobot.train.grow import GrowError, grow, largest_difference  # noqa: E402
from nogobot.train.model import NetConfig, NogoNet, load_checkpoint, save_checkpoint  # noqa: E402
from nogobot.train.trainer import Trainer  # noqa: E402

SMALL = NetConfig(blocks=3, channels=8, head_channels=4, value_hidden=8)


def _planes(n=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, SMALL.input_planes, 9, 9, generator=g) < 0.3).float()


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(3)
    net = NogoNet(SMALL)
    net.train()
    with torch.no_grad():  # BatchNorm running statistics that are not the defaults
        for s in range(3):
            net(_planes(seed=s))
    net.eval()
    return net


@pytest.mark.parametrize("blocks,channels", [(3, 8), (5, 8), (3, 12), (6, 16)])
def test_the_grown_net_computes_what_the_small_one_did(small, blocks, channels):
    new = grow(small, dataclasses.replace(SMALL, blocks=blocks, channels=channels))
    assert (new.cfg.blocks, new.cfg.channels) == (blocks, channels)
    assert largest_difference(small, new) < 1e-5
    # In training mode too: BatchNorm's batch statistics are per channel.
    small.train(), new.train()
    try:
        with torch.no_grad():
            a, b = small(_planes(seed=9)), new(_planes(seed=9))
        for k in ("policy", "value_logit", "score", "dominion_logit"):
            assert torch.allclose(a[k], b[k], atol=1e-5), k
    finally:
        small.eval()


def test_growing_is_seeded_and_leaves_the_callers_random_state(small):
    cfg = dataclasses.replace(SMALL, blocks=4, channels=12)
    torch.manual_seed(11)
    before = torch.rand(1)
    torch.manual_seed(11)
    a, b = grow(small, cfg, seed=5), grow(small, cfg, seed=5)
    assert torch.equal(torch.rand(1), before)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(),
                                                  b.state_dict().values()))


def test_the_new_weights_learn(small):
    new = grow(small, dataclasses.replace(SMALL, blocks=5, channels=12))
    new.train()
    out = new(_planes(seed=4))
    (out["policy"].logsumexp(1).sum() + out["value_logit"].pow(2).sum()).backward()
    # The zero paths from new channels into old ones, and a new block's last convolution.
    assert new.blocks[0].conv1.weight.grad[:8, 8:].abs().sum() > 0
    assert new.policy.conv_p.weight.grad[:, 8:].abs().sum() > 0
    assert new.blocks[4].conv2.weight.grad.abs().sum() > 0
    assert new.blocks[4].conv2.weight.abs().sum() == 0


@pytest.mark.parametrize("change", [dict(blocks=2), dict(channels=6), dict(head_channels=8),
                                    dict(aux_heads=0), dict(garb=False)])
def test_only_the_trunk_grows(small, change):
    with pytest.raises(GrowError):
        grow(small, dataclasses.replace(SMALL, **change))


def test_a_bigger_stage_starts_from_the_small_net(small, tmp_path):
    save_checkpoint(tmp_path / "small.pt", small)
    t = Trainer(dataclasses.replace(SMALL, blocks=4, channels=12), TrainingConfig())
    assert t.init_from(tmp_path / "small.pt") == []
    assert largest_difference(small, t.model) < 1e-5


def test_grow_from_the_command_line(small, tmp_path):
    save_checkpoint(tmp_path / "small.pt", small)
    runner = CliRunner()
    r = runner.invoke(main, ["train", "grow", str(tmp_path / "small.pt"), "-o",
                             str(tmp_path / "big.pt"), "--blocks", "4", "--channels", "10"])
    assert r.exit_code == 0, r.output
    assert "b3c8 grown to b4c10" in r.output
    big, state = load_checkpoint(tmp_path / "big.pt")
    assert (big.cfg.blocks, big.cfg.channels) == (4, 10)
    assert state["training"]["grown_from_net"] == "b3c8"
    assert largest_difference(small, big) < 1e-5
    r = runner.invoke(main, ["train", "grow", str(tmp_path / "small.pt"), "-o",
                             str(tmp_path / "less.pt"), "--channels", "6"])
    assert r.exit_code != 0 and "cannot shrink" in r.output
    assert not (tmp_path / "less.pt").exists()

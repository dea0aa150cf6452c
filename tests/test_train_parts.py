"""Pieces of the training loop: the loss on known values, symmetry augmentation keeping targets
aligned with the planes, policy target pruning, game targets, K=16 Elo, shards and replay."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from nogobot.game.board import Board  # noqa: E402
from nogobot.net.inference import UniformEvaluator  # noqa: E402
from nogobot.train.config import SelfPlayConfig, TrainingConfig  # noqa: E402
from nogobot.train.match import elo_update  # noqa: E402
from nogobot.train.model import NetConfig, load_checkpoint, multitask_loss  # noqa: E402
from nogobot.train.replay import ReplayBuffer, load_shard, sample_batch  # noqa: E402
from nogobot.train.selfplay import prune_policy_target, write_shard  # noqa: E402
from nogobot.train.trainer import Trainer, loss_weights  # noqa: E402

pytestmark = pytest.mark.torch
torch.set_num_threads(1)


def test_loss_on_known_values():
    """4 points, all logits 0: policy CE = ln 4, value/dominion BCE = ln 2, score err 0.5."""
    b, n = 2, 2
    out = {"policy": torch.zeros(b, n * n), "aux_policy": torch.zeros(b, 0, n * n),
           "value_logit": torch.zeros(b), "score": torch.zeros(b),
           "dominion_logit": torch.zeros(b, n, n)}
    tgt = {"policy": torch.eye(4)[:b], "value": torch.tensor([1.0, 0.0]),
           "dominion": torch.ones(b, n, n), "score": torch.tensor([0.5, -0.5])}
    total, terms = multitask_loss(out, tgt, loss_weights(TrainingConfig()))
    assert terms["policy"] == pytest.approx(math.log(4), abs=1e-6)
    assert terms["value"] == pytest.approx(math.log(2), abs=1e-6)
    assert terms["dominion"] == pytest.approx(math.log(2), abs=1e-6)
    assert terms["score"] == pytest.approx(0.25, abs=1e-6)
    want = math.log(4) + 1.5 * math.log(2) + 0.5 * math.log(2) + 0.25 * 0.25
    assert float(total) == pytest.approx(want, abs=1e-5)


def test_l2_is_weight_decay_twice_c():
    t = Trainer(NetConfig(blocks=1, channels=4, head_channels=2, value_hidden=4),
                TrainingConfig(l2=1e-5, lr=1e-3, momentum=0.8))
    g = t.opt.param_groups[0]
    assert (g["weight_decay"], g["lr"], g["momentum"]) == (2e-5, 1e-3, 0.8)


def test_game_shards_are_consistent(selfplay_shards):
    folder, played = selfplay_shards.folder, selfplay_shards.games
    for i, g in enumerate(played):
        d = load_shard(folder / f"gen0001/g{i:05d}.npz")
        n = g.plies
        assert len(d["value"]) == n and d["planes"].shape == (n, 12, 5, 5)
        # The sides alternate, so do the results; the last mover won.
        assert d["value"][-1] == 1.0 and np.all(d["value"][:-1] != d["value"][1:])
        # Policy targets are distributions; fast searches carry weight 0.
        np.testing.assert_allclose(d["policy"].astype(np.float32).sum(1), 1.0, atol=2e-3)
        assert set(np.unique(d["policy_weight"])) <= {0.0, 1.0}
        # The move played was legal: own-legal plane is 1 there.
        moves = np.load(folder / f"gen0001/g{i:05d}.npz")["moves"]
        assert all(d["planes"][j, 2].reshape(-1)[m] == 1 for j, m in enumerate(moves))
        assert (folder / f"gen0001/g{i:05d}.sgf").read_text().startswith("(;")
    assert any(d == 0 for g in played for d in g.arrays["policy_weight"])  # cap randomisation


def test_symmetry_keeps_targets_aligned_with_planes(selfplay_shards):
    folder = selfplay_shards.folder
    data = ReplayBuffer(folder, 10).load()
    rng = np.random.default_rng(0)
    for _ in range(24):
        t = sample_batch(data, 8, rng, symmetries=True)
        planes = t["planes"].numpy()
        own, opp = planes[:, 0], planes[:, 1]
        dom = t["dominion"].numpy()
        # Stones never leave a NoGo board: the final ownership agrees with every stone.
        assert np.all(dom[own == 1] == 1) and np.all(dom[opp == 1] == -1)
        # Policy mass only on points legal for the side to move (plane 2).
        pol = t["policy"].numpy().reshape(8, 5, 5)
        assert np.all(pol[planes[:, 2] == 0] == 0)
        # The next move (aux head 1) is the opponent's: legal for it (plane 3).
        aux, mask = t["aux_policy"].numpy()[:, 0].reshape(8, 5, 5), t["aux_mask"].numpy()[:, 0]
        for i in np.flatnonzero(mask):
            assert planes[i, 3][aux[i] == 1].all()


def test_policy_weight_rescaling():
    """Rows without a policy target do not dilute the policy loss."""
    from nogobot.train.replay import sample_batch as sb

    size, n = 3, 4
    data = {size: {
        "planes": np.zeros((n, 12, size, size), np.uint8),
        "policy": np.tile(np.eye(9, dtype=np.float16)[0], (n, 1)),
        "policy_weight": np.array([1, 0, 1, 0], np.float32),
        "aux": np.full((n, 2), -1, np.int16), "value": np.ones(n, np.float32),
        "score": np.zeros(n, np.float32), "dominion": np.zeros((n, size, size), np.int8)}}
    t = sb(data, 64, np.random.default_rng(1), symmetries=False)
    w = t["policy"].sum(1)
    assert float(w.mean()) == pytest.approx(1.0, abs=1e-5)
    full = 64 / float((w > 0).sum())
    assert all(v == 0 or v == pytest.approx(full, rel=1e-4) for v in w.numpy())


def test_prune_policy_target():
    # The best child keeps its visits; a low-prior, low-value child loses its exploration ones.
    visits = [80, 15, 5]
    pruned = prune_policy_target(visits, [0.5, 0.3, 0.2], [0.3, -0.2, -0.5], 1.1)
    assert pruned[0] == 80
    assert pruned[1] < 15 and pruned[2] < 5
    # A child whose value beats the best's PUCT score keeps everything.
    assert prune_policy_target([50, 40], [0.5, 0.5], [0.0, 0.9], 1.1)[1] == 40
    # Nothing to prune with a single child.
    assert list(prune_policy_target([10], [1.0], [0.0], 1.1)) == [10]


def test_elo_k16():
    a, b = elo_update(0.0, 0.0, 1, 0, k=16)
    assert (a, b) == (8.0, -8.0)
    a, b = elo_update(1000.0, 1000.0, 5, 5, k=16, order=[True, False] * 5)
    assert abs(a - 1000) < 3 and a + b == pytest.approx(2000)


def test_trainer_reduces_loss_on_shards(selfplay_shards, tmp_path):
    folder = selfplay_shards.folder
    data = ReplayBuffer(folder, 10).load()
    tc = TrainingConfig(lr=0.05, momentum=0.8, batch_size=32, log_every=10)
    t = Trainer(NetConfig(blocks=1, channels=8, head_channels=4, value_hidden=8), tc, seed=0)
    rows = t.train(data, 30)
    assert rows[-1]["total"] < rows[0]["total"]
    t.save(tmp_path / "c.pt", generation=7)
    t2 = Trainer.resume(tmp_path / "c.pt", tc)
    assert t2.meta["steps"] == 30 and t2.meta["generation"] == 7
    for p, q in zip(t.model.parameters(), t2.model.parameters()):
        assert torch.equal(p, q)


def test_the_net_that_plays_is_a_moving_average_of_the_trained_weights(selfplay_shards,
                                                                        tmp_path):
    """training.average_decay d: after each train call the average moves (1-d) of the way to
    the trained weights (BatchNorm statistics too); it is what exports and what a checkpoint's
    ``model`` holds, and resuming trains on from the optimiser's own weights."""
    data = ReplayBuffer(selfplay_shards.folder, 10).load()
    tc = TrainingConfig(lr=0.05, momentum=0.8, batch_size=32, average_decay=0.75)
    t = Trainer(NetConfig(blocks=1, channels=8, head_channels=4, value_hidden=8), tc, seed=0)
    floats = [k for k, v in t.model.state_dict().items() if v.is_floating_point()]
    start = {k: v.clone() for k, v in t.model.state_dict().items()}
    t.train(data, 5)
    first = {k: v.clone() for k, v in t.model.state_dict().items()}
    t.train(data, 5)
    trained, played = t.model.state_dict(), t.cpu_model().state_dict()
    for k in floats:
        want = 0.75 * (0.75 * start[k] + 0.25 * first[k]) + 0.25 * trained[k]
        torch.testing.assert_close(played[k], want)
    assert any(not torch.equal(played[k], trained[k]) for k in floats)
    assert any("running_var" in k for k in floats)

    t.save(tmp_path / "c.pt", generation=2)
    model, state = load_checkpoint(tmp_path / "c.pt")
    for k in floats:
        assert torch.equal(model.state_dict()[k], played[k])
        assert torch.equal(state["trained"][k], trained[k])
    t2 = Trainer.resume(tmp_path / "c.pt", tc)
    for k in floats:
        assert torch.equal(t2.model.state_dict()[k], trained[k])
        assert torch.equal(t2.cpu_model().state_dict()[k], played[k])
    # Without an average the trained weights play and the checkpoint holds them alone.
    plain = Trainer.resume(tmp_path / "c.pt", TrainingConfig(lr=0.05, batch_size=32))
    assert plain.average is None
    plain.save(tmp_path / "p.pt", generation=2)
    model, state = load_checkpoint(tmp_path / "p.pt")
    assert "trained" not in state
    assert all(torch.equal(model.state_dict()[k], trained[k]) for k in floats)


def test_sgf_records_give_the_same_targets(selfplay_shards):
    """--from-games on our SGF reproduces the shard's planes and results."""
    from nogobot.game import sgf
    from nogobot.train.replay import record_arrays

    folder = selfplay_shards.folder
    d = load_shard(folder / "gen0001/g00000.npz")
    r = record_arrays(sgf.load(folder / "gen0001/g00000.sgf"))
    np.testing.assert_array_equal(r["planes"], d["planes"])
    for k in ("value", "score", "dominion", "aux"):
        np.testing.assert_array_equal(r[k], d[k])
    assert Board(5).num_legal() == 25


def test_final_outcome_matches_the_bootstrap_kernel():
    """final_outcome (used by self-play and --from-games) agrees with bootstrap.play_greedy_game."""
    from nogobot.game.board import geometry
    from nogobot.train import bootstrap as bt
    from nogobot.train.data import final_outcome

    geo = geometry(7)
    np.random.seed(5)
    planes = np.zeros((60, 12, 7, 7), np.float32)
    pol, mv = np.zeros((60, 49)), np.zeros(60, np.int64)
    for _ in range(3):
        plies, winner, margin, own = bt.play_greedy_game(7, geo.nbr, geo.zobrist, geo.words, 4,
                                                         1.0, planes, pol, mv)
        b = Board(7)
        for m in mv[:plies]:
            b.play(int(m))
        assert b.is_terminal()
        w2, m2, own2 = final_outcome(b)
        assert (w2, m2) == (winner, margin)
        np.testing.assert_array_equal(own2, own)


def test_ladder_round_robin_accounts_every_game_and_rates_players(tmp_path):
    """`nogobot train ladder`: every pairing plays its games, the Elo is anchored on the first
    player and follows the results, and the table lists players by Elo."""
    from click.testing import CliRunner

    from nogobot.cli import main
    from nogobot.train.match import run_ladder

    res = run_ladder([("r1", "random"), ("g", "greedy"), ("r2", "random")], games=6, size=7,
                     seed=3)
    assert len(res.matches) == 3
    assert np.all((res.wins + res.wins.T)[~np.eye(3, dtype=bool)] == 6)
    assert res.ratings.elo["r1"] == 0.0
    elo = res.ratings.elo
    scores = res.wins.sum(axis=1)  # equal schedules: more wins means a higher rating
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        a, b = res.labels[i], res.labels[j]
        assert np.sign(elo[a] - elo[b]) == np.sign(scores[i] - scores[j])
    table = res.table().splitlines()
    best = res.labels[int(np.argmax(scores))]
    assert table[2].startswith(f"| {best} |") and "(anchor)" in "".join(table)
    out = tmp_path / "ladder.json"
    r = CliRunner().invoke(main, ["train", "ladder", "random", "greedy", "--games", "2",
                                  "--size", "7", "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "| greedy |" in r.output and out.exists()
    r = CliRunner().invoke(main, ["train", "ladder", "x=missing.onnx", "greedy"])
    assert r.exit_code != 0 and "missing.onnx: model file not found" in r.output


def test_gating_over_workers_plays_the_same_games_in_game_order(tmp_path):
    """``LocalBackend.play_gating`` spreads the games over its worker processes; each game is
    seeded on its own, so two workers give game for game what one process gives, in game
    order, with the candidate black in even games."""
    pytest.importorskip("onnx")
    from nogobot.game.board import BLACK
    from nogobot.train.backend import LocalBackend
    from nogobot.train.config import GatingConfig
    from nogobot.train.export import export_net
    from nogobot.train.match import play_match
    from nogobot.train.model import build_model

    torch.manual_seed(0)
    net = build_model(NetConfig(blocks=1, channels=8, head_channels=4, value_hidden=8)).eval()
    cand = tmp_path / "cand.onnx"
    export_net(net, cand, training={"board_sizes": [5]}, sizes=(5,))
    gating = GatingConfig(games=6, playouts=12, temperature_moves=4)
    one = LocalBackend(workers=1).play_gating(cand, "random", 6, 5, gating, seed=4,
                                              use_solver=True)
    ticks = []
    two = LocalBackend(workers=2).play_gating(cand, "random", 6, 5, gating, seed=4,
                                              use_solver=True, progress=ticks.append)
    assert (one.a, one.b) == (two.a, two.b) == ("cand", "random")
    assert one.outcomes == two.outcomes and len(one.outcomes) == 6
    assert (one.wins, one.losses) == (two.wins, two.losses) and one.wins + one.losses == 6
    assert ticks == [1] * 6
    # the result is the games' own: greedy against random, replayed one by one
    res = play_match(("greedy", 0), ("random", 0), 4, 5, seed=9, temperature_moves=0)
    from nogobot.train.match import make_player, play_agent_game

    for k in range(4):
        players = [make_player("greedy", 5, 0, 0, 9 + 7919 * k),
                   make_player("random", 5, 0, 0, 9 + 7919 * k + 1)]
        black, white = players if k % 2 == 0 else players[::-1]
        winner = play_agent_game(black, white, 5)[0]
        assert res.outcomes[k] == ((winner == BLACK) == (k % 2 == 0))  # A won game k


class _CountingUniform(UniformEvaluator):
    def __init__(self):
        super().__init__()
        self.batches = []

    def evaluate(self, planes):
        self.batches.append(len(planes))
        return super().evaluate(planes)


def test_concurrent_games_share_network_calls(tmp_path):
    """selfplay.concurrent_games: the games in play send their leaves in one network call (what
    keeps a GPU busy); every game still comes out complete and legal."""
    from nogobot.game import sgf
    from nogobot.train.selfplay import play_games_batched

    def run(concurrent: int, folder):
        sp = SelfPlayConfig(playouts=24, fast_playouts=8, batch_size=4, max_tree_mb=1,
                            use_solver=False, temperature_moves=3, concurrent_games=concurrent)
        ev = _CountingUniform()
        ended = []
        n = play_games_batched(ev, [folder / f"g{i}" for i in range(6)], 5, sp, 11, "u",
                               lambda stem, g: (write_shard(stem, g), ended.append(g)))
        return n, ev, ended

    n1, ev1, games1 = run(1, tmp_path / "one")
    n4, ev4, games4 = run(4, tmp_path / "four")
    assert n1 == n4 == 6 and len(games4) == 6
    assert max(ev1.batches) <= 4 < max(ev4.batches) <= 16
    # Fewer, larger calls for about the same work.
    assert len(ev4.batches) < 0.5 * len(ev1.batches)
    for i in range(6):
        d = load_shard(tmp_path / "four" / f"g{i}.npz")
        plies = int(np.load(tmp_path / "four" / f"g{i}.npz")["plies"])
        assert d["value"][-1] == 1.0 and len(d["value"]) == plies
        rec = sgf.load(tmp_path / "four" / f"g{i}.sgf")  # every move checked by the rules
        assert len(rec.moves) == plies


def test_ladder_merge_adds_wins_by_label_and_refits_elo(tmp_path):
    """`nogobot train ladder-merge`: the wins of several ladders are added by player label
    (after --same renames) and Bradley-Terry is refitted on the sum; the committed ledger
    ladder (ladder-200-sp1-gen95 extended by ladder-200-sp4-gen142, where sp5 was gen82)
    comes out as its merged file says; broken input is refused in one line naming the file."""
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from nogobot.cli import main
    from nogobot.tournament.elo import bradley_terry
    from nogobot.train.match import merge_ladders

    first = {"players": {"a": "random", "b": "greedy"}, "wins": [[0, 3], [5, 0]],
             "matches": [{"a": "a", "b": "b", "wins": 3, "losses": 5}]}
    second = {"names": ["B", "c"], "wins": [[0, 4], [4, 0]]}
    res = merge_ladders([("1.json", first), ("2.json", second)], same={"B": "b"})
    assert res.labels == ["a", "b", "c"] and res.specs == ["random", "greedy", ""]
    np.testing.assert_array_equal(res.wins, [[0, 3, 0], [5, 0, 4], [0, 4, 0]])
    expected = bradley_terry(res.labels, res.wins, anchor="a")
    assert res.ratings.elo == pytest.approx(expected.elo) and res.ratings.elo["a"] == 0
    assert res.ratings.elo["b"] > 0
    assert [m["from"] for m in res.matches] == ["1.json"]
    anchored = merge_ladders([("1.json", first), ("2.json", second)], {"B": "b"}, anchor="b")
    assert anchored.ratings.elo["b"] == 0 and anchored.ratings.elo["a"] < 0
    with pytest.raises(ValueError, match="2.json: 'wins' is not a 2x2"):
        merge_ladders([("1.json", first), ("2.json", {"names": ["x", "y"], "wins": [[1]]})])
    with pytest.raises(ValueError, match="anchor 'z'"):
        merge_ladders([("1.json", first)], anchor="z")

    ledger = Path(__file__).resolve().parents[1] / "tournaments" / "ledger" / "ladder-200"
    older = ledger / "ladder-200-sp1-gen95" / "ladder.json"
    newer = ledger / "ladder-200-sp4-gen142" / "ladder-sp4-gen142.json"
    merged = json.loads((ledger / "ladder-200-sp4-gen142" / "ladder-merged.json").read_text())
    out = tmp_path / "merged.json"
    r = CliRunner().invoke(main, ["train", "ladder-merge", str(older), str(newer),
                                  "--same", "sp5=gen82", "--json", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert list(doc["players"]) == merged["names"] and doc["wins"] == merged["wins"]
    assert doc["elo"] == pytest.approx(merged["elo"], abs=0.5)
    assert "| gen114 |" in r.output and doc["merged_from"] == [str(older), str(newer)]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = CliRunner().invoke(main, ["train", "ladder-merge", str(older), str(bad)])
    assert r.exit_code != 0 and f"{bad}: not readable as JSON" in r.output
    r = CliRunner().invoke(main, ["train", "ladder-merge", str(older), "--same", "sp5"])
    assert r.exit_code != 0 and "expected OLD=NEW" in r.output

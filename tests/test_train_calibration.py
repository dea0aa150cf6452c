"""``nogobot train calibration`` (nogobot/train/calibration.py): what it checks.

* The bins and scores (Brier, log loss, ECE) against numbers worked out by hand on five
  predictions; a predictor that is calibrated by construction scores ECE ~ 0 and a distorted one
  does not; the fitted temperature recovers the one an overconfident predictor was made with.
* The phases' bands, and bad bands refused in one line.
* Reading records: shards and SGF collections, the outcome from RE[] (a game lost on time
  counts), a .sgf beside its .npz read once, games without a result or of another size skipped.
* The comparison with a baseline net: the weighted ROC area equals the plain one on repeated
  positions; a sharper predictor's gains have intervals clear of zero, a net against itself
  differs by exactly zero.
* The command end to end with a tiny exported network on 5x5 games: the JSON's numbers are the
  network's own values against the games' outcomes, and bad input stops with one line.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from nogobot.game import sgf
from nogobot.game.board import BLACK, WHITE, Board
from nogobot.net.features import board_planes
from nogobot.train import calibration as cal
from nogobot.train import calibration_compare as compare_mod


def test_bins_and_scores_by_hand():
    p = np.array([0.05, 0.15, 0.15, 0.95, 1.0])
    y = np.array([0, 1, 0, 1, 1.0])
    bins = cal.bin_table(p, y)
    assert [b["count"] for b in bins] == [1, 2, 0, 0, 0, 0, 0, 0, 0, 2]  # 1.0 in the last bin
    assert bins[1]["mean_predicted"] == pytest.approx(0.15)
    assert bins[1]["win_rate"] == 0.5
    assert bins[9]["mean_predicted"] == pytest.approx(0.975) and bins[9]["win_rate"] == 1.0
    assert bins[2]["win_rate"] is None
    s = cal.scores(p, y)
    # Brier: (0.05² + 0.85² + 0.15² + 0.05² + 0²) / 5
    assert s["brier"] == pytest.approx(0.75 / 5)
    # ECE: (1·|0.05-0| + 2·|0.15-0.5| + 2·|0.975-1|) / 5
    assert s["ece"] == pytest.approx(0.8 / 5)
    ll = -(math.log(0.95) + math.log(0.15) + math.log(0.85) + math.log(0.95)
           + math.log(1 - cal.EPS)) / 5
    assert s["log_loss"] == pytest.approx(ll)
    assert s["count"] == 5 and s["win_rate"] == pytest.approx(0.6)
    assert s["mean_predicted_won"] == pytest.approx(0.7)  # (0.15 + 0.95 + 1.0) / 3
    assert s["mean_predicted_lost"] == pytest.approx(0.1)  # (0.05 + 0.15) / 2
    # ROC area: of the 6 (won, lost) pairs, 0.15 ties 0.15 (half) and every other won is above.
    assert s["auc"] == pytest.approx(5.5 / 6)


def test_roc_area_sees_resolution_not_bias():
    rng = np.random.default_rng(3)
    y = (rng.random(400) < 0.6).astype(float)
    p = np.clip(0.5 + 0.2 * (y - 0.5) + rng.normal(0, 0.15, 400), 0.01, 0.99)
    a = cal.auc(p, y)
    assert 0.6 < a < 1.0
    # A bias (the same logit offset everywhere) changes the log loss, never the order.
    biased = 1 / (1 + np.exp(-(cal.logit(p) - 1.0)))
    assert cal.auc(biased, y) == pytest.approx(a)
    assert cal.scores(biased, y)["log_loss"] != pytest.approx(cal.scores(p, y)["log_loss"])
    assert cal.auc(1 - p, y) == pytest.approx(1 - a)
    assert cal.auc(np.full(10, 0.7), np.arange(10) % 2) == 0.5  # no resolution at all
    assert cal.auc(p[y == 1], y[y == 1]) is None  # one outcome only


def test_calibrated_predictor_has_no_calibration_error():
    rng = np.random.default_rng(1)
    p = rng.random(200_000)
    y = (rng.random(len(p)) < p).astype(float)
    assert cal.scores(p, y)["ece"] < 0.01
    # The same outcomes against predictions pushed towards 0.5: off by up to 0.2.
    assert cal.scores(0.5 + (p - 0.5) * 0.6, y)["ece"] > 0.07


def test_fitted_temperature_undoes_overconfidence():
    rng = np.random.default_rng(2)
    z = rng.normal(0, 1.5, 100_000)
    y = (rng.random(len(z)) < 1 / (1 + np.exp(-z))).astype(float)
    overconfident = 1 / (1 + np.exp(-2 * z))  # the true logit doubled
    t = cal.fit_temperature(overconfident, y)
    assert t == pytest.approx(2.0, abs=0.1)
    assert cal.scores(cal.scaled(overconfident, t), y)["ece"] < 0.01
    assert cal.fit_temperature(1 / (1 + np.exp(-z)), y) == pytest.approx(1.0, abs=0.05)


def test_fitted_colour_offset_undoes_a_bias_for_black():
    rng = np.random.default_rng(3)
    z = rng.normal(0, 1.5, 100_000)
    black = rng.random(len(z)) < 0.5
    y = (rng.random(len(z)) < 1 / (1 + np.exp(-z))).astype(float)
    biased = 1 / (1 + np.exp(-(z + 0.6 * black)))  # black to move rated 0.6 logits too high
    w = cal.fit_logistic(cal.colour_features(biased, black), y)
    assert w == pytest.approx([1.0, -0.6, 0.0], abs=0.06)
    assert cal.scores(biased[black], y[black])["ece"] > 0.08
    fixed = cal.with_colour(biased, black, w)
    assert cal.scores(fixed[black], y[black])["ece"] < 0.015
    # A temperature alone cannot remove it.
    t = cal.fit_temperature(biased, y)
    assert cal.scores(cal.scaled(biased, t)[black], y[black])["ece"] > 0.05


def test_weighted_roc_area_is_the_area_of_the_repeated_positions():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 60))
        p = np.round(rng.random(n), 1)  # ties
        y = (rng.random(n) < 0.5).astype(np.float32)
        ranked = compare_mod.WeightedAuc(p, y)
        if 0 < y.sum() < n:
            assert ranked(np.ones(n)) == pytest.approx(cal.auc(p, y))
        w = rng.integers(0, 4, n)
        repeated_y = np.repeat(y, w)
        if 0 < repeated_y.sum() < len(repeated_y):
            assert ranked(w) == pytest.approx(cal.auc(np.repeat(p, w), repeated_y))
        else:
            assert math.isnan(ranked(w))


def synthetic_predictions(games: int = 300, seed: int = 0) -> cal.Predictions:
    """Games of 12 positions (30 down to 19 empty points) whose winner the net sees through
    a clear signal and the baseline through a faint one."""
    rng = np.random.default_rng(seed)
    won = np.repeat((rng.random(games) < 0.5).astype(np.float32), 12)
    won[1::2] = 1 - won[1::2]  # the other side is to move every second position
    signal = 2 * won - 1
    sharp = 1 / (1 + np.exp(-(1.0 * signal + rng.normal(0, 1, len(won)))))
    faint = 1 / (1 + np.exp(-(0.2 * signal + rng.normal(0, 1, len(won)))))
    n = len(won)
    return cal.Predictions(sharp.astype(np.float32), won, np.tile(np.arange(30, 18, -1), games),
                           np.repeat(np.arange(games), 12).astype(np.int32),
                           np.arange(n) % 2 == 0, np.full(n, np.nan, np.float32), games,
                           faint.astype(np.float32))


def test_compare_finds_the_sharper_net_and_nothing_in_a_net_against_itself():
    pred = synthetic_predictions()
    out = compare_mod.compare(pred, cal.spans(81, (61, 41, 25)), resamples=200)
    assert [ph["name"] for ph in out] == ["40-25", "24-0", "all"]  # empty phases left out
    for ph in out:
        assert ph["diff_auc"] == pytest.approx(ph["auc"] - ph["baseline_auc"])
        lo, hi = ph["diff_auc_95"]
        assert 0 < lo <= ph["diff_auc"] <= hi
        lo, hi = ph["diff_log_loss_95"]
        assert lo <= ph["diff_log_loss"] <= hi < 0
        assert ph["diff_brier_95"][1] < 0
    assert out[-1]["count"] == 12 * pred.games and out[-1]["games"] == pred.games
    # The same numbers as the calibration's own scores, for the net and the baseline.
    for key, p in (("", pred.predicted), ("baseline_", pred.baseline)):
        whole = cal.scores(p, pred.won)
        assert out[-1][f"{key}auc"] == pytest.approx(whole["auc"])
        assert out[-1][f"{key}log_loss"] == pytest.approx(whole["log_loss"])
        assert out[-1][f"{key}brier"] == pytest.approx(whole["brier"])
    same = cal.Predictions(*[getattr(pred, f) for f in ("predicted", "won", "empty", "game",
                                                          "black", "root", "games")],
                           baseline=pred.predicted.copy())
    for ph in compare_mod.compare(same, cal.spans(81, (61, 41, 25)), resamples=50):
        for key in ("auc", "log_loss", "brier"):
            assert ph[f"diff_{key}"] == 0 and ph[f"diff_{key}_95"] == [0.0, 0.0]
    with pytest.raises(ValueError, match="baseline"):
        compare_mod.compare(cal.Predictions(*[getattr(pred, f) for f in (
            "predicted", "won", "empty", "game", "black", "root", "games")]), cal.spans(81, (61,)))


def test_phases_from_bands():
    assert cal.phases(81, cal.BANDS_9X9) == [(81, 61), (60, 41), (40, 29), (28, 0)]
    assert cal.default_bands(9) == (61, 41, 29)
    assert cal.phases(25, cal.default_bands(5)) == [(25, 19), (18, 13), (12, 9), (8, 0)]
    for bad in ((90, 40), (40, 0), ()):
        with pytest.raises(cal.CalibrationError, match="bands"):
            cal.phases(81, bad)


def random_game(seed: int, size: int = 5, stop: int | None = None) -> Board:
    """A game of random legal moves, played to the end (or ``stop`` moves)."""
    rng = np.random.default_rng(seed)
    b = Board(size)
    while not b.is_terminal() and (stop is None or b.ply < stop):
        b.play(int(rng.choice(b.legal_moves())))
    return b


def write_shard(path, board: Board) -> dict:
    """The game as a shard with the keys calibration reads (root value: a made-up 0.25)."""
    replay = Board(board.size)
    planes, to_move = [], []
    for colour, p in board.moves:
        planes.append(board_planes(replay).astype(np.uint8))
        to_move.append(colour)
        replay.play(p, colour)
    won = (np.array(to_move) == board.winner()).astype(np.float32)
    arrays = {"planes": np.stack(planes), "value": won,
              "root_value": np.full(len(won), 0.25, np.float32)}
    np.savez(path, **arrays)
    return arrays


def collection(*records: sgf.GameRecord) -> str:
    return "\n".join(sgf.serialise(r) for r in records)


def test_read_games_from_shards_and_sgf(tmp_path):
    done, cut, small = random_game(1), random_game(2, stop=6), random_game(3, size=7)
    write_shard(tmp_path / "g00000.npz", done)
    sgf.save(sgf.record_of(done), tmp_path / "g00000.sgf")  # the same game: read once
    lost_on_time = sgf.record_of(cut)
    lost_on_time.result = "W+T"
    no_result = sgf.record_of(cut)
    (tmp_path / "games.sgf").write_text(
        collection(lost_on_time, no_result, sgf.record_of(small)))
    skipped = cal.Skipped()
    games = list(cal.read_games([tmp_path], 5, skipped))
    assert [g.source.split("/")[-1] for g in games] == ["g00000.npz", "games.sgf#1"]
    shard, timed = games
    assert shard.root is not None and np.all(shard.root == 0.25)
    # White won on time: its positions are the won ones, whatever the board says.
    colours = [c for c, _ in cut.moves]
    assert timed.won.tolist() == [float(c == WHITE) for c in colours]
    assert timed.root is None
    assert timed.black.tolist() == [c == BLACK for c in colours]
    assert timed.empty.tolist() == [25 - i for i in range(len(colours))]
    assert skipped.counts == {"no result": 1, "board size not 5": 1}
    assert skipped.examples["no result"].endswith("games.sgf#2")


def test_only_the_named_players_positions(tmp_path):
    game = random_game(4, stop=9)
    rec = sgf.record_of(game, black="engine", white="rave")
    rec.result = "B+R"
    (tmp_path / "games.sgf").write_text(collection(rec, sgf.record_of(game)))
    skipped = cal.Skipped()
    (only,) = cal.read_games([tmp_path], 5, skipped, players=("rave",))
    assert only.to_move == ["rave"] * 4 and only.won.tolist() == [0.0] * 4
    assert not only.black.any() and only.empty.tolist() == [24, 22, 20, 18]
    assert skipped.counts == {"no result": 1}  # the game without names has no result either


def test_bad_records_are_one_line_errors(tmp_path):
    junk = tmp_path / "junk.sgf"
    junk.write_text("not sgf at all")
    with pytest.raises(cal.CalibrationError, match="junk.sgf: not a readable SGF"):
        list(cal.read_games([junk], 9, cal.Skipped()))
    other = tmp_path / "x.npz"
    np.savez(other, a=np.zeros(3))
    with pytest.raises(cal.CalibrationError, match="x.npz: not a nogobot game shard"):
        list(cal.read_games([other], 9, cal.Skipped()))
    notes = tmp_path / "notes.txt"
    notes.touch()
    with pytest.raises(cal.CalibrationError, match="notes.txt: not a game record"):
        cal.record_files([notes])


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A tiny random network exported to ONNX (blocks=1, 8 channels)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from nogobot.train.export import export_net
    from nogobot.train.model import NetConfig, build_model

    torch.manual_seed(0)
    net = build_model(NetConfig(blocks=1, channels=8, head_channels=4, value_hidden=8)).eval()
    out = tmp_path_factory.mktemp("net") / "tiny.onnx"
    export_net(net, out, training={"board_sizes": [5]}, sizes=(5,))
    return out


def test_cli_end_to_end(tmp_path, tiny_model):
    from nogobot.cli import main
    from nogobot.net.inference import OnnxEvaluator

    data = tmp_path / "games"
    data.mkdir()
    shards = [write_shard(data / f"g{i:05d}.npz", random_game(10 + i)) for i in range(4)]
    extra = random_game(20)
    (data / "more.sgf").write_text(collection(sgf.record_of(extra)))
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(main, ["train", "calibration", str(data), "--model",
                                    str(tiny_model), "--size", "5", "--json", str(out),
                                    "--plot", str(tmp_path / "cal.png"), "--batch", "16"])
    assert res.exit_code == 0, res.output
    assert "Value calibration: tiny, 5 games" in res.output
    result = json.loads(out.read_text())
    # The numbers are the network's own values against the outcomes, position by position.
    planes = np.concatenate([s["planes"] for s in shards]).astype(np.float32)
    won = np.concatenate([s["value"] for s in shards])
    replay = Board(5)
    for colour, p in extra.moves:
        planes = np.concatenate([planes, board_planes(replay)[None]])
        won = np.append(won, float(colour == extra.winner()))
        replay.play(p, colour)
    value = OnnxEvaluator(tiny_model, device="cpu", threads=1).evaluate(planes).value
    overall = result["phases"][-1]
    assert overall["name"] == "all" and result["positions"] == len(won) == overall["count"]
    assert overall["brier"] == pytest.approx(float(np.mean((value - won) ** 2)), abs=1e-6)
    assert overall["mean_predicted"] == pytest.approx(float(value.mean()), abs=1e-6)
    assert sum(ph["count"] for ph in result["phases"][:-1]) == len(won)
    assert [ph["name"] for ph in result["phases"][:1]] == ["25-19"]
    # The root value is known for the shards' positions only (the SGF has none).
    assert overall["root"]["count"] == sum(len(s["value"]) for s in shards)
    assert overall["root"]["mean_predicted"] == pytest.approx(0.25)
    assert "wrote" in res.output and ("cal.png" in res.output or "matplotlib" in res.output)
    assert not list(tmp_path.glob("*.tmp"))
    # The fixes fitted here, scored on the same games by a second run: the same numbers.
    again = tmp_path / "again.json"
    res = CliRunner().invoke(main, ["train", "calibration", str(data), "--model",
                                    str(tiny_model), "--size", "5", "--fit-from", str(out),
                                    "--json", str(again)])
    assert res.exit_code == 0, res.output
    assert f"Fixes fitted on {out}" in res.output
    moved = json.loads(again.read_text())["phases"][-1]["transfer"]
    assert moved["T"] == overall["fit"]["T"]
    p = cal.scaled(value, overall["fit"]["T"])
    assert moved["with_T"]["brier"] == pytest.approx(float(np.mean((p - won) ** 2)), abs=1e-6)
    # Against a baseline: here the same net, so every difference is zero.
    res = CliRunner().invoke(main, ["train", "calibration", str(data), "--model",
                                    str(tiny_model), "--size", "5", "--baseline",
                                    str(tiny_model), "--json", str(again)])
    assert res.exit_code == 0, res.output
    assert "Against tiny on the same positions" in res.output
    base = json.loads(again.read_text())["baseline"]
    assert base["model"] == "tiny" and base["phases"][-1]["count"] == len(won)
    assert base["phases"][-1]["diff_log_loss"] == 0
    assert base["phases"][-1]["baseline_brier"] == pytest.approx(overall["brier"], abs=1e-6)


def test_cli_bad_input(tmp_path, tiny_model):
    from nogobot.cli import main

    (tmp_path / "empty").mkdir()
    runner = CliRunner()
    res = runner.invoke(main, ["train", "calibration", str(tmp_path / "empty"), "--model",
                               str(tiny_model)])
    assert res.exit_code == 1 and "no positions to measure" in res.output
    res = runner.invoke(main, ["train", "calibration", str(tmp_path), "--bands", "60,x",
                               "--model", str(tiny_model)])
    assert res.exit_code == 2 and "--bands" in res.output
    res = runner.invoke(main, ["train", "calibration", str(tmp_path), "--model",
                               str(tmp_path / "none.onnx")])
    assert res.exit_code == 1 and "none.onnx" in res.output
    res = runner.invoke(main, ["train", "calibration", str(tmp_path), "--model",
                               str(tiny_model), "--baseline", str(tmp_path / "other.onnx")])
    assert res.exit_code == 1 and "other.onnx" in res.output
    (tmp_path / "x.json").write_text("[]")
    res = runner.invoke(main, ["train", "calibration", str(tmp_path), "--model",
                               str(tiny_model), "--fit-from", str(tmp_path / "x.json")])
    assert res.exit_code == 1 and "x.json: not a calibration JSON" in res.output

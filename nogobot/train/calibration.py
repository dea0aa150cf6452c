"""Value calibration: how well the value head's win probability matches who actually won.

This module owns the measurement behind ``nogobot train calibration``:
- **positions**: ``read_games`` walks game records (self-play/teacher ``.npz`` shards as
  ``selfplay.GameRecorder`` writes them, SGF files, SGF collections such as a tournament's
  ``games.sgf``) and yields each game's positions, their empty-point count, whether the side to
  move went on to win, and the search's root value where a shard holds one (with ``players``,
  only the positions where one of the named players is to move: an engine's own view);
- **prediction**: ``collect`` evaluates the positions with a network in batches and keeps only
  the value head's output (the win probability of the side to move);
- **metrics**: ``calibration`` bins the predictions into 10 equal-width probability bins per game
  phase (bands of empty points) and scores them: Brier score, log loss and expected calibration
  error (ECE, the count-weighted mean gap between a bin's mean prediction and its win rate);
  ``fit_temperature`` fits one temperature for the value logit per phase, and ``fit_logistic``
  a temperature with an offset for black to move, on half of the games, and both are scored on
  the other half (or on another data set: ``--fit-from``), the simplest fixes a calibration
  error would call for;
- **comparison** (``--baseline``): a second net on the same positions (``calibration_compare``);
- ``measure`` does all of it for the command; ``calibration_report`` shows the result.

Needs numpy, onnxruntime and sgfmill only (no torch): it reads what the engine's evaluator
reads, so it measures the net exactly as the engine uses it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..game import sgf
from ..game.board import BLACK, WHITE
from ..net.features import board_planes

BINS = 10
BLACK_TO_MOVE_PLANE = 10  # features.py's "black to move": 1.0 everywhere when black is to move
EPS = 1e-6  # predictions are clipped to [EPS, 1-EPS] for the log loss: a proven 0/1 stays finite
# Lower bounds of the empty-point bands on 9x9: the opening, the middle game, the late middle
# game (down to where the engines' exact solver starts, 28 empty points) and the solved endgame.
BANDS_9X9 = (61, 41, 29)


class CalibrationError(ValueError):
    """Bad input for the measurement (an unreadable record, no positions): one line to show."""


@dataclass
class Game:
    """One game's positions (one row per position before a move), from the side to move."""

    source: str
    planes: np.ndarray  # uint8 [n, C, N, N]
    won: np.ndarray  # float32 [n]: 1 if the side to move won the game
    root: np.ndarray | None = None  # float32 [n]: the search's root value, if recorded
    to_move: list | None = None  # the name of the player to move (SGF PB/PW), if known

    def only(self, keep: np.ndarray) -> "Game":
        """The positions where ``keep`` is true."""
        return Game(self.source, self.planes[keep], self.won[keep],
                    None if self.root is None else self.root[keep],
                    None if self.to_move is None else [n for n, k in zip(self.to_move, keep) if k])

    @property
    def black(self) -> np.ndarray:
        """Whether black is to move at each position (the constant plane 10)."""
        return self.planes[:, BLACK_TO_MOVE_PLANE, 0, 0].astype(bool)

    @property
    def empty(self) -> np.ndarray:
        """Empty points of each position (on board, neither colour's stone)."""
        size = self.planes.shape[-1]
        stones = self.planes[:, 0].astype(np.int32) + self.planes[:, 1]
        return (size * size - stones.reshape(len(stones), -1).sum(axis=1)).astype(np.int16)


@dataclass
class Skipped:
    """Games left out, and why (the first reason of each kind is kept to show)."""

    counts: dict = field(default_factory=dict)
    examples: dict = field(default_factory=dict)

    def add(self, why: str, example: str) -> None:
        self.counts[why] = self.counts.get(why, 0) + 1
        self.examples.setdefault(why, example)


def record_files(paths) -> list[Path]:
    """The record files behind ``paths`` (files, or folders searched recursively), sorted.

    In a folder a ``gNNNNN.sgf`` beside its ``gNNNNN.npz`` is the same game: only the shard
    is read (it also holds the search's root values)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.suffix in (".npz", ".sgf") and f.is_file())
            shards = {f.with_suffix("") for f in found if f.suffix == ".npz"}
            out += [f for f in found if f.suffix == ".npz" or f.with_suffix("") not in shards]
        elif p.is_file():
            if p.suffix not in (".npz", ".sgf"):
                raise CalibrationError(f"{p}: not a game record (.npz shard or .sgf file)")
            out.append(p)
        else:
            raise CalibrationError(f"{p}: no such file or folder")
    return out


def _shard_game(path: Path) -> Game:
    try:
        with np.load(path) as z:
            files = set(z.files)
            if not {"planes", "value"} <= files:
                raise CalibrationError(f"{path}: not a nogobot game shard (no planes/value)")
            # Shards without root_value predate it; load_shard would fill in the result there,
            # which would make the search look perfect, so it stays unknown here.
            root = z["root_value"].astype(np.float32) if "root_value" in files else None
            return Game(str(path), z["planes"], z["value"].astype(np.float32), root)
    except (OSError, ValueError) as e:
        if isinstance(e, CalibrationError):
            raise
        raise CalibrationError(f"{path}: not a readable .npz shard ({e})") from None


def record_winner(rec: sgf.GameRecord, board) -> int | None:
    """The winning colour: the record's RE[] (B+... / W+...: a game lost on time or by
    resignation counts as lost), else the side left without a legal move at the end."""
    res = (rec.result or "").strip().upper()
    if res[:2] in ("B+", "W+"):
        return BLACK if res[0] == "B" else WHITE
    if board.is_terminal():
        return 3 - board.to_move
    return None


def _sgf_game(name: str, rec: sgf.GameRecord) -> Game | None:
    board = rec.board(upto=0)
    planes, to_move = [], []
    for colour, p in rec.moves:
        board.to_move = colour  # a record may let one colour move twice (setup, handicap)
        planes.append(board_planes(board).astype(np.uint8))
        to_move.append(colour)
        board.play(p, colour)
    winner = record_winner(rec, board)
    if winner is None or not planes:
        return None
    names = [rec.black if c == BLACK else rec.white for c in to_move]
    return Game(name, np.stack(planes), (np.array(to_move) == winner).astype(np.float32),
                to_move=names)


def _sgf_texts(path: Path) -> list[bytes]:
    """Each game of an SGF file (one game, or a collection of them) as its own SGF text."""
    from sgfmill import sgf as sgfmill_sgf
    from sgfmill import sgf_grammar

    try:
        trees = sgf_grammar.parse_sgf_collection(path.read_bytes())
        return [sgfmill_sgf.Sgf_game.from_coarse_game_tree(t).serialise() for t in trees]
    except (OSError, ValueError) as e:
        raise CalibrationError(f"{path}: not a readable SGF file ({e})") from None


def read_games(paths, size: int, skipped: Skipped, players=()):
    """Yield every ``Game`` of board size ``size`` in the records behind ``paths``; games of
    another size, without a result, or with an illegal move are counted in ``skipped``. With
    ``players`` (names as in SGF PB/PW), only the positions where one of them is to move."""
    for game in _all_games(paths, size, skipped):
        if players:
            keep = np.array([n in players for n in game.to_move or ()], bool)
            if not keep.any():
                skipped.add("none of the players to move", game.source)
                continue
            game = game.only(keep)
        yield game


def sgf_records(path: Path, size: int, skipped: Skipped):
    """Yield (name, record) for each game of board size ``size`` in the SGF file ``path`` (one
    game or a collection: a results folder's ``games.sgf``); illegal records and other sizes are
    counted in ``skipped``."""
    texts = _sgf_texts(path)
    for i, text in enumerate(texts):
        name = f"{path}#{i + 1}" if len(texts) > 1 else str(path)
        try:
            rec = sgf.parse(text)
        except sgf.SgfError as e:
            skipped.add("not a legal NoGo record", f"{name}: {e}")
            continue
        if rec.size != size:
            skipped.add(f"board size not {size}", name)
            continue
        yield name, rec


def _all_games(paths, size: int, skipped: Skipped):
    for path in record_files(paths):
        if path.suffix == ".npz":
            game = _shard_game(path)
            if game.planes.shape[-1] != size:
                skipped.add(f"board size not {size}", str(path))
            elif len(game.won):
                yield game
            continue
        for name, rec in sgf_records(path, size, skipped):
            game = _sgf_game(name, rec)
            if game is None:
                skipped.add("no result", name)
            else:
                yield game


@dataclass
class Predictions:
    """Every position's network prediction beside what happened."""

    predicted: np.ndarray  # float32 [n]: the value head's win probability for the side to move
    won: np.ndarray  # float32 [n]
    empty: np.ndarray  # int16 [n]
    game: np.ndarray  # int32 [n]: the game's index in reading order
    black: np.ndarray  # bool [n]: black to move
    root: np.ndarray  # float32 [n]: the search's root value, NaN where not recorded
    games: int
    baseline: np.ndarray | None = None  # float32 [n]: a second net's prediction (compare)


def collect(games, evaluator, batch: int = 256, baseline=None) -> Predictions:
    """Evaluate every position of ``games`` (an iterable of ``Game``) with ``evaluator``, and
    with the ``baseline`` evaluator too when given, in batches of about ``batch`` positions."""
    pending: list[np.ndarray] = []
    predicted: list[np.ndarray] = []
    other: list[np.ndarray] = []
    won, empty, index, root, black = [], [], [], [], []

    def flush() -> None:
        if pending:
            x = np.concatenate(pending).astype(np.float32)
            predicted.append(np.asarray(evaluator.evaluate(x).value, np.float32))
            if baseline is not None:
                other.append(np.asarray(baseline.evaluate(x).value, np.float32))
            pending.clear()

    n_games = 0
    for g in games:
        pending.append(g.planes)
        won.append(g.won)
        empty.append(g.empty)
        black.append(g.black)
        index.append(np.full(len(g.won), n_games, np.int32))
        root.append(g.root if g.root is not None else np.full(len(g.won), np.nan, np.float32))
        n_games += 1
        if sum(len(p) for p in pending) >= batch:
            flush()
    flush()
    if not n_games:
        raise CalibrationError("no positions to measure (no game of that board size with a result)")
    return Predictions(np.concatenate(predicted), np.concatenate(won), np.concatenate(empty),
                       np.concatenate(index), np.concatenate(black), np.concatenate(root),
                       n_games, np.concatenate(other) if baseline is not None else None)


# ------------------------------------------------------------------------------------------
# Metrics
# ------------------------------------------------------------------------------------------


def bin_table(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> list[dict]:
    """Equal-width probability bins over [0, 1] (1.0 falls in the last): per bin its bounds,
    count, mean prediction and observed win rate (None when empty)."""
    idx = np.minimum((np.asarray(p) * bins).astype(np.int64), bins - 1)
    out = []
    for b in range(bins):
        m = idx == b
        n = int(m.sum())
        out.append({"lo": b / bins, "hi": (b + 1) / bins, "count": n,
                    "mean_predicted": float(p[m].mean()) if n else None,
                    "win_rate": float(y[m].mean()) if n else None})
    return out


def auc(p: np.ndarray, y: np.ndarray) -> float | None:
    """The chance that a position from a won game is rated above one from a lost game (ties
    count half): the ROC area, None without both. A bias moves every prediction alike and
    leaves it unchanged, so it measures how well the net tells the games apart, on its own."""
    p = np.asarray(p, np.float64)
    won = np.asarray(y) == 1
    n_won, n_lost = int(won.sum()), int(len(p) - won.sum())
    if not n_won or not n_lost:
        return None
    order = np.argsort(p, kind="stable")
    _, first, counts = np.unique(p[order], return_index=True, return_counts=True)
    ranks = np.empty(len(p))
    ranks[order] = np.repeat(first + (counts + 1) / 2, counts)  # 1-based, ties averaged
    return float((ranks[won].sum() - n_won * (n_won + 1) / 2) / (n_won * n_lost))


def scores(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> dict:
    """Brier score, log loss, ECE and ROC area of predictions ``p`` against outcomes ``y``
    (0/1)."""
    p = np.asarray(p, np.float64)
    y = np.asarray(y, np.float64)
    if not len(p):
        return {"count": 0}
    q = np.clip(p, EPS, 1 - EPS)
    table = bin_table(p, y, bins)
    ece = sum(b["count"] * abs(b["mean_predicted"] - b["win_rate"]) for b in table if b["count"])
    won, lost = y == 1, y == 0
    return {"count": int(len(p)), "mean_predicted": float(p.mean()), "win_rate": float(y.mean()),
            # How far the net tells the games apart (calibration alone does not: a constant
            # prediction at the base rate is perfectly calibrated).
            "mean_predicted_won": float(p[won].mean()) if won.any() else None,
            "mean_predicted_lost": float(p[lost].mean()) if lost.any() else None,
            "auc": auc(p, y),
            "brier": float(np.mean((p - y) ** 2)),
            "log_loss": float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q))),
            "ece": float(ece / len(p))}


def logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(np.asarray(p, np.float64), EPS, 1 - EPS)
    return np.log(q / (1 - q))


def scaled(p: np.ndarray, temperature: float) -> np.ndarray:
    """``p`` with its logit divided by ``temperature`` (T > 1 softens, T < 1 sharpens)."""
    return 1.0 / (1.0 + np.exp(-logit(p) / temperature))


def _log_loss_of(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    s = x @ w  # log(1 + e^-s) and log(1 + e^s) without overflow
    return float(np.mean(y * np.logaddexp(0, -s) + (1 - y) * np.logaddexp(0, s)))


def fit_logistic(x: np.ndarray, y: np.ndarray, ridge: float = 1e-6) -> np.ndarray:
    """The weights w minimising the log loss of sigmoid(x @ w) against ``y`` (x [n, k]).

    Newton's method with step halving; the tiny ridge keeps w finite when the data are
    separable (a prediction that is never wrong)."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    w = np.zeros(x.shape[1])
    loss = _log_loss_of(w, x, y)
    for _ in range(50):
        q = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (q - y) / len(y) + ridge * w
        hess = (x.T * (q * (1 - q))) @ x / len(y) + ridge * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        for _ in range(30):
            new = w - step
            new_loss = _log_loss_of(new, x, y)
            if new_loss <= loss:
                break
            step = step / 2
        else:
            break
        w, done = new, loss - new_loss < 1e-12
        loss = new_loss
        if done:
            break
    return w


def fit_temperature(p: np.ndarray, y: np.ndarray) -> float:
    """The temperature T minimising the log loss of sigmoid(logit(p) / T) against ``y``."""
    return float(1.0 / fit_logistic(logit(p)[:, None], y)[0])


def colour_features(p: np.ndarray, black: np.ndarray) -> np.ndarray:
    """[logit, black to move, 1] per position: a temperature, a colour offset and a bias."""
    return np.stack([logit(p), np.asarray(black, np.float64), np.ones(len(p))], axis=1)


def with_colour(p: np.ndarray, black: np.ndarray, w) -> np.ndarray:
    """``p`` recalibrated by ``fit_logistic`` weights over ``colour_features``."""
    return 1.0 / (1.0 + np.exp(-(colour_features(p, black) @ np.asarray(w, np.float64))))


def default_bands(size: int) -> tuple[int, ...]:
    """The 9x9 bands' lower bounds, scaled to the board's area for other sizes."""
    if size == 9:
        return BANDS_9X9
    return tuple(round(b * size * size / 81) for b in BANDS_9X9)


def phases(area: int, bands) -> list[tuple[int, int]]:
    """(most, fewest) empty points of each phase, from the bands' lower bounds (descending)."""
    lows = sorted({int(b) for b in bands}, reverse=True)
    if not lows or lows[0] > area or lows[-1] < 1:
        raise CalibrationError(f"bands {','.join(map(str, bands))}: each must lie in 1..{area}")
    tops = [area] + [b - 1 for b in lows]
    return list(zip(tops, lows + [0]))


def spans(area: int, bands) -> list[tuple[str, int, int]]:
    """(name, most, fewest empty points) of each phase, then of the whole game ("all")."""
    return [(f"{top}-{low}", top, low) for top, low in phases(area, bands)] + [("all", area, 0)]


def calibration(pred: Predictions, area: int, bands, fitted: dict | None = None) -> dict:
    """The whole measurement: per phase and overall, the bins and scores of the value head,
    of the search's root value where recorded, and two fixes fitted on a random half of the
    games and scored on the other half (held out): a temperature, and a temperature with an
    offset for black to move and a bias. ``fitted`` (phase name -> {"T", "colour"}, from an
    earlier measurement) is scored on all positions too."""
    # A random half, not the even games: a tournament's paired openings alternate colours and
    # engines game by game, so even and odd games are different populations.
    fit_games = np.random.default_rng(0).random(pred.games) < 0.5
    out_phases = []
    for name, top, low in spans(area, bands):
        m = (pred.empty <= top) & (pred.empty >= low)
        p, y, g, r = pred.predicted[m], pred.won[m], pred.game[m], pred.root[m]
        black = pred.black[m]
        entry = {"name": name, "empty_max": top, "empty_min": low, **scores(p, y),
                 "games": int(len(np.unique(g))), "bins": bin_table(p, y),
                 # A bias that flips sign with the colour cancels in the totals: shown apart.
                 "black_to_move": scores(p[black], y[black]),
                 "white_to_move": scores(p[~black], y[~black])}
        known = ~np.isnan(r)
        if known.any():
            entry["root"] = {**scores(r[known], y[known]),
                             "net": scores(p[known], y[known])}  # the same positions
        fit = fit_games[g]
        held = ~fit
        if fit.any() and held.any() and 0 < y[fit].mean() < 1:
            t = fit_temperature(p[fit], y[fit])
            w = fit_logistic(colour_features(p[fit], black[fit]), y[fit])
            entry["fit"] = {"T": t, "colour": w.tolist(), "fit_positions": int(fit.sum()),
                            "held_out": scores(p[held], y[held]),
                            "held_out_T": scores(scaled(p[held], t), y[held]),
                            "held_out_colour": scores(with_colour(p[held], black[held], w),
                                                      y[held])}
        old = (fitted or {}).get(entry["name"])
        if old:  # fits from another measurement (--fit-from), scored on all of these positions
            entry["transfer"] = {"T": old["T"], "colour": old["colour"],
                                 "with_T": scores(scaled(p, old["T"]), y),
                                 "with_colour": scores(with_colour(p, black, old["colour"]), y)}
        if entry["count"]:
            out_phases.append(entry)
    return {"positions": int(len(pred.predicted)), "games": pred.games, "phases": out_phases}


def fits_of(path) -> dict:
    """Phase name -> the fits of an earlier measurement's JSON (``--fit-from``)."""
    try:
        result = json.loads(Path(path).read_text())
        return {ph["name"]: ph["fit"] for ph in result["phases"] if "fit" in ph}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CalibrationError(f"{path}: not a calibration JSON ({e})") from None


def measure(model_path, paths, size: int = 9, bands=None, threads: int = 1,
            batch: int = 256, players=(), fit_from=None, baseline_path=None,
            resamples: int = 1000) -> dict:
    """Read the records behind ``paths``, evaluate them with the model at ``model_path`` and
    return the whole measurement (``calibration`` plus what was measured and skipped; with
    ``baseline_path``, ``compare``'s differences under "baseline")."""
    from ..net.inference import load_evaluator

    bands = tuple(bands) if bands else default_bands(size)
    phases(size * size, bands)  # a bad band stops here, before any network loads
    fitted = fits_of(fit_from) if fit_from else None
    evaluator = load_evaluator(model_path, device="cpu", threads=threads, warmup_size=size)
    other = (load_evaluator(baseline_path, device="cpu", threads=threads, warmup_size=size)
             if baseline_path else None)
    skipped = Skipped()
    pred = collect(read_games(paths, size, skipped, tuple(players)), evaluator, batch, other)
    result = {"model": Path(model_path).stem, "model_path": str(model_path),
              "sources": [os.fspath(p) for p in paths], "size": size,
              "players": list(players),
              "bands": list(bands), "fit_from": fit_from and str(fit_from),
              **calibration(pred, size * size, bands, fitted),
              "skipped": skipped.counts, "skipped_examples": skipped.examples}
    if other is not None:
        from .calibration_compare import compare

        result["baseline"] = {"model": Path(baseline_path).stem,
                              "model_path": str(baseline_path), "resamples": resamples,
                              "phases": compare(pred, spans(size * size, bands), resamples,
                                                eps=EPS)}
    return result

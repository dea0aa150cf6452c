"""The strength ledger's reader and plot (`nogobot train report models/ledger.yaml`): a bad
entry is refused naming the file and the net, the hours panel appears only where nets carry
``box_hours``, and the project's own ledger reads and draws."""

import struct
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nogobot.cli import main
from nogobot.train.report import ReportError, draw_ledger, ledger_series, read_ledger

ROOT = Path(__file__).resolve().parents[1]


def _ledger(tmp_path, nets, **top) -> Path:
    path = tmp_path / "ledger.yaml"
    path.write_text(yaml.safe_dump({"title": "t", "anchor": "a", "nets": nets, **top}))
    return path


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


NETS = [
    {"name": "a", "selfplay_games": 0, "elo": 0},
    {"name": "b", "selfplay_games": 900, "elo": 150, "elo_ci": [60, 240], "box_hours": 2.5},
    {"name": "c", "selfplay_games": 400, "elo": 90, "box_hours": 1.0},
    {"name": "d", "selfplay_games": 400, "elo": -20, "line": "arms", "box_hours": 1.2},
]


def test_series_by_line_and_axis(tmp_path):
    led = read_ledger(_ledger(tmp_path, NETS))
    games = ledger_series(led, "selfplay_games")
    assert [n["name"] for n in games["campaign"]] == ["a", "c", "b"]
    assert [n["name"] for n in games["arms"]] == ["d"]
    hours = ledger_series(led, "box_hours")
    # "a" has no hours: it is left out of the hours panel, not put at zero
    assert [n["name"] for n in hours["campaign"]] == ["c", "b"]


@pytest.mark.parametrize("bad, words", [
    ({"box_hours": "two"}, "'box_hours' must be a number"),
    ({"box_hours": -1}, "cannot be negative"),
    ({"elo_ci": [200, 300]}, "'elo_ci' must be [low, high] around its elo"),
    ({"elo": True}, "'elo' must be a number"),
])
def test_bad_entries_are_refused_by_name(tmp_path, bad, words):
    nets = [dict(NETS[0]), {**NETS[1], **bad}]
    path = _ledger(tmp_path, nets)
    with pytest.raises(ReportError) as e:
        read_ledger(path)
    assert str(path) in str(e.value) and "(b)" in str(e.value) and words in str(e.value)


def test_hours_panel_only_with_hours(tmp_path):
    pytest.importorskip("matplotlib")
    with_hours = draw_ledger(_ledger(tmp_path, NETS), tmp_path / "two.png")
    plain = [{k: v for k, v in n.items() if k != "box_hours"} for n in NETS]
    (tmp_path / "plain").mkdir()
    without = draw_ledger(_ledger(tmp_path / "plain", plain), tmp_path / "one.png")
    w2, h2 = _png_size(with_hours)
    w1, h1 = _png_size(without)
    assert h1 == h2 and w2 > 1.5 * w1  # two panels side by side against one


def test_project_ledger_reads_and_draws(tmp_path):
    led = read_ledger(ROOT / "models" / "ledger.yaml")
    assert led["anchor"] in {n["name"] for n in led["nets"]}
    pytest.importorskip("matplotlib")
    out = tmp_path / "ledger.png"
    result = CliRunner().invoke(main, ["train", "report", str(ROOT / "models" / "ledger.yaml"),
                                       "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.output
    assert _png_size(out)[0] > 0

"""The strength ledger's reader, plot and tables (`nogobot train report models/ledger.yaml`): a
bad entry is refused naming the file and the net, the hours panel appears only where nets carry
``box_hours``, the project's own ledger reads and draws, and docs/results.md shows its tables as
the ledger has them (regenerated here and compared)."""

import re
import struct
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nogobot.cli import main
from nogobot.train.ledger_tables import (
    BEGIN,
    END,
    ledger_markdown,
    ledger_matches,
    replace_region,
    write_ledger_tables,
)
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


# -- the ledger's tables in docs/results.md -------------------------------------------------------

RESULTS = ROOT / "docs" / "results.md"
LEDGER = ROOT / "models" / "ledger.yaml"
REGENERATE = "nogobot train report models/ledger.yaml --markdown docs/results.md"


def _region(text: str) -> str:
    start = text.index(BEGIN) + len(BEGIN) + 1
    return text[start:text.index(END, start)]


def test_results_page_shows_the_ledger_as_it_is():
    """docs/results.md's nets and matches are the ledger's, regenerated here and compared."""
    page = RESULTS.read_text(encoding="utf-8")
    assert page.count(BEGIN) == 1 and page.count(END) == 1, "docs/results.md lost its markers"
    want = ledger_markdown(read_ledger(LEDGER), LEDGER) + "\n"
    assert _region(page) == want, f"docs/results.md is out of step with the ledger: run {REGENERATE}"


def test_every_project_match_reads_as_written():
    """The ledger's texts come out verbatim, unquoted commas in its flow mappings included."""
    raw = LEDGER.read_text(encoding="utf-8")
    matches = ledger_matches(read_ledger(LEDGER), LEDGER)
    assert len(matches) == len(yaml.safe_load(raw)["matches"])
    for m in matches:
        for key in ("a", "b", "conditions"):
            if key in m:
                assert str(m[key]) in raw, (key, m[key])
        assert m["wins"] + m["losses"] == m["games"], m


def test_a_text_split_by_an_unquoted_comma_is_joined_back(tmp_path):
    path = tmp_path / "ledger.yaml"
    path.write_text(
        "title: t\nanchor: a\nnets:\n  - {name: a, selfplay_games: 0, elo: 0}\n"
        "matches:\n"
        "  - {a: sp2 (hybrid, weight 0.8; solver from 28), b: gen14 (3,192 games), "
        "conditions: 60 s | each, games: 4, wins: 3, losses: 1, wilson95: [0.3, 0.954], "
        "time_losses: {a: 0, b: 1}, date: 2026-11-24}\n"
        "  - {a: x, b: y, games: 2, wins: 2, losses: 0, date: 2026-11-25}\n")
    led = read_ledger(path)
    first, _ = ledger_matches(led, path)
    assert first["a"] == "sp2 (hybrid, weight 0.8; solver from 28)"
    assert first["b"] == "gen14 (3,192 games)"
    rows = ledger_markdown(led, path).splitlines()
    matches = rows[rows.index("### The matches"):]
    assert matches[6].startswith("| 2026-11-25 | x | y | 2 | 2-0 |")  # newest first
    assert matches[7] == ("| 2026-11-24 | sp2 (hybrid, weight 0.8; solver from 28) | "
                          "gen14 (3,192 games) | 4 | 3-1 | 30–95% | 0 / 1 | 60 s \\| each |")


def test_an_unknown_match_field_is_refused(tmp_path):
    path = _ledger(tmp_path, NETS[:1], matches=[{"a": "x", "b": "y", "games": 1, "wins": 1,
                                                  "losses": 0, "score": "1-0"}])
    with pytest.raises(ReportError, match=r"matches\[0\] \(x\): unknown field 'score'"):
        ledger_markdown(read_ledger(path), path)


def test_only_the_region_is_rewritten(tmp_path):
    path = _ledger(tmp_path, NETS)
    page = tmp_path / "page.md"
    page.write_text(f"# Page\n\nbefore\n\n{BEGIN}\nstale\n{END}\n\nafter\n", encoding="utf-8")
    assert write_ledger_tables(path, page) is True
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Page\n\nbefore\n\n" + BEGIN + "\n") and text.endswith(END + "\n\nafter\n")
    assert "| b |  | campaign | 900 | 2.5 | +150 | [+60, +240] |" in text
    assert "| d |  | arms | 400 | 1.2 | −20 |" in text and "stale" not in text
    assert write_ledger_tables(path, page) is False  # up to date: not written again
    with pytest.raises(ReportError, match="no ledger tables region"):
        replace_region("# no markers\n", "x", "p.md")


def test_cli_writes_prints_and_refuses(tmp_path):
    path = _ledger(tmp_path, NETS)
    page = tmp_path / "page.md"
    page.write_text(f"{BEGIN}\n{END}\n", encoding="utf-8")
    run = CliRunner().invoke(main, ["train", "report", str(path), "--markdown", str(page)])
    assert run.exit_code == 0 and "wrote the ledger's tables" in run.output
    again = CliRunner().invoke(main, ["train", "report", str(path), "--markdown", str(page)])
    assert "up to date" in again.output
    shown = CliRunner().invoke(main, ["train", "report", str(path), "--markdown", "-"])
    assert shown.exit_code == 0 and "### The nets" in shown.output
    refused = CliRunner().invoke(main, ["train", "report", str(tmp_path), "--markdown", "-"])
    assert refused.exit_code != 0 and "not a run directory" in refused.output


def _named_matches() -> dict[str, list[dict]]:
    """Each ledger match folder's name (tournaments/ledger/SPEC/ and its results folders), with
    the ledger's matches whose conditions name it."""
    folders = ROOT / "tournaments" / "ledger"
    names = {p.name for p in folders.glob("*") if p.is_dir()}
    names |= {p.name for p in folders.glob("*/*") if p.is_dir()}
    matches = ledger_matches(read_ledger(LEDGER), LEDGER)
    return {n: [m for m in matches
                if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", str(m.get("conditions")))]
            for n in names}


def test_hand_tables_quote_the_ledger():
    """A table row of docs/results.md written by hand that names a ledger match (`NAME`,
    `NAME.yaml` or a path to it) and gives a bold score quotes a score the ledger holds for it:
    one match's, or two runs' added up."""
    named = _named_matches()
    page = RESULTS.read_text(encoding="utf-8")
    page = page[:page.index(BEGIN)] + page[page.index(END):]
    wrong = []
    for line in page.splitlines():
        if not line.startswith("|"):
            continue
        spans = {s.split("/")[-1].removesuffix(".yaml") for s in re.findall(r"`([^`]+)`", line)}
        candidates = [m for n in spans & set(named) for m in named[n]]
        if not candidates:
            continue
        scores = {(m["wins"], m["losses"]) for m in candidates}
        scores |= {(x["wins"] + y["wins"], x["losses"] + y["losses"])
                   for i, x in enumerate(candidates) for y in candidates[i + 1:]}
        for w, lost in re.findall(r"\*\*(\d+)-(\d+)", line):
            if (int(w), int(lost)) not in scores:
                wrong.append(f"{w}-{lost}: {line[:100]}")
    assert not wrong, "scores the ledger does not hold:\n" + "\n".join(wrong)

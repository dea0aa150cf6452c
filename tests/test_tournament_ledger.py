"""tournaments/ as a user meets it, and the ledger's matches as they must stay: resumable.

* The top of tournaments/ holds only the specs a user runs; every other match lives in
  ``tournaments/ledger/NAME/`` with its spec (``NAME.yaml``) and its results folders.
* Every spec under tournaments/ loads with the spec loader, and every file its engines name (a
  net, an opening book, an opening suite) is in the repository.
* A spec that names its results folder (``results:``) finds it there, and the folder's records
  pass the resume check against the spec as it is now: running the spec resumes the match
  rather than refusing it or starting over.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import ROOT

from nogobot.tournament.folder import read_records
from nogobot.tournament.runner import TournamentError, check_resume, default_out
from nogobot.tournament.spec import load_spec

TOURNAMENTS = ROOT / "tournaments"
LEDGER = TOURNAMENTS / "ledger"
# What a user runs, each read for who it is for (the rest is the ledger's record).
USER_SPECS = {"baselines", "blitz", "ccgc-900", "review-demo", "sprt-playouts"}
DATA_SUFFIXES = (".onnx", ".json", ".sgf", ".npz")  # files an engine command may name

CANDIDATES = LEDGER / "candidates"  # nets with their sidecars (YAML too), and books
SPECS = sorted(p for p in TOURNAMENTS.rglob("*.yaml") if CANDIDATES not in p.parents)


def test_the_top_holds_only_what_a_user_runs():
    top = {p.name for p in TOURNAMENTS.iterdir() if p.name != "results"}  # results/: ignored
    assert top == {f"{n}.yaml" for n in USER_SPECS} | {"ledger"}


def test_each_ledger_match_is_a_folder_named_after_its_spec():
    for spec in LEDGER.glob("*/*.yaml"):
        if spec.parent == CANDIDATES:
            continue
        assert spec.stem == spec.parent.name, f"{spec}: not in a folder of its own name"
        assert load_spec(spec).name == spec.stem


def _named_files(spec) -> list[str]:
    return [arg.split("=", 1)[-1] for e in spec.engines.values() for arg in e.argv
            if arg.split("=", 1)[-1].endswith(DATA_SUFFIXES)]


# Matches whose nets were a training run's files (runs/, never in the repository) and were not
# kept: their specs and results are the record, and they cannot be played again.
NETS_NOT_KEPT = {"gen21-rave-solver", "gen21-vs-sp3-1500", "gpu-gen71-vs-sp4", "gpu-gen82-vs-sp4",
                 "nets-rr-300", "taught-gen21-vs-sp3", "taught-gen30-vs-sp3", "taught-rave-60",
                 "taught2-rave-60", "taught2-vs-taught", "teacher-rave"}


@pytest.mark.parametrize("path", SPECS, ids=lambda p: str(p.relative_to(TOURNAMENTS)))
def test_every_spec_loads_and_names_files_that_exist(path):
    spec = load_spec(path)
    assert len(spec.engines) >= 2 and spec.pairings()
    missing = [n for n in _named_files(spec) if not (ROOT / n).is_file()]
    if path.stem in NETS_NOT_KEPT:
        assert missing and all(n.startswith("runs/") for n in missing), missing
    else:
        assert not missing, f"{path.name} names {missing}, not in the repository"


# Specs written for a match not yet played: no results folder yet (remove a name once it runs).
NOT_YET_PLAYED = {"solver-from-30", "lanes-batch8-60"}
RESUMABLE = [p for p in SPECS
             if load_spec(p).results is not None and p.stem not in NOT_YET_PLAYED]


@pytest.mark.parametrize("name", sorted(NOT_YET_PLAYED))
def test_a_match_not_yet_played_has_no_results(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    (path,) = [p for p in SPECS if p.stem == name]
    assert not (default_out(load_spec(path.relative_to(ROOT))) / "results.jsonl").exists(), \
        f"{name} has been played: take it out of NOT_YET_PLAYED"


def test_the_resumable_matches_are_found():
    # the ledger's current matches name their folder; a spec that named none would not resume
    assert len(RESUMABLE) > 40
    assert {p.stem for p in RESUMABLE} >= {"sp7-vs-rave-tuned", "gen316-rave-solver",
                                           "sp7-book-15"}


@pytest.mark.parametrize("path", RESUMABLE, ids=lambda p: p.stem)
def test_a_ledger_match_resumes_from_its_folder(path, monkeypatch):
    monkeypatch.chdir(ROOT)  # engine commands name files relative to the repository
    spec = load_spec(path.relative_to(ROOT))
    out = default_out(spec)
    assert out.parent == path.parent.relative_to(ROOT), out
    records = read_records(out)
    assert records, f"{out}: no results"
    check_resume(spec, records, out / "results.jsonl")  # raises TournamentError if refused


def test_results_is_relative_to_the_spec(tmp_path):
    spec = tmp_path / "m" / "m.yaml"
    spec.parent.mkdir()
    spec.write_text("results: runs/first\nengines: {a: nogobot agent random, "
                    "b: nogobot agent greedy}\n")
    assert default_out(load_spec(spec)) == Path(tmp_path / "m" / "runs" / "first")
    spec.write_text("engines: {a: nogobot agent random, b: nogobot agent greedy}\n")
    assert default_out(load_spec(spec)) == Path("tournaments/results/m")


# -- the resume rule: nets compared by content ---------------------------------------------------

SPEC = """\
results: out
engines:
  a: nogobot gtp --model {net} --seed {{seed}}
  b: nogobot agent random --seed {{seed}}
"""


def _match(tmp_path, net: str):
    spec = tmp_path / "m.yaml"
    spec.write_text(SPEC.format(net=net))
    return load_spec(spec)


def _record(spec, colour="black") -> dict:
    from nogobot.tournament import netfiles

    cmd = spec.engines["a"].command
    return {"key": ["a", "b", 0], "id": "001-a-vs-b", "black": "a", "white": "b",
            "size": 9, "opening": None,
            "commands": {colour: cmd, "white": spec.engines["b"].command},
            "files": {colour: netfiles.pins(cmd)}}


def test_a_moved_net_with_the_same_bytes_resumes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("old").mkdir()
    Path("old/net.onnx").write_bytes(b"net one")
    records = [_record(_match(tmp_path, "old/net.onnx"))]
    assert records[0]["files"]["black"] == {"old/net.onnx": hashlib.sha256(b"net one").hexdigest()}
    Path("new").mkdir()
    Path("old/net.onnx").rename("new/net.onnx")
    check_resume(_match(tmp_path, "new/net.onnx"), records, Path("out/results.jsonl"))
    # the same path, the same bytes: resumes, as it always did
    check_resume(_match(tmp_path, "old/net.onnx"), records, Path("out/results.jsonl"))


def test_a_different_net_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("net.onnx").write_bytes(b"net one")
    records = [_record(_match(tmp_path, "net.onnx"))]
    Path("other.onnx").write_bytes(b"net two")
    with pytest.raises(TournamentError) as e:
        check_resume(_match(tmp_path, "other.onnx"), records, Path("out/results.jsonl"))
    msg = str(e.value)
    assert "\n" not in msg and "engine 'a'" in msg and "other.onnx (sha256 " in msg
    assert "is not the file that played as net.onnx" in msg and "use another --out" in msg
    # the same path with other bytes behind it is refused too
    Path("net.onnx").write_bytes(b"net two")
    with pytest.raises(TournamentError, match="is not the file that played as net.onnx"):
        check_resume(_match(tmp_path, "net.onnx"), records, Path("out/results.jsonl"))
    # a record without hashes (played before they were kept) compares the path alone
    bare = [{**records[0], "files": {}}]
    check_resume(_match(tmp_path, "net.onnx"), bare, Path("out/results.jsonl"))
    with pytest.raises(TournamentError, match="net.onnx has no recorded hash"):
        check_resume(_match(tmp_path, "other.onnx"), bare, Path("out/results.jsonl"))


def test_other_words_of_a_command_are_compared_as_before(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("net.onnx").write_bytes(b"net one")
    records = [_record(_match(tmp_path, "net.onnx"))]
    spec = tmp_path / "m.yaml"
    spec.write_text(SPEC.format(net="net.onnx").replace("--seed", "--playouts 9 --seed"))
    with pytest.raises(TournamentError, match="played earlier games as .*; use another --out"):
        check_resume(load_spec(spec), records, Path("out/results.jsonl"))

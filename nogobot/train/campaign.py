"""A training campaign that outlives machines: the small state a repository keeps between runs.

A run directory holds everything (replay window, every net, CSVs) but is far too big to commit.
A campaign folder (one per line of work under the repository's ``campaign/``, e.g.
``campaign/selfplay/``) keeps only what the next stretch of training needs to go on where the
last one stopped, on any machine:

* ``stage{S}.pt``: each curriculum stage's trainer checkpoint with its optimiser state and step
  counters (the generator stage's is the best net's, the others' their latest);
* ``state.yaml``: the curriculum position (which stage generates the games), the self-play games
  and generations behind these nets, where they came from, and when.

``nogobot train snapshot RUN_DIR campaign/selfplay/`` writes it (atomically, file by file); a
config whose ``init_checkpoint`` names the folder starts a new run directory from it
(``loop.TrainingRun``). The replay window is not kept: a new stretch refills it by self-play.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import yaml

from ..core.atomicio import write_atomic

STATE_FILE = "state.yaml"


def is_campaign(path) -> bool:
    return path is not None and Path(path).is_dir()


def read_campaign(folder) -> dict:
    """The campaign's state.yaml (ValueError naming the file when it is missing or bad)."""
    folder = Path(folder)
    f = folder / STATE_FILE
    try:
        state = yaml.safe_load(f.read_text())
    except FileNotFoundError:
        raise ValueError(f"{f}: no such file (not a campaign folder: write one with "
                         f"`nogobot train snapshot RUN_DIR {folder}`)") from None
    except yaml.YAMLError as e:
        raise ValueError(f"{f}: not valid YAML ({e})") from None
    if not isinstance(state, dict) or not isinstance(state.get("stage"), int):
        raise ValueError(f"{f}: needs an integer 'stage' (the generator's curriculum stage)")
    if not (folder / f"stage{state['stage']}.pt").exists():
        raise ValueError(f"{folder}: no stage{state['stage']}.pt for the generator stage")
    return state


def stage_checkpoint(folder, stage: int) -> Path | None:
    p = Path(folder) / f"stage{stage}.pt"
    return p if p.exists() else None


def write_snapshot(run_dir, folder, note: str = "") -> dict:
    """Copy a run directory's resumable state into the campaign ``folder``; returns the state.
    ``note`` is appended to the folder's note, which keeps the line's history."""
    run_dir, folder = Path(run_dir), Path(folder)
    try:
        st = json.loads((run_dir / "state.json").read_text())
    except FileNotFoundError:
        raise ValueError(f"{run_dir}: no state.json (not a training run directory)") from None
    stage = int(st["stage"])
    best = run_dir / "ckpt" / "best.pt"
    if not best.exists():
        raise ValueError(f"{best}: no such file (the run has no best checkpoint yet)")
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / f"stage{stage}.pt", best.read_bytes())
    stages = [stage]
    for ck in sorted((run_dir / "ckpt").glob("stage*.pt")):
        s = int(ck.stem[5:])
        if s > stage:  # the next stages keep their latest weights (trained alongside)
            write_atomic(folder / ck.name, ck.read_bytes())
            stages.append(s)
    for old in folder.glob("stage*.pt"):  # stages below the generator are done with
        if int(old.stem[5:]) not in stages:
            old.unlink()
    games = int(st.get("games_before", 0)) + int(st["games_total"])
    gens = int(st.get("generations_before", 0)) + int(st["generation"]) - 1
    state = {
        "stage": stage,
        "stages_kept": stages,
        "best_net": Path(st["best"]).stem,
        "selfplay_games": games,
        "generations": gens,
        "from_run": str(run_dir),
        "updated": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    try:
        earlier = str(read_campaign(folder).get("note") or "")
    except ValueError:  # no earlier snapshot there, or one that cannot be read
        earlier = ""
    if earlier or note:
        state["note"] = " ".join(part for part in (earlier.strip(), note.strip()) if part)
    write_atomic(folder / STATE_FILE, yaml.safe_dump(state, sort_keys=False))
    return state

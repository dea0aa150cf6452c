"""Training configs: the shipped ones load; bad ones fail with file, line, field and problem."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from nogobot.train.config import ConfigError, TrainConfig, load_config

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize("name", ["tiny", "cpu", "cpu-continue", "gpu"])
def test_shipped_configs_load(name):
    cfg = load_config(CONFIGS / f"{name}.yaml")
    assert isinstance(cfg, TrainConfig)
    assert cfg.name == name
    assert len(cfg.network.stages) >= 2  # every shipped config has a curriculum


@pytest.mark.parametrize("path", sorted(CONFIGS.rglob("*.yaml")), ids=lambda p: p.name)
def test_every_config_loads_its_extends_chain(path):
    # the user's configs at the top, the campaign's variants in configs/campaign/ (their
    # `extends:` paths are relative to the file, so a move that broke one fails here)
    assert isinstance(load_config(path), TrainConfig)


def test_defaults_are_the_papers(tmp_path):
    p = tmp_path / "empty.yaml"
    p.write_text("")
    cfg = load_config(p)
    assert cfg.name == "empty"
    t = cfg.training
    assert (t.optimizer, t.lr, t.momentum, t.l2) == ("sgd", 1e-3, 0.8, 1e-5)
    assert (t.value_weight, t.dominion_weight, t.score_weight) == (1.5, 0.5, 0.25)
    sp = cfg.selfplay
    assert (sp.dirichlet_weight, sp.dirichlet_alpha_81, sp.root_policy_temp, sp.c_puct) == \
        (0.25, 0.03, 1.03, 1.1)


@pytest.mark.parametrize("text, expected", [
    ("selfplay:\n  playouts: many\n", ["bad.yaml:2", "selfplay.playouts", "integer", "many"]),
    ("selfplay:\n  games_per_generation: 10\n  playout: 5\n",
     ["bad.yaml:3", "unknown setting 'selfplay.playout'", "playouts"]),
    ("trainin:\n  lr: 0.1\n", ["bad.yaml:1", "unknown setting 'trainin'", "training"]),
    ("training:\n  lr: -1\n", ["bad.yaml:2", "training.lr", "> 0"]),
    ("training:\n  optimizer: adam\n", ["bad.yaml:2", "training.optimizer", "'sgd' or 'adamw'"]),
    ("training:\n  average_decay: 1\n", ["bad.yaml:2", "training.average_decay", "[0, 1)"]),
    ("network:\n  stages:\n    - {blocks: 2, channels: 7}\n",
     ["bad.yaml:3", "network.stages[0].channels", "even"]),
    ("network:\n  stages: 3\n", ["bad.yaml:2", "network.stages", "list"]),
    ("gating: 5\n", ["bad.yaml:1", "gating", "mapping"]),
    ("selfplay:\n  policy_target_pruning: yes please\n",
     ["bad.yaml:2", "selfplay.policy_target_pruning", "true or false"]),
    ("board_size: 9\n  x: [\n", ["bad.yaml", "not valid YAML"]),
])
def test_bad_config_names_file_line_and_field(tmp_path, text, expected):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(p)
    msg = str(e.value)
    for part in expected:
        assert part in msg, msg


def test_set_overrides_reach_nested_settings_and_validate():
    cfg = load_config(CONFIGS / "campaign" / "ablation.yaml", ["network.stages.0.garb=false",
                                                   "network.stages.0.liberty_features=false",
                                                   "training.dominion_weight=0",
                                                   "selfplay.playouts=64"])
    stage = cfg.network.stages[0]
    assert (stage.garb, stage.liberty_features) == (False, False)
    assert cfg.training.dominion_weight == 0.0 and cfg.selfplay.playouts == 64
    assert cfg.training.score_weight == 0.25  # untouched settings keep the file's values
    plain = load_config(CONFIGS / "campaign" / "ablation.yaml")
    assert plain.network.stages[0].garb and plain.network.stages[0].liberty_features


@pytest.mark.parametrize("override, expected", [
    ("selfplay.playouts=0", "--set selfplay.playouts=0: selfplay.playouts: expected an integer"),
    ("selfplay.playout=5", "unknown setting 'selfplay.playout'"),
    ("network.stages.3.garb=false", "network.stages has no item '3'"),
    ("training.lr", "expected KEY=VALUE"),
    ("seed.x=1", "seed is not a section"),
])
def test_bad_overrides_are_named(override, expected):
    with pytest.raises(ConfigError, match=re.escape(expected)) as e:
        load_config(CONFIGS / "campaign" / "ablation.yaml", [override])
    assert "ablation.yaml" in str(e.value)


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "nope.yaml")


# -- extends: a base config plus a small overlay ----------------------------------------------


@pytest.mark.parametrize("path", sorted(p for p in CONFIGS.glob("*.yaml") if p.stem != "base"),
                         ids=lambda p: p.name)
def test_every_shipped_config_loads_under_its_own_name(path):
    assert load_config(path).name == path.stem


def test_cpu_continue_is_cpu_from_another_checkpoint():
    cpu, cont = load_config(CONFIGS / "cpu.yaml"), load_config(CONFIGS / "cpu-continue.yaml")
    assert cont.init_checkpoint == "models/nogobot-b6c32-sp1.pt" != cpu.init_checkpoint
    cont.name, cont.init_checkpoint = cpu.name, cpu.init_checkpoint
    assert cont == cpu


def test_extends_merges_mappings_and_the_overlay_wins(tmp_path):
    (tmp_path / "base.yaml").write_text(
        "name: base\nseed: 3\nnetwork:\n  aux_heads: 1\n  stages:\n"
        "    - {blocks: 2, channels: 8}\n    - {blocks: 3, channels: 8}\n"
        "training:\n  lr: 0.05\n  batch_size: 32\n")
    (tmp_path / "mid.yaml").write_text("extends: base.yaml\ntraining:\n  batch_size: 64\n")
    (tmp_path / "run.yaml").write_text(
        "extends: mid.yaml\nnetwork:\n  stages:\n    - {blocks: 4, channels: 16}\n"
        "training:\n  lr: 0.1\n")
    cfg = load_config(tmp_path / "run.yaml", ["training.momentum=0.5"])
    assert cfg.name == "run"  # a config is named after its own file, never its base's name
    assert cfg.seed == 3 and cfg.network.aux_heads == 1  # inherited through two levels
    assert [(s.blocks, s.channels) for s in cfg.network.stages] == [(4, 16)]  # lists replaced
    t = cfg.training
    assert (t.lr, t.batch_size, t.momentum) == (0.1, 64, 0.5)


def test_a_bad_inherited_value_is_reported_at_the_base_line(tmp_path):
    (tmp_path / "base.yaml").write_text("seed: 0\nselfplay:\n  playouts: many\n")
    (tmp_path / "run.yaml").write_text("extends: base.yaml\nseed: 1\n")
    with pytest.raises(ConfigError, match=re.escape(f"{tmp_path / 'base.yaml'}:3: "
                                                    "selfplay.playouts: expected an integer")):
        load_config(tmp_path / "run.yaml")
    # Once the overlay sets the value, the base's bad one is gone, and so is its line.
    (tmp_path / "run.yaml").write_text("extends: base.yaml\nselfplay:\n  playouts: 0\n")
    with pytest.raises(ConfigError, match=re.escape(f"{tmp_path / 'run.yaml'}:3: "
                                                    "selfplay.playouts: expected an integer >= 1")):
        load_config(tmp_path / "run.yaml")


@pytest.mark.parametrize("files, expected", [
    ({"run.yaml": "seed: 1\nextends: nope.yaml\n"},
     ["run.yaml:2: extends: no such base config", "nope.yaml"]),
    ({"run.yaml": "extends: run.yaml\n"}, ["run.yaml:1: extends: run.yaml makes a cycle"]),
    ({"run.yaml": "extends: a.yaml\n", "a.yaml": "extends: b.yaml\n",
      "b.yaml": "extends: a.yaml\n"}, ["b.yaml:1: extends: a.yaml makes a cycle",
                                        "run.yaml -> ", "a.yaml -> ", "b.yaml -> "]),
    ({"run.yaml": "extends: [a.yaml]\n"}, ["run.yaml:1: extends: expected the path"]),
    ({"run.yaml": "extends: a.yaml\n", "a.yaml": "- 1\n"}, ["a.yaml: expected a mapping"]),
])
def test_bad_extends_is_a_clear_error_naming_the_file(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(tmp_path / "run.yaml")
    for part in expected:
        assert part in str(e.value), str(e.value)


def test_cli_reports_bad_config(tmp_path):
    pytest.importorskip("torch")
    from nogobot.cli import main

    p = tmp_path / "bad.yaml"
    p.write_text("selfplay:\n  playouts: 0\n")
    r = CliRunner().invoke(main, ["train", str(p), "--run-dir", str(tmp_path / "run")])
    assert r.exit_code != 0
    assert "bad.yaml:2" in r.output and "selfplay.playouts" in r.output
    assert not (tmp_path / "run").exists()


def test_train_cli_shape(tmp_path):
    """`nogobot train CONFIG --run-dir DIR` and `nogobot train report DIR` share one group."""
    from nogobot.cli import main

    r = CliRunner().invoke(main, ["train", "--help"])
    assert r.exit_code == 0 and "report" in r.output and "CONFIG.yaml" in r.output
    r = CliRunner().invoke(main, ["train", "report", str(tmp_path / "nope")])
    assert r.exit_code != 0 and "no such run directory" in r.output
    r = CliRunner().invoke(main, ["train", str(tmp_path / "missing.yaml"), "--run-dir",
                                  str(tmp_path / "run")])
    assert r.exit_code != 0 and "missing.yaml" in r.output


def test_strength_ledger_parses_and_adds_up():
    """models/ledger.yaml (the README's and the report's source) is valid YAML whose matches
    each count their games."""
    import yaml

    ledger = yaml.safe_load((Path(__file__).resolve().parents[1] / "models" / "ledger.yaml")
                            .read_text())
    assert ledger["matches"]
    for m in ledger["matches"]:
        assert m["a"] and m["b"] and m["wins"] + m["losses"] == m["games"], m

"""`nogobot train report DIR`: loss curves and Elo against self-play games, as one PNG.

Reads the run directory's ``metrics.csv`` (loss rows per training step, per stage),
``elo.csv`` (one gating match per generation) and ``generations.csv``; writes
``DIR/report.png`` (or ``--out``) and prints a short text summary. Needs matplotlib (part of the
train extra); without it, ``ReportError`` says so and the text summary still works.
"""

from __future__ import annotations

import io
from pathlib import Path

from ..core.atomicio import write_atomic
from .runfiles import read_csv


class ReportError(RuntimeError):
    """The report cannot be drawn (no run directory, no data, or no matplotlib)."""


def _f(r: dict, k: str) -> float:
    try:
        return float(r.get(k) or "nan")
    except ValueError:
        return float("nan")


def text_summary(run_dir) -> str:
    run_dir = Path(run_dir)
    gens = read_csv(run_dir / "generations.csv")
    elo = read_csv(run_dir / "elo.csv")
    lines = [f"{run_dir}: {len(gens)} generations"]
    if gens:
        last = gens[-1]
        accepted = sum(r["accepted"] == "True" for r in gens)
        stage = "?"
        if (run_dir / "state.json").exists():
            import json

            stage = json.loads((run_dir / "state.json").read_text()).get("stage", "?")
        lines.append(f"  self-play games: {last['games_total']}, accepted candidates: "
                     f"{accepted}/{len(gens)}, best {last['best']} (Elo {last['best_elo']}), "
                     f"self-play stage {stage}, last candidate's stage {last['stage']}")
    for r in elo[-5:]:
        verdict = "accepted" if r["accepted"] == "True" else "rejected"
        lines.append(f"  gen {r['generation']}: {r['candidate']} vs {r['best']} "
                     f"{r['wins']}-{r['losses']} -> {verdict} (Elo {r['elo_candidate']})")
    return "\n".join(lines)


def _loss_panel(ax, metrics: list[dict], nets: list[tuple[int, str]], styles: dict[str, str],
                title: str) -> None:
    """One panel of losses against the training step: a line per net and loss (``styles``:
    metrics column -> matplotlib line format)."""
    for stage, net in nets:
        rows = [r for r in metrics if int(r["stage"]) == stage and r["net"] == net]
        x = [_f(r, "step") for r in rows]
        for key, ls in styles.items():
            ax.plot(x, [_f(r, key) for r in rows], ls, label=f"{net} {key}")
    ax.set_xlabel("training step")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if nets:
        ax.legend(fontsize=7)


def draw_report(run_dir, out=None) -> Path:
    """Write the PNG; returns its path."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: no such run directory")
    metrics = read_csv(run_dir / "metrics.csv")
    elo = read_csv(run_dir / "elo.csv")
    if not metrics and not elo:
        raise ReportError(f"{run_dir}: no metrics.csv or elo.csv yet (nothing trained)")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ReportError("the report needs matplotlib, which is not installed "
                          "(pip install matplotlib, or the train extra)") from None
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    nets = sorted({(int(r["stage"]), r["net"]) for r in metrics})
    _loss_panel(axes[0], metrics, nets, {"total": "-", "policy": "--", "value": ":"},
                "training losses")
    axes[0].set_ylabel("loss")
    _loss_panel(axes[1], metrics, nets, {"dominion": "-", "score": "-", "aux": "-"},
                "auxiliary losses")
    ax = axes[2]
    if elo:
        games = [_f(r, "games_total") for r in elo]
        cand = [_f(r, "elo_candidate") for r in elo]
        acc = [r["accepted"] == "True" for r in elo]
        best, level = [], 0.0
        for r, a in zip(elo, acc):
            level = _f(r, "elo_candidate") if a else _f(r, "elo_best_before")
            best.append(level)
        first = _f(elo[0], "elo_best_before")
        ax.step([0.0] + games, [first] + best, where="post", label="best net (gen 0 at 0 games)")
        ax.scatter([g for g, a in zip(games, acc) if a], [c for c, a in zip(cand, acc) if a],
                   marker="o", label="accepted candidate")
        ax.scatter([g for g, a in zip(games, acc) if not a],
                   [c for c, a in zip(cand, acc) if not a], marker="x", label="rejected")
        ax.legend(fontsize=7)
    ax.set_xlabel("self-play games")
    ax.set_ylabel("Elo (K=16 gating updates, gen 0 = 0)")
    ax.set_title("Elo against self-play games")
    ax.grid(alpha=0.3)
    fig.suptitle(f"nogobot training run {run_dir.name}")
    fig.tight_layout()
    out = Path(out) if out else run_dir / "report.png"
    buf = io.BytesIO()
    fig.savefig(buf, dpi=110, format="png")
    plt.close(fig)
    write_atomic(out, buf.getvalue())
    return out


def read_ledger(path) -> dict:
    """The strength ledger (``models/ledger.yaml``): every net of the campaign with its
    self-play games behind it, optionally the machine hours behind it (``box_hours``), and its
    measured Elo against the anchor net."""
    import yaml

    path = Path(path)
    try:
        led = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ReportError(f"{path}: no such ledger") from None
    except yaml.YAMLError as e:
        raise ReportError(f"{path}: not valid YAML ({e})") from None
    nets = (led or {}).get("nets") if isinstance(led, dict) else None
    if not isinstance(nets, list) or not nets:
        raise ReportError(f"{path}: needs a non-empty 'nets' list")
    for i, n in enumerate(nets):
        for key in ("name", "selfplay_games", "elo"):
            if not isinstance(n, dict) or key not in n:
                raise ReportError(f"{path}: nets[{i}] needs '{key}'")
        for key in ("selfplay_games", "elo", "box_hours"):
            v = n.get(key, 0)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ReportError(f"{path}: nets[{i}] ({n['name']}): '{key}' must be a number, "
                                  f"not {v!r}")
        if n["selfplay_games"] < 0 or n.get("box_hours", 0) < 0:
            raise ReportError(f"{path}: nets[{i}] ({n['name']}): games and hours cannot be "
                              f"negative")
        ci = n.get("elo_ci")
        if ci is not None and not (isinstance(ci, list) and len(ci) == 2
                                   and all(isinstance(c, (int, float)) for c in ci)
                                   and ci[0] <= n["elo"] <= ci[1]):
            raise ReportError(f"{path}: nets[{i}] ({n['name']}): 'elo_ci' must be [low, high] "
                              f"around its elo")
    return led


def ledger_series(led: dict, x_key: str) -> dict[str, list[dict]]:
    """The ledger's nets that carry ``x_key`` (``selfplay_games`` or ``box_hours``), by line
    (``line``, default "campaign"), each line sorted along that axis."""
    groups: dict[str, list[dict]] = {}
    for n in led["nets"]:
        if x_key in n:
            groups.setdefault(n.get("line", "campaign"), []).append(n)
    return {label: sorted(nets, key=lambda n: n[x_key]) for label, nets in groups.items()}


def _ledger_panel(ax, led: dict, x_key: str, xlabel: str) -> None:
    """Elo against ``x_key``: a line per ledger line, 95% intervals as error bars."""
    for label, nets in ledger_series(led, x_key).items():
        x = [n[x_key] for n in nets]
        y = [n["elo"] for n in nets]
        err = [[n["elo"] - n.get("elo_ci", [n["elo"]] * 2)[0] for n in nets],
               [n.get("elo_ci", [n["elo"]] * 2)[1] - n["elo"] for n in nets]]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=label,
                    ls="-" if label == "campaign" else ":")
        for n in nets:
            ax.annotate(n.get("short", n["name"]), (n[x_key], n["elo"]),
                        textcoords="offset points", xytext=tuple(n.get("label_offset", (4, -12))),
                        fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"Elo (Bradley-Terry, {led.get('anchor', 'anchor')} = 0; 95% intervals)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def draw_ledger(path, out=None) -> Path:
    """Elo against self-play games for the whole campaign, from the ledger, and, where nets
    carry ``box_hours``, Elo against machine hours beside it; returns the PNG."""
    led = read_ledger(path)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ReportError("the report needs matplotlib, which is not installed "
                          "(pip install matplotlib, or the train extra)") from None
    hours = bool(ledger_series(led, "box_hours"))
    fig, axes = plt.subplots(1, 2 if hours else 1, figsize=(15 if hours else 8, 5.5),
                             squeeze=False)
    _ledger_panel(axes[0][0], led, "selfplay_games",
                  "self-play games behind the net (cumulative over the campaign)")
    if hours:
        _ledger_panel(axes[0][1], led, "box_hours",
                      led.get("box_hours_axis", "machine hours behind the net"))
    fig.suptitle(led.get("title", "nogobot training campaign"))
    if led.get("conditions"):
        fig.text(0.01, 0.01, str(led["conditions"]), fontsize=7)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    out = Path(out) if out else Path(path).with_suffix(".png")
    buf = io.BytesIO()
    fig.savefig(buf, dpi=110, format="png")
    plt.close(fig)
    write_atomic(out, buf.getvalue())
    return out

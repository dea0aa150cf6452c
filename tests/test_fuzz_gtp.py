"""Fuzz `nogobot gtp`: >= 100,000 random and mutated lines into ONE engine process.

Checks: the process never dies (quit at the end exits 0), stdout holds nothing but well-framed
responses, there is exactly one response per line that is non-empty after GTP preprocessing
(computed here independently of the engine), in order with the right id, and no command needed
the engine's last-resort "internal error" answer. Deterministic (fixed seed); the line mix keeps
genmove (the only slow command) to a few percent.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys

import pytest

from conftest import ROOT

N_LINES = 100_000
SEED = 20240611

COLOURS = ["b", "w", "black", "white", "B", "W", "BLACK", "White", "x", "", "bw", "blac"]
COMMANDS = [
    "protocol_version", "name", "version", "known_command", "list_commands", "boardsize",
    "clear_board", "komi", "play", "genmove", "reg_genmove", "undo", "showboard",
    "final_score", "loadsgf", "printsgf", "time_settings", "time_left", "kgs-time_settings",
    "cputime", "gogui-rules_game_id", "gogui-rules_board_size", "gogui-rules_legal_moves",
    "gogui-rules_side_to_move", "gogui-rules_board", "gogui-rules_final_result",
    "gogui-rules_captured_count", "fixed_handicap", "nonsense", "PLAY", "gen_move",
]
ODD_TEXT = ["\u00e9", "\u4e2d\u6587", "\U0001f600", "\u0301", "\u202e", "\ufeff", "\u00a0",
            "\u2028", "\u0085", "\u0663", "\uff11", "\x00", "\x1b[31m", "\x7f", "\r", "\t",
            "\x0b", "\x0c", "#", " # c", "\\", "'", '"', "%s", "{}", "=", "?", "= 1", "\\n"]


def vertex(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.75:
        return rng.choice("ABCDEFGHJKLMNOPQRST") + str(rng.randint(1, 19))
    return rng.choice(["pass", "PASS", "resign", "I5", "i9", "A0", "Z26", "A-1", "E", "55",
                       "e5e5", "A" + "9" * rng.randint(5, 50), "\u00c95", "tt", ""])


def number(rng: random.Random) -> str:
    return rng.choice([str(rng.randint(0, 20)), str(rng.randint(-5, 5)), "6.5", "-0", "1e3",
                       "1e400", "nan", "inf", "9" * rng.randint(20, 5000), "0x10", "1_0",
                       "+7", "007", ".5", "5.", "\u0663", "", "1,5"])


def valid_command(rng: random.Random) -> str:
    c = rng.choices(COMMANDS, weights=[1] * 5 + [3, 2, 1, 25, 3, 1, 3, 1] + [1] * 18)[0]
    if c == "boardsize":
        return f"{c} {rng.choice([2, 3, 4, 5, 7, 9, 9, 9, 13, 19, 1, 20, 0])}"
    if c in ("play",):
        return f"{c} {rng.choice(COLOURS[:8])} {vertex(rng)}"
    if c in ("genmove", "reg_genmove"):
        return f"{c} {rng.choice(COLOURS[:8])}"
    if c == "known_command":
        return f"{c} {rng.choice(COMMANDS)}"
    if c == "komi":
        return f"{c} {number(rng)}"
    if c == "time_settings":
        return f"{c} {number(rng)} {number(rng)} {number(rng)}"
    if c == "time_left":
        return f"{c} {rng.choice(COLOURS)} {number(rng)} {number(rng)}"
    if c == "kgs-time_settings":
        kind = rng.choice(["none", "absolute", "byoyomi", "canadian", "fischer", ""])
        return " ".join([c, kind] + [number(rng) for _ in range(rng.randint(0, 4))])
    if c == "loadsgf":
        return " ".join([c, rng.choice(["game.sgf", "setup.sgf", "bad.sgf", "missing.sgf",
                                        ".", "/", "game.sgf game.sgf"])]
                        + [number(rng)] * rng.randint(0, 2))
    return c


def mutate(rng: random.Random, line: str) -> str:
    chars = list(line)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        pos = rng.randint(0, len(chars))
        if op == 0 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op == 1:
            chars.insert(pos, chr(rng.randint(0, 0x2FF)))
        elif op == 2:
            chars.insert(pos, rng.choice(ODD_TEXT))
        elif op == 3 and chars:
            i = min(pos, len(chars) - 1)
            chars[i] = chars[i].swapcase()
        elif op == 4:
            words = "".join(chars).split(" ")
            rng.shuffle(words)
            chars = list(" ".join(words))
        elif op == 5:
            chars.insert(pos, " " + rng.choice(COMMANDS + COLOURS + ["", "12", "-3"]) + " ")
        else:
            chars.insert(pos, rng.choice(["\t", "  ", "\r", "\x01", "\x00", "\x7f"]))
    return "".join(chars)


def with_id(rng: random.Random, line: str) -> str:
    ident = rng.choice([str(rng.randint(0, 10**6)), "0", "007", "9" * rng.randint(10, 5000),
                        "-5", "+5", "1.5"])
    return ident + rng.choice([" ", "\t", "  "]) + line


def random_bytes(rng: random.Random) -> bytes:
    data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 120)))
    return data.replace(b"\n", b"")


def make_lines(rng: random.Random) -> list[bytes]:
    lines = []
    while len(lines) < N_LINES:
        r = rng.random()
        if r < 0.35:
            line = valid_command(rng)
        elif r < 0.70:
            line = mutate(rng, valid_command(rng))
        elif r < 0.80:
            lines.append(random_bytes(rng))
            continue
        elif r < 0.88:
            line = rng.choice(["", " ", "\t", "\r", "# comment", "   # c", "\x01\x02", "#",
                               "\x00", "\t#\t", "\u00a0", "\ufeff"])
        elif r < 0.995:
            line = "".join(rng.choice(ODD_TEXT + list("abc xyz129#=?")) for _ in
                           range(rng.randint(1, 30)))
        else:
            line = valid_command(rng) + " " + "x" * rng.randint(1000, 20000)
        if rng.random() < 0.3:
            line = with_id(rng, line)
        if rng.random() < 0.02:
            line = rng.choice(["boardsize 9", "clear_board", "boardsize 5"])  # keep games going
        lines.append(line.replace("\n", "").encode("utf-8"))  # one line each
    return lines


def reference(line: bytes) -> tuple[str, str] | None:
    """GTP spec §3.1 preprocessing, written independently of the engine: None for a line that
    gets no response, else (expected id, command name)."""
    text = line.decode("utf-8", errors="replace")
    text = "".join(ch for ch in text if ch == "\t" or not (ord(ch) < 32 or ord(ch) == 127))
    text = text.split("#", 1)[0].replace("\t", " ").strip(" ")
    if not text:
        return None
    tokens = [t for t in text.split(" ") if t]
    ident = ""
    if tokens[0].isascii() and tokens[0].isdigit():
        ident = tokens.pop(0).lstrip("0") or "0"
    return ident, (tokens[0] if tokens else "")


@pytest.mark.slow  # 100,000 lines through one engine: about a minute
def test_fuzz_one_engine_100k_lines(tmp_path):
    rng = random.Random(SEED)
    (tmp_path / "game.sgf").write_text("(;SZ[3];B[bb];W[ba];B[ab];W[cb];B[aa];W[bc])")
    (tmp_path / "setup.sgf").write_text("(;SZ[5]AB[aa]AW[ee]PL[W];W[cc])")
    (tmp_path / "bad.sgf").write_text("(;SZ[3];B[ac];W[bc];W[ab])")
    lines = [ln for ln in make_lines(rng) if (reference(ln) or ("", ""))[1] != "quit"]
    assert len(lines) >= N_LINES - 100
    lines += [b"quit"]
    expected = [r for r in map(reference, lines) if r is not None]

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "nogobot", "gtp", "--seed", "1",
                           "--playouts", "8"], input=b"\n".join(lines) + b"\n",
                          capture_output=True, cwd=tmp_path, env=env, timeout=240, check=False)
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[stderr.index("Traceback") - 500:][:3000]

    out = proc.stdout
    assert out.endswith(b"\n\n")
    responses = out[:-2].split(b"\n\n")
    head = re.compile(rb"([=?])(\d*) ")
    assert len(responses) == len(expected), (len(responses), len(expected))
    internal = []
    for i, (resp, (ident, name)) in enumerate(zip(responses, expected)):
        m = head.match(resp)
        assert m, f"response {i} not framed: {resp[:200]!r}"
        assert m.group(2).decode() == ident, f"response {i}: id {m.group(2)!r}, want {ident!r}"
        assert not resp.startswith(b"\n") and b"\n\n" not in resp
        if b"internal error" in resp:
            internal.append((name, resp[:200]))
    assert not internal, internal[:5]
    assert responses[-1] == b"= "  # the final quit
    # The mix really exercised both outcomes of the game commands.
    assert sum(r.startswith(b"=") for r in responses) > 10_000
    assert sum(r.startswith(b"?") for r in responses) > 10_000

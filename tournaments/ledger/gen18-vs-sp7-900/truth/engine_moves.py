"""The default engine (sp8) on the won positions of gen18-vs-sp7-900 at 30-32 empty points (the
winners' proven wins in the truth/ files, and sp8's thrown-away win in game 002), each with 300 s
left on a 900 s clock: its move and its log line, one JSON line per position to OUT. Extra
arguments go to `nogobot gtp` (e.g. --solver-from 32 --solver-nodes 8000000). Run from the
repository root:

    python engine_moves.py OUT.jsonl [GTP OPTIONS ...]
"""
import json
import subprocess
import sys

from backtrack import AREA

MATCH = "tournaments/ledger/gen18-vs-sp7-900/"
WON = ("win-gen18.jsonl", "win-sp7.jsonl", "gen18.jsonl")  # the last: game 002's win at 30


def gtp_script(moves: list[str]) -> str:
    me = "b" if len(moves) % 2 == 0 else "w"
    lines = ["boardsize 9", "clear_board", "time_settings 900 0 0"]
    lines += [f"play {'B' if i % 2 == 0 else 'W'} {m}" for i, m in enumerate(moves)]
    lines += ["time_left w 300 0", "time_left b 300 0", f"genmove {me}", "quit"]
    return "\n".join(lines) + "\n"


def main(out_path: str, gtp_options: list[str]) -> None:
    with open(MATCH + "gen18-vs-sp7-900/results.jsonl") as f:
        games = {g["id"]: g for g in map(json.loads, f)}
    positions = set()
    for name in WON:
        with open(MATCH + "truth/" + name) as f:
            for r in map(json.loads, f):
                if r["result"] == "win" and 30 <= r["empty"] <= 32:
                    positions.add((r["game"], r["ply"]))
    with open(out_path, "w") as out:
        for game, ply in sorted(positions):
            run = subprocess.run(["nogobot", "gtp", "--model", "models/nogobot-b6c32-sp8.onnx",
                                  "--threads", "1", *gtp_options],
                                 input=gtp_script(games[game]["moves"][:ply]),
                                 capture_output=True, text=True, timeout=400)
            move = [x for x in run.stdout.split() if x != "="][-1]
            log = [line for line in run.stderr.splitlines() if line.startswith("mcts:")][-1]
            record = {"game": game, "ply": ply, "empty": AREA - ply, "move": move, "log": log}
            out.write(json.dumps(record) + "\n")
            out.flush()
            print(record, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])

"""The default engine (sp8) on the won positions of gen18-vs-sp7-900 at 30-32 empty points (the
winners' proven wins in the truth/ files, and sp8's thrown-away win in game 002), each with 300 s
left on a 900 s clock: its move and its log line, one JSON line per position to OUT. Extra
arguments go to `nogobot gtp` (e.g. --solver-from 32 --solver-nodes 8000000). Run from the
repository root:

    python engine_moves.py OUT.jsonl [GTP OPTIONS ...]
"""
import json, subprocess, sys, re
T = "tournaments/ledger/gen18-vs-sp7-900/truth/"
games = {json.loads(l)["id"]: json.loads(l) for l in open("tournaments/ledger/gen18-vs-sp7-900/gen18-vs-sp7-900/results.jsonl")}
pos = []
for f in ("win-gen18.jsonl", "win-sp7.jsonl", "gen18.jsonl"):
    for l in open(T + f):
        r = json.loads(l)
        if r["result"] == "win" and 30 <= r["empty"] <= 32:
            pos.append((r["game"], r["ply"]))
pos = sorted(set(pos))
extra = sys.argv[2:]
out = open(sys.argv[1], "w")
for gid, ply in pos:
    mv = games[gid]["moves"][:ply]
    me = "b" if ply % 2 == 0 else "w"
    lines = ["boardsize 9", "clear_board", "time_settings 900 0 0"]
    lines += [f"play {'B' if i % 2 == 0 else 'W'} {m}" for i, m in enumerate(mv)]
    lines += ["time_left w 300 0", "time_left b 300 0", f"genmove {me}", "quit"]
    r = subprocess.run(["nogobot", "gtp", "--model", "models/nogobot-b6c32-sp8.onnx", "--threads", "1"] + extra,
                       input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=400)
    move = [x for x in r.stdout.split() if x != "="][-1]
    info = [l for l in r.stderr.splitlines() if l.startswith("mcts:")][-1]
    rec = {"game": gid, "ply": ply, "empty": 81 - ply, "move": move, "log": info}
    out.write(json.dumps(rec) + "\n"); out.flush(); print(rec, flush=True)

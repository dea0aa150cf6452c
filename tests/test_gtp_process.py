"""The engine controller's process handling (nogobot/tournament/gtp_client.py): killing one
engine never costs the next engine any of its output, and a pipe is closed only by the thread
that reads it."""

from __future__ import annotations

import sys
import textwrap
import time

from nogobot.tournament.gtp_client import GtpProcess

# Answers "ID echo WORDS"; "ID flood" first writes more than a pipe holds. With "escape" it
# starts a child outside its process group that keeps stdout open for a while.
ENGINE = textwrap.dedent('''
    import subprocess, sys
    if "escape" in sys.argv:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"],
                         start_new_session=True)
    for line in sys.stdin:
        words = line.split()
        if words[1] == "flood":
            sys.stdout.write(("x" * 200 + "\\n") * 400)
        sys.stdout.write("=" + words[0] + " " + " ".join(words[2:]) + "\\n\\n")
        sys.stdout.flush()
''')


def test_killing_an_engine_mid_output_leaves_the_next_engine_whole():
    # The first engine is killed while its reader is still draining a full pipe; the next
    # engine's pipe may get the same descriptor number, and its first reply must arrive whole.
    for i in range(40):
        engine = GtpProcess([sys.executable, "-c", ENGINE], timeout=20)
        engine.send_raw(b"1 echo a\n")
        resp = engine.read_response("1")
        assert resp.problems == [] and resp.text == "a", (i, resp)
        engine.send_raw(b"2 flood\n")
        time.sleep(0.01)
        engine.kill()


def test_a_pipe_held_by_an_escaped_child_is_closed_by_its_reader():
    engine = GtpProcess([sys.executable, "-c", ENGINE, "escape"], timeout=20)
    engine.send_raw(b"1 echo a\n")
    assert engine.read_response("1").text == "a"
    start = time.perf_counter()
    engine.kill()
    assert time.perf_counter() - start < 1.9  # does not wait for the escaped child
    assert not engine.proc.stdout.closed  # its reader is still blocked on it
    deadline = time.perf_counter() + 10
    while not engine.proc.stdout.closed and time.perf_counter() < deadline:
        time.sleep(0.05)
    assert engine.proc.stdout.closed  # the reader closed it at EOF

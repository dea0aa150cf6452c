"""`nogobot tournament`: matches between GTP engines with a referee, a clock, SGF and Elo.

Reading order: ``spec.py`` (what a YAML spec may say) -> ``runner.py`` (schedule, pre-flight,
parallel games, resume, summary) -> ``referee.py`` (one game: referee board, clock, how games
end) -> ``gtp_client.py`` (talking to a subprocess) and ``clock.py`` (the referee's clock, on
``nogobot.timecontrol``) -> ``results.py`` (JSON lines, tables) and ``elo.py`` (Bradley-Terry)
-> ``records.py`` (SGF).

The harness talks to engines only through GTP subprocesses, so any program can take part; the
referee board is ``nogobot.board`` (the only owner of the rules).
"""

"""`nogobot tournament`: matches between GTP engines with a referee, a clock, SGF and Elo.

Reading order: ``spec.py`` (what a YAML spec may say) -> ``runner.py`` (pre-flight, resume, a run's
parts put together) -> ``scheduler.py`` (the games' order, the thread pool, the SPRT's stop) and
``recorder.py`` (saving a game; ``netfiles.py``: nets compared by content) -> ``referee.py`` (one
game: referee board, clock, how games end, the opening's moves) -> ``gtp_client.py`` (talking to a
subprocess) and ``clock.py`` (the referee's clock, on ``nogobot.engine.timecontrol``) ->
``results.py`` (JSON lines, tables, a two-engine match's pairs), ``elo.py`` (Bradley-Terry) and
``sprt.py`` (pentanomial Elo, the SPRT's LLR) -> ``display.py`` (tables, live view, ``tournament
report``) -> ``records.py`` (each game's SGF) and ``folder.py`` (games.sgf, logs.tar.gz, old
folders, ``pack``) -> ``openings.py`` (opening suites: reading, and making them for ``nogobot
openings``).

The harness talks to engines only through GTP subprocesses, so any program can take part; the
referee board is ``nogobot.game.board`` (the only owner of the rules).
"""

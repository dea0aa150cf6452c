"""The game: NoGo's rules on a numba board (``board``), points and colours (``coords``), SGF
records (``sgf``) and a slow reference implementation of the rules for tests (``naive_rules``)."""

"""The opening suites shipped with nogobot (SGF collections; tournament/openings.py reads them).

``nogo9-default.sgf``: 100 9x9 start positions made by ``nogobot openings --count 100 --playouts
1600 --prefix nogo9`` (each game's GC says so): 2-6 random plies, the shipped net's search giving
the side to move a win rate within 0.40-0.60, no two alike under the board's symmetries.
"""

# @requires loadsgf printsgf
# loadsgf FILE [n] (n: the position before move n, i.e. moves 1..n-1 played) and printsgf.
# Every move of a loaded file is checked with the NoGo rules; paths are relative to this file.

# game3.sgf (3x3): B B2, W B3, B A2, W C2, B A3, W B1; black to move has no legal move.
#   X O .
#   X X O
#   . O .
boardsize 9
clear_board
1 loadsgf sgf/game3.sgf
#? []
2 genmove b
#? [(?i)resign]
3 play w C3
#? []
4 play b C1
#! [illegal move]
5 play w C1
#? []

# Up to move 3: only B B2 and W B3 are on the board, black to move.
10 loadsgf sgf/game3.sgf 3
#? []
11 play b B2
#! [illegal move]
12 play w B3
#! [illegal move]
13 play b A2
#? []
# Position before move 1: empty board (of the file's size, 3x3).
14 loadsgf sgf/game3.sgf 1
#? []
15 play b C3
#? []
16 play b D4
#! [illegal move]
# A number past the end loads the whole game.
17 loadsgf sgf/game3.sgf 100
#? []
18 genmove b
#? [(?i)resign]

# Failures leave the loaded position alone.
20 loadsgf sgf/no-such-file.sgf
#! [cannot load file]
21 loadsgf sgf/capture.sgf
#! [cannot load file]
22 loadsgf sgf/pass.sgf
#! [cannot load file]
23 loadsgf sgf/occupied.sgf
#! [cannot load file]
24 loadsgf sgf/size21.sgf
#! [cannot load file]
25 loadsgf sgf/garbage.sgf
#! [cannot load file]
26 loadsgf sgf/dead_setup.sgf
#! [cannot load file]
27 loadsgf sgf
#! [cannot load file]
28 genmove b
#? [(?i)resign]
29 loadsgf
#! [syntax error]
30 loadsgf sgf/game3.sgf x
#! [syntax error]
31 loadsgf sgf/game3.sgf 3 4
#! [syntax error]

# Setup stones (AB/AW) and PL: black A3, white C1, white to play B2.
40 loadsgf sgf/setup.sgf 1
#? []
41 play b A3
#! [illegal move]
42 play b C1
#! [illegal move]
43 loadsgf sgf/setup.sgf
#? []
44 play b B2
#! [illegal move]

# printsgf: the current game as SGF (no empty lines), size and moves included.
boardsize 3
clear_board
play b B2
play w B1
50 printsgf
#? [\(;.*SZ\[3\].*;B\[bb\].*;W\[bc\].*\)]
51 printsgf
#? [![^\n]*\n\n.*]
52 loadsgf sgf/game3.sgf
#? []
53 printsgf
#? [\(;.*RE\[W\+R\].*\)]
54 loadsgf sgf/setup.sgf
#? []
55 printsgf
#? [\(;.*AB\[aa\].*AW\[cc\].*;W\[bb\].*\)]

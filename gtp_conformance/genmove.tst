# genmove: a legal vertex, never pass; resign when the colour to play has no legal move.

boardsize 9
clear_board
1 genmove b
#? [(?i)[A-HJ][1-9]]
2 genmove w
#? [(?i)[A-HJ][1-9]]
3 genmove black
#? [(?i)[A-HJ][1-9]]
4 genmove WHITE
#? [(?i)[A-HJ][1-9]]
5 genmove x
#! [syntax error]
6 genmove
#! [syntax error]
7 genmove b w
#! [syntax error]

# 2x2, after B A2, W B2, B A1 neither colour has a legal move:
#   X O
#   X .      B1 would capture for white, and be suicide for black.
boardsize 2
clear_board
play b A2
play w B2
play b A1
10 genmove w
#? [(?i)resign]
11 genmove b
#? [(?i)resign]
12 genmove w
#? [(?i)resign]

# 3x3: black to move is stuck, white still has C3 and C1:
#   X O .
#   X X O
#   . O .
boardsize 3
clear_board
play b B2
play w B3
play b A2
play w C2
play b A3
play w B1
20 genmove b
#? [(?i)resign]
# genmove for the colour that is not to move plays for it.
21 genmove w
#? [(?i)C3|C1]
22 genmove b
#? [(?i)resign]
23 genmove w
#? [(?i)C3|C1]
24 genmove w
#? [(?i)resign]
25 genmove b
#? [(?i)resign]

# Whole game on 4x4 by genmove alone must stay legal (any failure would show as '?').
boardsize 4
clear_board
30 genmove b
#? [(?i)[A-D][1-4]]
31 genmove w
#? [(?i)[A-D][1-4]]
32 genmove b
#? [(?i)[A-D][1-4]]
33 genmove w
#? [(?i)[A-D][1-4]]
34 genmove b
#? [(?i)[A-D][1-4]|resign]
35 genmove w
#? [(?i)[A-D][1-4]|resign]

# @requires undo
# undo restores the previous position; nothing to undo is "cannot undo" and changes nothing.

boardsize 3
clear_board
1 undo
#! [cannot undo]
play b A1
2 undo
#? []
3 undo
#! [cannot undo]
# A1 is free again, for either colour.
4 play w A1
#? []

# undo brings back legality: white B1 then white A2 would capture black A1...
clear_board
play b A1
play w B1
10 play w A2
#! [illegal move]
# ...but not once B1 is undone.
11 undo
#? []
12 play w A2
#? []
13 undo
#? []
14 undo
#? []
15 undo
#! [cannot undo]

# undo after genmove, several in a row, and the game-end flag goes away.
boardsize 2
clear_board
play b A2
play w B2
play b A1
20 genmove w
#? [(?i)resign]
21 undo
#? []
22 reg_genmove b
#? [(?i)A1]
23 undo
#? []
24 undo
#? []
25 undo
#! [cannot undo]
26 undo extra
#! [syntax error]

# clear_board and boardsize forget the history.
play b A1
clear_board
30 undo
#! [cannot undo]
play b A1
boardsize 3
31 undo
#! [cannot undo]

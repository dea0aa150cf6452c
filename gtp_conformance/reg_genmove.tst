# @requires reg_genmove
# reg_genmove: like genmove but the move is not played.

# 2x2 after B A2, W B2: black's only legal move is A1 (B1 would capture white B2).
boardsize 2
clear_board
play b A2
play w B2
1 reg_genmove b
#? [(?i)A1]
2 reg_genmove b
#? [(?i)A1]
# Not played: A1 is still free.
3 play b A1
#? []
4 reg_genmove w
#? [(?i)resign]
5 reg_genmove b
#? [(?i)resign]
6 reg_genmove x
#! [syntax error]

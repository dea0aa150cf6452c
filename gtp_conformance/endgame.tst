# @requires final_score
# Game end: the side to move with no legal move has lost. final_score answers B+R / W+R
# (nogobot's documented choice; NoGo has no score), and cannot score before the end.

boardsize 2
clear_board
1 final_score
#! [cannot score]
play b A2
play w B2
2 final_score
#! [cannot score]
play b A1
# White to move, no legal move: black won.
3 final_score
#? [B\+R]
4 genmove w
#? [(?i)resign]
5 final_score
#? [B\+R]

# 3x3: black to move is stuck although white could still play: white won.
boardsize 3
clear_board
play b B2
play w B3
play b A2
play w C2
play b A3
play w B1
10 final_score
#? [W\+R]
11 genmove w
#? [(?i)C3|C1]
12 final_score
#? [W\+R]
13 final_score extra
#! [syntax error]

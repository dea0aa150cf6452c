# @requires showboard
# showboard: free text without empty lines (an empty line would end the response early;
# the runner's framing check catches that). Top row first.

boardsize 3
clear_board
play b A1
play w C3
1 showboard
#? [.*O.*\n.*\n.*X.*]
2 showboard extra
#! [syntax error]
3 boardsize 19
#? []
4 showboard
#? [.*\S.*]

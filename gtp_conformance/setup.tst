# boardsize, clear_board and komi (GTP required commands).

boardsize 9
clear_board

# komi is accepted with any number (NoGo ignores it); only a non-number is a syntax error.
1 komi 6.5
#? []
2 komi 0
#? []
3 komi -7.5
#? []
4 komi 7
#? []
5 komi abc
#! [syntax error]
6 komi
#! [syntax error]
7 komi 6.5 1
#! [syntax error]

# boardsize: 2..19 accepted; outside is "unacceptable size"; not a number is a syntax error.
10 boardsize 2
#? []
11 boardsize 19
#? []
12 boardsize 7
#? []
13 boardsize 1
#! [unacceptable size]
14 boardsize 20
#! [unacceptable size]
15 boardsize 0
#! [unacceptable size]
16 boardsize 99999999999999999999999999999999999999
#! [unacceptable size]
17 boardsize nine
#! [syntax error]
18 boardsize -5
#! [syntax error]
19 boardsize 9.0
#! [syntax error]
20 boardsize
#! [syntax error]
21 boardsize 9 9
#! [syntax error]

# A failed boardsize leaves the 7x7 board in place: G7 exists, H1 does not.
30 play b G7
#? []
31 play b H1
#! [illegal move]

# clear_board empties the board (G7 can be played again).
32 clear_board
#? []
33 play b G7
#? []
34 clear_board extra
#! [syntax error]

# boardsize clears the board too.
40 boardsize 7
#? []
41 play w G7
#? []

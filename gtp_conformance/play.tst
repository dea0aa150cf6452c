# play: argument parsing and the simple illegal cases.

boardsize 9
clear_board

# Colours and vertices in any case.
1 play b E5
#? []
2 play WHITE e6
#? []
3 play Black d5
#? []
4 play W f5
#? []
5 play white A1
#? []
6 play B j9
#? []

# Either colour may play at any time (same colour twice is not a protocol error).
7 play b C3
#? []
8 play b C7
#? []

# Occupied points.
10 play b E5
#! [illegal move]
11 play w e5
#! [illegal move]

# Column I does not exist; off-board vertices; pass does not exist in NoGo.
12 play b I5
#! [illegal move]
13 play b K5
#! [illegal move]
14 play b A10
#! [illegal move]
15 play b A0
#! [illegal move]
16 play b Z25
#! [illegal move]
17 play b pass
#! [illegal move]
18 play w PASS
#! [illegal move]

# Unparseable colour or vertex, missing or extra arguments: syntax error.
20 play x E4
#! [syntax error]
21 play bl E4
#! [syntax error]
22 play b E
#! [syntax error]
23 play b 55
#! [syntax error]
24 play b E4x
#! [syntax error]
25 play b
#! [syntax error]
26 play
#! [syntax error]
27 play b E4 E3
#! [syntax error]
28 play E4 b
#! [syntax error]
29 play b resign
#! [syntax error]

# None of the failures changed anything: E4 is still free for black.
30 play b E4
#? []

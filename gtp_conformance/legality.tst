# NoGo legality through play: capturing and suicide are illegal, for single stones and
# blocks, on edges, in corners and on last liberties. Diagrams: top row first, X black, O white.
# A Go engine fails this file, as it should.

# --- capture of a single stone in the corner (3x3) -------------------------------------
#   . . .
#   . . .
#   X O .      black A1 has one liberty left (A2)
boardsize 3
clear_board
play b A1
play w B1
1 play w A2
#! [illegal move]
# Black extending to A2 is fine: the block A1-A2 keeps A3 and B2.
2 play b A2
#? []

# --- suicide of a single stone in the corner ------------------------------------------
#   . . .
#   O . .
#   . O .      black at A1 would have no liberty
clear_board
play w A2
play w B1
10 play b A1
#! [illegal move]
# White at A1 joins its stones: the block keeps A3, B2, C1.
11 play w A1
#? []

# --- capture of a two-stone block on the edge (4x4) ----------------------------------
#   . . . .
#   . . . .
#   . O O .
#   O X X .    black B1-C1 has one liberty left (D1)
boardsize 4
clear_board
play b B1
play b C1
play w A1
play w B2
play w C2
20 play w D1
#! [illegal move]
# White A1 has one liberty left (A2): black may not take it either.
21 play b A2
#! [illegal move]
# White may fill A2: A1-A2-B2-C2 is one block with liberties A3, B3, C3, D2.
22 play w A2
#? []
# Black D1 extends the block to B1-C1-D1 with liberty D2: legal.
23 play b D1
#? []
# Now the black block's only liberty is D2: white D2 would capture it; black D2 extends
# the block to D3.
24 play w D2
#! [illegal move]
25 play b D2
#? []

# --- filling one's own last liberty (3x3) --------------------------------------------
#   . . .
#   O O O
#   X X .      black A1-B1 has one liberty (C1); C1 would leave the block without liberty
boardsize 3
clear_board
play b A1
play b B1
play w A2
play w B2
play w C2
30 play b C1
#! [illegal move]
31 play w C1
#! [illegal move]
# Top row: black A3 is legal (its liberty B3; white row keeps B3, C3).
32 play b A3
#? []
# White B3 would leave black A3 without liberty: capture.
33 play w B3
#! [illegal move]
# Black B3 extends A3: the block A3-B3 keeps C3, and the white row keeps C3.
34 play b B3
#? []
# C3 is the last liberty of both the black top pair and the white row: illegal for both.
35 play b C3
#! [illegal move]
36 play w C3
#! [illegal move]

# --- a point that captures two blocks at once, in the middle (5x5) -------------------
#   . . . . .
#   . . O . .
#   . O X O .
#   . . . . .
#   . . . . .
boardsize 5
clear_board
play b C3
play w B3
play w C4
play w D3
40 play w C2
#! [illegal move]
41 play b C2
#? []
# Black C1 below keeps the block alive (C3-C2-C1 has B2, D2, B1, D1).
42 play b C1
#? []
# A legal move with only a friendly block as neighbour, not in atari.
43 play w B4
#? []

# --- a stone surrounded on all four sides by its own colour is fine; the empty
# point surrounded by the opponent is suicide (5x5)
clear_board
play w C4
play w B3
play w D3
play w C2
50 play b C3
#! [illegal move]
51 play w C3
#? []

# --- whole-board edge: a long black edge block with a single liberty (5x5) ----------
#   X X X X .
#   O O O O .
clear_board
play b A5
play b B5
play b C5
play b D5
play w A4
play w B4
play w C4
play w D4
60 play w E5
#! [illegal move]
# Black E5 extends the block: its only liberty is now E4.
61 play b E5
#? []
# White E4 would capture five stones; black E4 extends the block again (liberty E3).
62 play w E4
#! [illegal move]
63 play b E4
#? []

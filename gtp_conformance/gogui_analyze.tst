# @requires gogui-analyze_commands gogui-interrupt nogobot-param nogobot-policy nogobot-policy_board nogobot-dominion nogobot-value nogobot-visits nogobot-candidates nogobot-candidates_table nogobot-pv
# nogobot's GoGui analyze commands (nogobot/gtp/analyze.py): the list GoGui reads at attach,
# the param command (it must change the settings), and each view's reply format as GoGui
# parses it (boards top row first, gfx one command per line, pspairs point/text pairs).

boardsize 9
clear_board

# type/label/command lines; every command named must be known.
1 gogui-analyze_commands
#? [(?=.*^param/[^/\n]+/nogobot-param$)(?=.*^gfx/[^/\n]+/nogobot-policy %c$)(?=.*^dboard/[^/\n]+/nogobot-policy_board %c$)(?=.*^dboard/[^/\n]+/nogobot-dominion %c$)(?=.*^string/[^/\n]+/nogobot-value %c$)(?=.*^gfx/[^/\n]+/nogobot-visits %c$)(?=.*^pspairs/[^/\n]+/nogobot-candidates %c$)(?=.*^hstring/[^/\n]+/nogobot-candidates_table %c$)(?=.*^varc/[^/\n]+/nogobot-pv %c$)(?:[a-z]+/[^/\n]+/[^\n]+\n?)+]
2 known_command nogobot-visits
#? [true]
# Listing gogui-interrupt tells GoGui to send '# interrupt' lines; the command itself is empty.
3 gogui-interrupt
#? []

# param: one "[type] key value" line per setting; "key value" sets it.
10 nogobot-param
#? [(?=.*^\[string\] playouts \d+$)(?=.*^\[string\] seconds [0-9.]+$)(?=.*^\[string\] c_puct [0-9.]+$)(?=.*^\[string\] threads \d+$)(?=.*^\[bool\] ponder [01]$)(?=.*^\[bool\] live_gfx [01]$)(?:\[(?:string|bool)\] \w+ \S+\n?)+]
11 nogobot-param playouts 24
12 nogobot-param playouts
#? [24]
13 nogobot-param c_puct 1.7
14 nogobot-param c_puct
#? [1.7]
15 nogobot-param ponder 1
16 nogobot-param ponder
#? [1]
17 nogobot-param ponder 0
18 nogobot-param seconds 2.5
19 nogobot-param
#? [(?=.*^\[string\] playouts 24$)(?=.*^\[string\] c_puct 1.7$)(?=.*^\[bool\] ponder 0$)(?=.*^\[string\] seconds 2.5$).*]
20 nogobot-param threads 1
21 nogobot-param threads
#? [1]
22 nogobot-param no_such_key 1
#! [unknown parameter no_such_key.*]
23 nogobot-param playouts many
#! [invalid value for playouts.*]
24 nogobot-param c_puct -1
#! [invalid value for c_puct.*]
25 nogobot-param ponder maybe
#! [invalid value for ponder.*]

# Network views of the empty board.
play b E5
30 nogobot-policy
#? [(?:COLOR #[0-9a-f]{6}(?: [A-HJ][1-9])+\n)+LABEL(?: [A-HJ][1-9] \d+)+\nTEXT White policy: .*]
31 nogobot-policy b
#? [(?s).*TEXT Black policy: .*]
# dboard: 9 rows of 9 numbers, top row first; the occupied E5 (row 5, column 5) has prior 0.
32 nogobot-policy_board
#? [(?:(?:-?[01]\.\d{3} ){8}-?[01]\.\d{3}\n){4}(?:-?[01]\.\d{3} ){4}0\.000(?: -?[01]\.\d{3}){4}\n(?:(?:-?[01]\.\d{3} ){8}-?[01]\.\d{3}\n?){4}]
33 nogobot-dominion
#? [(?:(?:-?[01]\.\d{3} ){8}-?[01]\.\d{3}\n?){9}]
34 nogobot-value
#? [White to move: network win \d+\.\d%, score [+-]\d+\.\d\d]
35 nogobot-value w
#? [White to move: network win \d+\.\d%, score [+-]\d+\.\d\d]

# Search views: the current position is searched once (24 playouts) and the search reused.
40 nogobot-visits
#? [INFLUENCE(?: [A-HJ][1-9] -[01]\.\d{3})+\n(?:LABEL(?: [A-HJ][1-9] \d+)+\n)?VAR(?: [bw] [A-HJ][1-9])+\nTEXT White to move: \d+ visits in [0-9.]+s, best [A-HJ][1-9] \d+\.\d%]
41 nogobot-candidates
#? [[A-HJ][1-9] (?:\d+%|WIN|LOSS)(?: [A-HJ][1-9] (?:\d+%|WIN|LOSS))*]
42 nogobot-candidates_table
#? [White to move: \d+ visits, \d+ playouts in [0-9.]+s \(\w[^)]*\)\nmove  visits  winrate  prior    lcb  pv(?:\n[A-HJ][1-9] +\d+ +(?:\d+\.\d%|WIN|LOSS) +\d+\.\d% +\d+\.\d% (?: ?[A-HJ][1-9])+)+]
43 nogobot-pv
#? [[A-HJ][1-9](?: [A-HJ][1-9])*]
# The PV never starts on an occupied point and the best candidate opens it.
44 nogobot-pv w
#? [(?!E5)[A-HJ][1-9].*]
45 nogobot-visits b
#? [INFLUENCE(?: [A-HJ][1-9] [01]\.\d{3})+\n.*TEXT Black to move: .*]

# A finished game: the side to move has no legal move.
boardsize 2
clear_board
play b A2
play w B2
play b A1
50 nogobot-visits
#? [TEXT White has no legal move]
51 nogobot-candidates
#? []
52 nogobot-pv
#? []
53 nogobot-value
#? [White to move has no legal move: White has lost]
54 nogobot-policy
#? [TEXT White has no legal move]

# @name nogobot.*
# nogobot's own conventions, beyond what GTP fixes: exact error texts for argument errors,
# case-sensitive command names, the full command list, NoGo-specific answers.

boardsize 9
clear_board

# Command names are case-sensitive (as in GNU Go and KataGo).
1 NAME
#! [unknown command]
2 Protocol_Version
#! [unknown command]
# Ids: leading zeros are dropped in the echo (the runner expects "=3").
003 name
#? [nogobot.*]
# Go-only commands are not offered.
4 fixed_handicap 2
#! [unknown command]
5 place_free_handicap 2
#! [unknown command]
6 final_status_list dead
#! [unknown command]

# Argument counts of the protocol commands.
10 known_command
#! [syntax error]
11 known_command name extra
#! [syntax error]
12 protocol_version extra
#! [syntax error]
13 name extra
#! [syntax error]
14 list_commands extra
#! [syntax error]
15 quit now
#! [syntax error]

# Every nogobot command is listed, and nothing for handicap.
20 list_commands
#? [(?=(?:.*\n)?genmove(?:\n|$))(?=(?:.*\n)?reg_genmove(?:\n|$))(?=(?:.*\n)?undo(?:\n|$))(?=(?:.*\n)?showboard(?:\n|$))(?=(?:.*\n)?final_score(?:\n|$))(?=(?:.*\n)?loadsgf(?:\n|$))(?=(?:.*\n)?printsgf(?:\n|$))(?=(?:.*\n)?time_settings(?:\n|$))(?=(?:.*\n)?time_left(?:\n|$))(?=(?:.*\n)?kgs-time_settings(?:\n|$))(?=(?:.*\n)?gogui-rules_legal_moves(?:\n|$))(?=(?:.*\n)?gogui-rules_captured_count(?:\n|$))(?!.*handicap).*]
21 known_command gogui-rules_board
#? [true]
22 known_command kgs-time_settings
#? [true]
23 known_command fixed_handicap
#? [false]

# Numbers: komi takes decimals and exponents, huge values too; boardsize rejects decimals.
30 komi 1e3
#? []
31 komi 1e400
#? []
32 komi nan
#! [syntax error]
33 komi inf
#! [syntax error]
34 komi 6,5
#! [syntax error]
35 boardsize +9
#? []
36 boardsize 0009
#? []
37 boardsize 99999999999999999999999999999999999999999999999999999999999999999999999
#! [unacceptable size]

# Time values: decimals accepted, negatives and non-finite values are syntax errors.
40 time_settings 300.5 0 0
#? []
41 time_settings -1 0 0
#! [syntax error]
42 time_settings 300 -5 1
#! [syntax error]
43 time_left b -2.5 0
#? []
44 time_left b 1e400 0
#! [syntax error]
45 kgs-time_settings byoyomi 300 30 2.5
#! [syntax error]

# Genmove answers are upper case and never pass.
50 genmove b
#? [[A-HJ][1-9]]
51 genmove w
#? [[A-HJ][1-9]]
52 reg_genmove b
#? [[A-HJ][1-9]]

# showboard: the coordinates frame and a status line.
boardsize 3
clear_board
play b A1
play w C3
60 showboard
#? [\s*A B C\n 3 \. \. O 3\n 2 \. \. \. 2\n 1 X \. \. 1\n   A B C\nblack to move, 2 moves played]

# cputime (used by gogui-twogtp and gogui-regress) is a number of seconds.
61 cputime
#? [\d+\.\d+]

# gogui-rules_final_result before and at the end.
62 gogui-rules_final_result
#? [unknown]
boardsize 2
clear_board
play b A2
play w B2
play b A1
63 gogui-rules_final_result
#? [Black wins \(white has no legal move\)]
64 showboard
#? [.*white to move, 3 moves played; white has no legal move]
65 final_score
#? [B\+R]

# loadsgf answers nothing (GTP spec; GNU Go would answer the colour to move).
66 loadsgf sgf/game3.sgf
#? []

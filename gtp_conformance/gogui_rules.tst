# @requires gogui-rules_game_id gogui-rules_board_size gogui-rules_legal_moves gogui-rules_side_to_move gogui-rules_board gogui-rules_final_result gogui-rules_captured_count
# GoGui's rules-referee commands (GoGui >= 1.5): upper-case vertices, no pass, an empty legal
# move list at the end, a bare board size.

boardsize 3
clear_board
1 gogui-rules_game_id
#? [NoGo]
2 gogui-rules_board_size
#? [3]
3 gogui-rules_side_to_move
#? [(?i)b(lack)?]
# All nine points, upper case, no pass.
4 gogui-rules_legal_moves
#? [(?=.*\bA1\b)(?=.*\bB1\b)(?=.*\bC1\b)(?=.*\bA2\b)(?=.*\bB2\b)(?=.*\bC2\b)(?=.*\bA3\b)(?=.*\bB3\b)(?=.*\bC3\b)(?:[A-HJ-T]\d+ ){8}[A-HJ-T]\d+]
5 gogui-rules_board
#? [\.\s*\.\s*\.\s*\n\s*\.\s*\.\s*\.\s*\n\s*\.\s*\.\s*\.\s*]
6 gogui-rules_captured_count
#? [0 0]

play b A1
play w C3
10 gogui-rules_board
#? [\.\s*\.\s*O\s*\n\s*\.\s*\.\s*\.\s*\n\s*X\s*\.\s*\.\s*]
11 gogui-rules_side_to_move
#? [(?i)b(lack)?]
12 gogui-rules_legal_moves
#? [(?=.*\bB1\b)(?=.*\bC1\b)(?=.*\bA2\b)(?=.*\bB2\b)(?=.*\bC2\b)(?=.*\bA3\b)(?=.*\bB3\b)(?:[A-HJ-T]\d+ ){6}[A-HJ-T]\d+]
13 gogui-rules_legal_moves
#? [![^A-Z0-9 ]*pass.*]

# After B B2, W B1: white B1's last liberty is C1, so black C1 would capture it.
play b B2
play w B1
20 gogui-rules_side_to_move
#? [(?i)b(lack)?]
21 gogui-rules_legal_moves
#? [(?=.*\bA2\b)(?!.*\bC1\b)(?!.*\bA1\b)(?!.*\bB1\b)(?!.*\bB2\b)(?!.*\bC3\b).*]
22 gogui-rules_legal_moves
#? [(?=.*\bA3\b)(?=.*\bB3\b)(?=.*\bA2\b)(?=.*\bC2\b)(?:[A-HJ-T]\d+ ){3}[A-HJ-T]\d+]

# 2x2 game over: white to move has nothing.
boardsize 2
clear_board
play b A2
play w B2
play b A1
30 gogui-rules_legal_moves
#? []
31 gogui-rules_side_to_move
#? [(?i)w(hite)?]
32 gogui-rules_final_result
#? [(?i).*black.*]
33 gogui-rules_board_size
#? [2]
34 gogui-rules_board
#? [X\s*O\s*\n\s*X\s*\.\s*]
35 gogui-rules_captured_count
#? [0 0]

boardsize 19
40 gogui-rules_board_size
#? [19]
41 gogui-rules_legal_moves
#? [(?=.*\bT19\b)(?=.*\bA1\b)(?!.*\bI\d)(?:[A-HJ-T]\d+ ){360}[A-HJ-T]\d+]

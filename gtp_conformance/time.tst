# @requires time_settings time_left
# time_settings main byo stones (integer seconds) and time_left colour seconds stones.

boardsize 9
clear_board
1 time_settings 300 0 0
#? []
2 time_settings 0 1 0
#? []
3 time_settings 600 30 5
#? []
4 time_settings 0 0 0
#? []
5 time_settings 300
#! [syntax error]
6 time_settings a b c
#! [syntax error]
7 time_settings 300 0 0 0
#! [syntax error]
10 time_left b 120 0
#? []
11 time_left white 30 5
#? []
12 time_left B 0 0
#? []
13 time_left x 1 0
#! [syntax error]
14 time_left b 120
#! [syntax error]
15 time_left b x 0
#! [syntax error]
# The clock settings do not disturb play.
20 genmove b
#? [(?i)[A-HJ][1-9]]

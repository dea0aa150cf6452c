# @requires kgs-time_settings
# kgs-time_settings none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN PERIOD STONES

boardsize 9
clear_board
1 kgs-time_settings none
#? []
2 kgs-time_settings absolute 900
#? []
3 kgs-time_settings byoyomi 300 30 5
#? []
4 kgs-time_settings canadian 600 60 25
#? []
10 kgs-time_settings
#! [syntax error]
11 kgs-time_settings fischer 300 10
#! [syntax error]
12 kgs-time_settings absolute
#! [syntax error]
13 kgs-time_settings byoyomi 300 30
#! [syntax error]
14 kgs-time_settings canadian 600 60 25 1
#! [syntax error]
15 kgs-time_settings none 5
#! [syntax error]
16 kgs-time_settings absolute x
#! [syntax error]
17 kgs-time_settings absolute -5
#! [syntax error]
20 genmove b
#? [(?i)[A-HJ][1-9]]

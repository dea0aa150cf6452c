# Protocol commands and framing every GTP v2 engine must get right.
# Generic: uses only the required GTP commands, so it runs against any engine.
# Format: gogui-regress; see nogobot/conformance.py (or docs/gui-and-gtp.md) for the #! extension.

1 protocol_version
#? [2]

2 name
#? [[^\n]+]

3 version
#? [[^\n]*]

# known_command is true for the required commands and false for anything else.
10 known_command protocol_version
#? [true]
11 known_command name
#? [true]
12 known_command version
#? [true]
13 known_command known_command
#? [true]
14 known_command list_commands
#? [true]
15 known_command quit
#? [true]
16 known_command boardsize
#? [true]
17 known_command clear_board
#? [true]
18 known_command komi
#? [true]
19 known_command play
#? [true]
20 known_command genmove
#? [true]
21 known_command no-such-command
#? [false]
22 known_command gtp_no_such_thing_either
#? [false]

# list_commands: one name per line (Sabaki splits on newlines), every required command present.
30 list_commands
#? [(.*\n)?protocol_version(\n.*)?]
31 list_commands
#? [(.*\n)?known_command(\n.*)?]
32 list_commands
#? [(.*\n)?genmove(\n.*)?]
33 list_commands
#? [(.*\n)?boardsize(\n.*)?]
34 list_commands
#? [![^\n]* [^\n]*]

# Unknown commands fail with the canonical text.
40 no-such-command
#! [unknown command]
41 no-such-command with arguments
#! [unknown command]

# Comments after a command, and separators (a tab between id and command here).
50 protocol_version # a trailing comment
#? [2]
51	protocol_version
#? [2]
52   protocol_version   
#? [2]

# Ids need not be in order. (Nor unique, but gogui-regress keys its report on them, so a
# repeated id is one of the runner's built-in checks instead.)
7 protocol_version
#? [2]
6 protocol_version
#? [2]
999999 protocol_version
#? [2]

# quit answers "=" and the engine exits with status 0 (the runner checks the exit).

1 protocol_version
#? [2]
2 quit
#? []

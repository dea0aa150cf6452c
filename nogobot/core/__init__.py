"""What every layer may use: atomic file writes and where the package's data folders are."""

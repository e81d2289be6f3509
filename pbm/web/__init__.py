"""The read-only web site: every public board, player, rating and finished game."""

"""The text of ``help accasta``: the rules and the notation, for players."""

HELP = "(being written)\n"

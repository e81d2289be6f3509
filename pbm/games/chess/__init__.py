"""Chess, with python-chess as the rules engine.

``notation`` reads moves and ``refusals`` says why one is refused. Every
rule is python-chess's: this package only translates between it and the
``pbm.games`` protocol.
"""

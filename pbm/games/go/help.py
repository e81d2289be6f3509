r"""The text of ``help go``: the rules and the notation, for players.

Plain ASCII, lines of at most 78 characters, so that it travels in any mail.
"""

HELP = r"""GO - the game of surrounding
============================

Two players, Black and White, take turns placing a stone of their colour on
an empty point of the board (the crossings of the lines), or passing. Black
moves first. Stones never move; they are taken off when the other side
surrounds them. Whoever surrounds more of the board wins.

Boards: 19x19 (--size=19, the default), 13x13 (--size=13) or 9x9 (--size=9).


CAPTURES, SUICIDE AND KO
------------------------

A chain is stones of one colour joined along the lines; its liberties are
the empty points next to it. A stone that takes a chain's last liberty
captures the chain: it comes off the board. A stone may not take its own
chain's last liberty without capturing (suicide is refused).

Ko: a move may not bring back a whole-board position seen before in the
game (positional superko). The common case, taking back a single stone at
once in a ko, is refused as "ko: you cannot retake at once": play
elsewhere first (a ko threat), then you may take back.


WRITING A MOVE
--------------

A point is its column letter, A to T without I (H is followed by J), and
its row number from the bottom, 1 to 19: D4, Q16, k10 (case does not
matter). SGF's two letters are read too: column, then row from the top
(dd is D16 on 19x19). To pass, write pass.

         A B C D E F G H J
      9  . . . . . . . . . 9
      8  . . . . . . . . . 8
      7  . . + . . . + . . 7     X Black, O White, + a star point,
      6  . . . . . . . . . 6     [ ] around the last move.
      5  . . . . + . . . . 5
      4  . . . . . . . . . 4     On 9x9 the star points are C3, G3,
      3  . . + .[X]. + . . 3     E5, C7 and G7; Black has played E3.
      2  . . . . . . . . . 2
      1  . . . . . . . . . 1
         A B C D E F G H J


THE END AND THE SCORE
---------------------

Play ends when both players pass in a row. pbm then proposes which stones
are dead (GNU Go's judgement, or pbm's own simpler guess when GNU Go is not
at hand); the board mail shows them in lower case (x, o) and the score. The
players take turns answering, as they took turns playing:

  accept          agree to the marking shown;
  dead D4 E5      mark the chains on those points dead (a stone of each);
  alive Q16       mark them alive again;
  resume          go back to play: your opponent moves next.

Changing the marking counts as accepting the new one. The game ends when a
player accepts a marking the other made or accepted. A player who runs out
of time while the score is being agreed leaves the marking as it stands:
the score decides.

Scoring is by area (Chinese and AGA rules): your stones on the board and
the empty points that only your stones surround, once the dead stones are
off. White adds the komi, 7.5 points unless the challenge sets another
(--komi=6.5, 0 to 9.5 in half points). A whole-number komi (--komi=7)
allows a draw by an equal score (jigo). Captures do not count in area
scoring; the board shows them all the same.


HANDICAP
--------

--handicap=N (2 to 9) puts N black stones on the star points before play;
White then moves first, and the komi is 0.5 unless the challenge sets one.
Placing the stones is Black's first turn, so White's first move is move 2.


DRAWS, RESIGNING, RECORDS
-------------------------

A game is drawn only by agreement (offer a draw) or by jigo: there is no
draw to claim. Resign and undo work as in every game here. Records are
SGF (pbm archive --format sgf), which any Go program opens.
"""

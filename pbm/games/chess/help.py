"""The text of ``help chess``: the commands, the notation and the draw rules, for players.

Plain ASCII, lines of at most 78 characters, so that it travels in any mail.
The tests play every move written ``(start: ...)`` from the starting position.
"""

HELP = """CHESS - by correspondence
=========================

The rules are the FIDE Laws of Chess. The server checks every move and mails
both players the board after it.


COMMANDS
--------

B is the board number, UID your user id, PW your password.

  chess challenge UID1 UID2       a new board; UID1 plays White
  chess move B UID PW MOVE        play MOVE, e.g. chess move 12 anna pw Nf3
  chess draw B UID PW             offer your opponent a draw
  chess accept B UID PW           accept the draw your opponent offered
  chess reject B UID PW           decline it
  chess claim B UID PW            claim a draw the rules give you (see below)
  chess resign B UID PW           resign the game
  chess undo B UID PW             ask to take back your last move
  chess show B                    the current board
  chess history B                 the moves so far, with comments
  chess moves B                   every legal move in the position

Replying to a board mail needs no board, user id or password: write the move
alone as the first line of your reply (Nf3), or one of the words draw,
accept, reject, claim, resign, undo, show, history, moves. To play a move
and claim a draw with it, write the move followed by claim: Nf3 claim.
The other lines of the mail are a comment shown with your move.


WRITING MOVES
-------------

Any of the usual notations is read; the server answers in SAN.

  SAN             e4  Nf3  exd5  Bxf7+  Qxf7#  e8=Q  e8Q  exd8=N
                  (start: Nf3 = nf3 = Sf3)
  castling        O-O (kingside)  O-O-O (queenside); 0-0 and 0-0-0 too
  long algebraic  e2-e4  Ng1-f3  Nb1xc3  e7xd8=Q  Ke1-g1 (castling)
                  (start: Ng1-f3 = Nf3)
  coordinates     e2e4  g1f3  e1g1 (castling)  e7e8q (promotion)
                  (start: g1f3 = Nf3)

Piece letters: K king, Q queen, R rook, B bishop, N knight; pawns have
none. German letters are read too: S (Springer), L, T, D (Sf3 = Nf3). Check
and mate signs (+ #) and comments such as ! ? !? may be added or left out;
a capture may be written with x, : or not at all (exd5 = ed5). A pawn that
reaches the last rank must be promoted: add the new piece, as in e8=Q, e8Q
or e7e8q.

When a move is refused the reply says why: for instance "no knight of
yours can reach f3", "the knight on d2 is pinned: Nf3 would leave your
king in check from the bishop on b4", "you cannot castle kingside: your
king has moved", or "Nd2 is ambiguous: write Nbd2 or Nfd2".


HOW A GAME ENDS
---------------

By itself, the moment it happens:
  checkmate              the side that gives mate wins
  stalemate              the side to move has no legal move and is not in
                         check: a draw
  insufficient material  neither side can ever mate (king against king,
                         king and bishop or knight against king...): a draw
  fivefold repetition    the same position for the fifth time: a draw
  75-move rule           75 moves by each side without a capture or a pawn
                         move: a draw

By a claim (chess claim, or the move followed by claim):
  threefold repetition   the same position (same side to move, same
                         castling and en passant rights) stands on the
                         board for the third time
  fifty-move rule        50 moves by each side without a capture or a pawn
                         move
The claim is judged on the position on the board, after your move if you
write one. A wrong claim is refused with the reason and the game goes on.

By agreement: one player offers a draw (chess draw), the other accepts or
rejects it.

And by resignation (chess resign), or by forfeit when a player does not
move within the board's forfeit time.
"""

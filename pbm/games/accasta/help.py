r"""The text of ``help accasta``: the rules and the notation, for players.

Plain ASCII, lines of at most 78 characters, so that it travels in any mail.
Examples written ``(standard start: ...)`` or ``(pari start: ...)`` are moves
from the starting position; the tests play them.
"""

HELP = r"""ACCASTA - a stacking game for two by Dieter Stein
==================================================

Two armies of 20 pieces march across a six-sided board of 37 cells. Pieces
pile up into stacks; whoever owns the top piece of a stack owns the whole
stack. You win by standing on three cells of the enemy's castle.

Two variants are played here:

  standard  Shields, Horses and Chariots, which move 1, 2 and 3 cells.
  pari      all pieces look alike; a stack moves as far as you have
            pieces in it (the rules as published in German and Italian).


THE BOARD AND THE START
-----------------------

                Black

             1   2   3   4
           -/- -/- -/- -/-
      g -- shc shc shc shc 5
             --- --- ---  /
    f -- .   sh  sh  sh  .   6
               --- ---      /
  e -- .   .   s   s   .   .   7
                              /
d -- .   .   .   .   .   .   .
                              \
  c -- .   .   S   S   .   .   7
               --- ---      \
    b -- .   SH  SH  SH  .   6
             --- --- ---  \
      a -- SHC SHC SHC SHC 5
           -\- -\- -\- -\-
             1   2   3   4

                White

Rows run from a (White's side) to g (Black's side); the cells of a row are
numbered from the left, so the centre is d4. The numbered lines bend over
row d: c4 touches b3, b4, c3, c5, d4 and d5, while e4 touches d4, d5, e3,
e5, f3 and f4. Board mails draw the board from your side: Black's turned
round, row g below, each row read from its right end.

The underlined cells are the castles. White's castle is a1-a4, b2-b4, c3
and c4; Black's is g1-g4, f2-f4, e3 and e4. Each side starts inside its
own castle: three pieces on each a-cell, two on b2-b4, one on c3 and c4
(Black the same on g, f and e). In diagrams stacks are written from the
bottom up, White in capitals: "SHC" is a Chariot on a Horse on a Shield.
A standard army has 9 Shields, 7 Horses and 4 Chariots. In Pari every
piece is written P (White) or p (Black).

White moves first; then the players take turns. Passing is not allowed.


MOVING
------

A piece moves in a straight line along one of the six directions, as far
as its reach allows. It may not pass over any piece or stack on the way,
but it may end its move on a stack of either colour; the arriving pieces
go on top. Pieces never leave the board.

Reach (standard): a Shield goes 1 cell, a Horse 1 or 2, a Chariot 1 to 3.
Reach (Pari): a stack you head goes as many cells as it holds pieces of
YOUR colour; the enemy pieces in it do not count. A lone piece goes 1
cell; your piece sitting on two enemy pieces also goes only 1 cell.

Leading and splitting: you may lift any number of pieces from the top of
a stack you head - the top piece alone, the top two, ..., or the whole
stack - and move them together. The top piece of the part that moves
"leads" it, and the leader's reach is what counts (standard: a Shield
carrying a Chariot still goes only 1 cell; Pari: the reach is taken from
the stack before the pieces are lifted). Captured enemy pieces can be
carried along like your own.

Capturing: whoever owns the top piece of a stack owns the stack; enemy
pieces under it are prisoners and cannot move on their own. Landing on an
enemy stack captures it. Prisoners are freed when their owner takes the
stack back.

Multiple moves: if, after a part of the stack has left, the piece now on
top of the origin cell is yours, you may move again from the same cell
(in any direction, with the reach of the new top piece), and so on. You
may also stop after any move. One origin cell per turn.

Release: if the part you lift leaves an ENEMY piece on top of the origin
cell, that piece is set free ("released") and your turn ends at once.
Emptying the origin cell also ends the turn.

Release at home: you may not release an enemy piece on a cell of your own
castle.

The three-piece limit: no stack may ever hold more than 3 pieces of one
colour. This counts for landing on your own stacks as well as for
captures. A stack holding 3 prisoners of yours therefore cannot be taken
by you at all: it is a "safe stack" for its owner until he splits it.
Example: with a black stack of two White Horses under a black Shield on
f2, a White stack Shield-Horse-Chariot on c4 may capture f2 with the
Chariot alone (c4:Cxf2): with the Horse as well f2 would hold four White
pieces, with all three five.


WINNING
-------

You win when you head 3 or more stacks (single pieces count) on cells of
the enemy castle. You also win when your opponent cannot make a legal move
when his turn comes - he heads no stack, or every move he could make would
break the three-piece limit or release at home.

Options, chosen when the game is set up:

  castle_win=immediate  (default) the castle win counts as soon as you end
                        a turn with 3 stacks in the enemy castle.
  castle_win=next_turn  the 3 stacks must still stand when your next turn
                        begins; your opponent gets one turn to break in.
  d4_opening=banned     Pari only (the Italian rules): White may not move
                        onto the centre cell d4 in the first turn.
  d4_opening=allowed    (default) no such restriction.


WRITING MOVES
-------------

A turn is written as the origin cell, a colon, and the moves from it
separated by commas. Each move is: the pieces that go, a mark, the target
cell.

Pieces (standard): the letters S, H, C from the top of the stack down,
your own pieces in capitals and your prisoners in small letters - Black
writes his own pieces in capitals too. "Hs" is your Horse leading a
captured Shield.
Pieces (Pari): the number of pieces that go; leave out a 1.
Marks: - onto an empty cell, + onto your own stack, x onto an enemy stack.

Examples:
  a1:C+b2,HS-c1     the Chariot joins b2, then Horse and Shield go to c1
                    (standard start: a1:C+b2,HS-c1 = a1Cb2HSc1)
  a1:C-d1,H-b1,S+b1 three moves from a1; the Shield joins its Horse
                    (standard start: a1:C-d1,H-b1,S+b1 = a1Cd1Hb1b1)
  c1:Cc-c4          a Chariot carries a captured Chariot to c4
  e4:Chsxc3         a Chariot with two prisoners captures c3
  b4:2-c5           Pari: the two pieces of b4 go to c5
                    (pari start: b4:2-c5 = b42c5)
  e3:+e5,xd4        Pari: one piece joins e5, the next captures d4
  a1:-d1,-b1,+b1    Pari: three moves from a1, one piece each
                    (pari start: a1:-d1,-b1,+b1 = a1d1b1b1)

Standard only: leaving out the pieces moves everything that is left on
the origin, so a1:C-d1,H-b1,+b1 is a1:C-d1,H-b1,S+b1 and a1:-d1 is
a1:CHS-d1 (standard start: a1:-d1 = a1:CHS-d1 = a1d1). In Pari a missing
count always means one piece.

Short form: every bit of punctuation may be dropped, so a1Cd1Hb1b1 is
a1:C-d1,H-b1,S+b1 and c1Ccc4 is c1:Cc-c4; in Pari b42c5 is b4:2-c5.
Capital cell letters, "x" or "X" for captures, and ! ? ; after a move are
all accepted. The server answers with the move in long form.

If a move is refused, the reply says why: for instance "a1 holds C, H, S
from the top; you wrote H", "b2 is your own stack: write + not x", "c3 is
in the way from c4 to c2", or "f2 would hold 4 white pieces".
"""

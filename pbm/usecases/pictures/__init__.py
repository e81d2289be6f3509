"""Board pictures, in one home: ``choice`` decides which mails show the board as a
picture and from which seat; ``raster`` makes the PNG a mail carries from the SVG that
the game draws (``pbm.games.picture``)."""

"""Game records, in one home: ``formats`` writes a board as a record (text, JSON, a
game's own), ``archive`` keeps finished games' records on disk, ``replay`` reads a
record back and replays it by the rules."""

"""The rules of Go as a value: ``GoState``, one position with all it takes to go on.

Black (seat 0) moves first. With a handicap, Black's first turn is the
placing of the handicap stones: a game with a handicap starts at ply 1
with the stones on the board and White to move, so that the seat to move
is always ``ply % 2``, as in every game here.

Play ends when both players pass in a row. Then comes the scoring phase:
pbm proposes the dead stones (GNU Go's ``final_status_list dead``, or its
own estimate: ``scoring``), and the players take turns answering:
``accept``; ``dead D4 E5`` or ``alive Q16``, which mark the chains with a
stone on those points and count as their maker's acceptance of the new
marking; or ``resume``, which goes back to play with the opponent of the
player who resumed to move (as in the Japanese rules, art. 9). An
``accept`` ends the game when the other player made or accepted the
marking it answers: the score (area scoring, ``scoring.Score``) decides.

A move that brings back a whole-board position seen before in the game is
refused (positional superko): the state keeps the Zobrist hash of every
position so far (``seen``), so nothing is replayed to judge a move.

Everything here is pure but two things, which ask GNU Go (``gnugo``, a
process of its own with a bounded time): the pass that ends play, for the
dead stones it proposes (unless ``Rules.program`` is empty: then, or when
GNU Go cannot answer, pbm's estimate proposes them), and ``computer_move``.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, fields, replace

from pbm.games import BadNotation, IllegalMove, Outcome
from pbm.games.go import gnugo
from pbm.games.go.board import (
    BLACK,
    EMPTY,
    WHITE,
    Suicide,
    chains,
    empty_grid,
    handicap_points,
    place,
    quiet,
    star_points,
    zobrist,
    zobrist_key,
)
from pbm.games.go.diagram import render
from pbm.games.go.notation import (
    ACCEPT,
    ALIVE,
    DEAD,
    PASS,
    RESUME,
    SCORING_WORDS,
    parse_marking,
    parse_point,
    point_name,
)
from pbm.games.go.picture import svg
from pbm.games.go.scoring import estimate_dead, marked_groups
from pbm.games.go.storage import dump
from pbm.games.go.values import OVER, PASSED, PLAY, SCORING, GoPosition, Rules

__all__ = ["OVER", "PASSED", "PLAY", "SCORING", "GoState", "Rules", "as_state", "start"]

COLOURS = (BLACK, WHITE)  # by seat
ESTIMATE = "pbm's estimate"


def as_state(position: GoPosition) -> GoState:
    """The game whose values ``position`` holds (``storage.load`` reads them)."""
    return GoState(*(getattr(position, f.name) for f in fields(position)))


def start(rules: Rules) -> GoState:
    """The empty board, or the handicap stones on it and White to move (ply 1)."""
    grid = list(empty_grid(rules.size))
    for p in handicap_points(rules.size, rules.handicap):
        grid[p] = BLACK
    text = "".join(grid)
    ply = 1 if rules.handicap else 0
    return GoState(rules, text, ply, (0, 0), frozenset({zobrist(text, rules.size)}))


def _propose(rules: Rules, grid: str) -> tuple[frozenset[int], str]:
    """The dead stones pbm proposes when play ends, and who proposes them."""
    if rules.program:
        try:
            return gnugo.dead_stones(grid, rules.size, rules.komi, rules.program), "GNU Go"
        except gnugo.GtpError:
            pass  # not installed, or no answer in time: pbm's own guess then
    return estimate_dead(grid, rules.size), ESTIMATE


@dataclass(frozen=True, slots=True)
class GoState(GoPosition):
    """A game of Go (``GoPosition``) and its rules: what a move does, what ends the game."""

    @property
    def outcome(self) -> Outcome | None:
        return self.score.outcome() if self.phase == OVER else None

    def time_out_outcome(self, seat: int) -> Outcome | None:
        """In the scoring phase the marking on the board stands: the score ends the game."""
        return self.score.outcome() if self.phase == SCORING else None

    def play(self, text: str) -> tuple[GoState, str]:
        words = text.split()
        if self.phase == OVER:
            raise IllegalMove(f"the game is over: {self.score.line()}")
        if not words:
            raise BadNotation("an empty move: write a point such as D4, or pass")
        head = words[0].lower()
        if self.phase == SCORING:
            return self._answer(words)
        if head in SCORING_WORDS:
            raise IllegalMove(
                f"{head}: the game is not being scored; that comes when both players have "
                "passed in a row"
            )
        if head == PASS and len(words) == 1:
            return self._pass(), PASS
        point = _point(text, words, self.size)
        return self._place(point), point_name(point, self.size)

    def _place(self, point: int) -> GoState:
        me = self.to_move
        name = point_name(point, self.size)
        there = self.grid[point]
        if there != EMPTY:
            raise IllegalMove(f"{name} is taken: a {_colour(there)} stone stands there")
        if point == self.ko:
            raise IllegalMove(
                f"ko: you cannot retake at once at {name}; play elsewhere first, then you may"
            )
        try:
            placed = place(self.grid, self.size, point, COLOURS[me])
        except Suicide:
            raise IllegalMove(
                f"suicide: a stone on {name} would have no liberty and capture nothing"
            ) from None
        h = zobrist(placed.grid, self.size)
        if h in self.seen:
            raise IllegalMove(
                f"positional superko: {name} would bring back a whole-board position "
                "seen before in this game"
            )
        taken = (placed.captured, 0) if me == 0 else (0, placed.captured)
        captures = (self.captures[0] + taken[0], self.captures[1] + taken[1])
        return replace(
            self,
            grid=placed.grid,
            ply=self.ply + 1,
            captures=captures,
            seen=self.seen | {h},
            passes=0,
            last=point,
            ko=placed.ko,
        )

    def _pass(self, propose: bool = True) -> GoState:
        """The state after a pass; the second in a row begins the scoring phase with the
        dead stones proposed (``propose`` False: none, for a count that needs no marking)."""
        passed = replace(self, ply=self.ply + 1, passes=self.passes + 1, last=PASSED, ko=None)
        if passed.passes < 2:
            return passed
        dead, proposer = _propose(self.rules, self.grid) if propose else (frozenset(), "")
        return replace(passed, phase=SCORING, dead=dead, accepted=None, proposer=proposer)

    def perft(self, depth: int) -> int:
        """The move sequences of length ``depth`` (the optional perft of the protocol),
        counted on the points: no notation written or read. The scoring phase counts
        the answers ``legal_moves`` lists, accept and resume, and is entered without
        asking anyone for the dead stones: the marking changes no count."""
        if depth <= 0:
            return 1
        if self.phase == OVER:
            return 0
        if self.phase == SCORING:
            answers = (ACCEPT, RESUME)
            if depth == 1:
                return len(answers)
            return sum(self._answer([word])[0].perft(depth - 1) for word in answers)
        points = self._legal_points()
        if depth == 1:
            return len(points) + 1  # and the pass
        count = sum(self._place(p).perft(depth - 1) for p in points)
        return count + self._pass(propose=False).perft(depth - 1)

    def _answer(self, words: list[str]) -> tuple[GoState, str]:
        """A move of the scoring phase."""
        head = words[0].lower()
        me = self.to_move
        if head in (ACCEPT, RESUME) and len(words) > 1:
            raise BadNotation(f"{head} takes nothing after it")
        if head == ACCEPT:
            if self.accepted == 1 - me:
                return replace(self, ply=self.ply + 1, phase=OVER), ACCEPT
            return replace(self, ply=self.ply + 1, accepted=me), ACCEPT
        if head == RESUME:
            resumed = replace(self, ply=self.ply + 1, phase=PLAY, passes=0, last=None)
            return replace(resumed, dead=frozenset(), accepted=None, proposer=""), RESUME
        if head in (DEAD, ALIVE):
            return self._mark(words)
        if head != PASS:
            _point(" ".join(words), words, self.size)  # BadNotation for what is no move at all
        raise IllegalMove(
            "play has ended: answer accept, change the dead stones with dead D4 or alive D4, "
            "or go back to play with resume"
        )

    def _mark(self, words: list[str]) -> tuple[GoState, str]:
        marking = parse_marking(words, self.size)
        names = [point_name(p, self.size) for p in marking.points]
        for p, name in zip(marking.points, names, strict=True):
            if self.grid[p] == EMPTY:
                raise IllegalMove(f"{marking.word} {name}: there is no stone on {name}")
        groups = marked_groups(self.grid, self.size, marking.points)
        dead = self.dead | groups if marking.word == DEAD else self.dead - groups
        if dead == self.dead:
            raise IllegalMove(
                f"the stones at {' '.join(names)} are marked {marking.word} already: "
                "answer accept if you agree with the marking"
            )
        state = replace(self, ply=self.ply + 1, dead=dead, accepted=self.to_move)
        return state, f"{marking.word} {' '.join(names)}"

    def legal_moves(self) -> list[str]:
        if self.phase == OVER:
            return []
        if self.phase == SCORING:
            return [ACCEPT, RESUME]
        return sorted([*(point_name(p, self.size) for p in self._legal_points()), PASS])

    def _legal_points(self) -> list[int]:
        h = zobrist(self.grid, self.size)
        return [p for p, stone in enumerate(self.grid) if stone == EMPTY and self._allows(p, h)]

    def _allows(self, point: int, h: int) -> bool:
        """Whether a stone of the player to move may go on the empty ``point`` (``h``: this
        position's hash): at once for a quiet point (``board.quiet``), else by placing it."""
        colour = COLOURS[self.to_move]
        if point != self.ko and quiet(self.grid, self.size, point, colour):
            return h ^ zobrist_key(self.size, point, colour) not in self.seen
        try:
            self._place(point)
        except IllegalMove:
            return False
        return True

    def legal_moves_text(self) -> str:
        """For the ``moves`` command: the empty points but those refused, or the scoring
        phase's answers."""
        if self.phase == OVER:
            return "None: the game is over.\n"
        if self.phase == SCORING:
            return (
                "accept (agree to the dead stones marked), resume (go back to play),\n"
                "dead POINTS or alive POINTS (mark the chains on those points dead or alive).\n"
            )
        empty = [p for p, s in enumerate(self.grid) if s == EMPTY]
        legal = set(self._legal_points())
        refused = [point_name(p, self.size) for p in empty if p not in legal]
        if not refused:
            return f"pass, or a stone on any of the {len(empty)} empty points.\n"
        return (
            f"pass, or a stone on any of the {len(empty)} empty points but "
            f"{', '.join(refused)} (ko, superko or suicide).\n"
        )

    def example_move(self) -> str | None:
        if self.phase == OVER:
            return None
        if self.phase == SCORING:
            return ACCEPT
        h = zobrist(self.grid, self.size)
        for p in (*star_points(self.size), *range(self.size * self.size)):
            if self.grid[p] == EMPTY and self._allows(p, h):
                return point_name(p, self.size)
        return PASS

    def claim_draw(self) -> Outcome:
        raise IllegalMove(
            "Go has no draw to claim: a game is drawn by agreement (offer a draw), or by an "
            "equal score when the komi is a whole number"
        )

    def diagram(self, seat: int | None = None, ended: str | None = None) -> str:
        return render(self, ended)

    def picture(self, seat: int = 0, alt: str = "", last: str = "") -> str:
        """The board as SVG (the same from both seats: a Go board is not turned round)."""
        return svg(self, alt)

    def dump(self) -> str:
        return dump(self)

    def computer_move(self, level: int, seed: int, seconds: float) -> str:
        """GNU Go's move at ``level`` (``gnugo.LEVELS``), the first of its candidates that
        these rules allow (it knows no ko); in the scoring phase, the answer of
        ``computer_answer``."""
        if self.phase == SCORING:
            return self.computer_answer(seconds)
        began = time.monotonic()
        colour, h = COLOURS[self.to_move], zobrist(self.grid, self.size)
        ask = functools.partial(
            gnugo.candidates, self.grid, self.size, self.rules.komi, colour, level, seed
        )
        found = ask(seconds, self.rules.program)
        if not self._allowed(found[0], h):
            # A ko GNU Go does not know of (it is given the stones, not the game): the
            # moves it weighed, in its order.
            left = max(seconds - (time.monotonic() - began), 1.0)
            found = ask(left, self.rules.program, weighed=True)
        return next((move for move in found if self._allowed(move, h)), PASS)

    def _allowed(self, move: str, h: int) -> bool:
        if move == PASS:
            return True
        point = parse_point(move, self.size)
        return self.grid[point] == EMPTY and self._allows(point, h)

    def computer_answer(self, seconds: float) -> str:
        """The computer in the scoring phase: ``accept`` the marking unless GNU Go sees its
        own chains marked dead that live, or the opponent's marked alive that are dead
        (then it marks them so); ``accept`` too when GNU Go cannot say."""
        try:
            view = gnugo.dead_stones(
                self.grid,
                self.size,
                self.rules.komi,
                self.rules.program,
                min(seconds, gnugo.DEAD_STONES_SECONDS),
            )
        except gnugo.GtpError:
            return ACCEPT
        mine = COLOURS[self.to_move]
        wrongly_dead = {p for p in self.dead - view if self.grid[p] == mine}
        wrongly_alive = {p for p in view - self.dead if self.grid[p] != mine}
        for word, points in ((ALIVE, wrongly_dead), (DEAD, wrongly_alive)):
            if points:
                heads = sorted(min(c) for c in chains(self.grid, self.size) if c & points)
                return f"{word} " + " ".join(point_name(p, self.size) for p in heads)
        return ACCEPT


def _point(text: str, words: list[str], size: int) -> int:
    """The point of a move written in one word or several (``D 4``, as a reply may split it)."""
    try:
        return parse_point("".join(words), size)
    except BadNotation:
        if len(words) == 1:
            raise
        raise BadNotation(
            f"{text.strip()!r} is not a move: write a point such as D4 or Q16, or pass"
        ) from None


def _colour(stone: str) -> str:
    return "black" if stone == BLACK else "white"

"""Game records: read them as published (numbered moves, comments, a result) and replay them.

A record may start with PGN-like tag lines (``[Game "TITLE"]``,
``[Variant "VARIANT"]``, ``[Option "KEY=VALUE"]``, ``[Result "1-0"]``); then
numbered moves (``1. MOVE MOVE``, ``12. ... MOVE``), comments in parentheses
or braces, and at the end a result: ``1-0``, ``0-1``, ``1/2-1/2``, or words
such as "Black resigns", "Weiß gibt auf", "Il bianco concede". What is a
move and how the seats are called in words is the game's to say
(``Game.looks_like_move``, ``Game.seat_words``). A game with a record
format of its own (``Game.record_formats``) reads the records that format
recognizes (``RecordFormat.recognizes_text``: an SGF game tree; a format
without it, every record of its game: PGN). Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from pbm import games
from pbm.games import (
    RESULTS,
    BadOption,
    Game,
    GameState,
    IllegalMove,
    Outcome,
    ReadRecord,
    Result,
    Termination,
)

_TAG = re.compile(r'^\s*\[\s*(\w+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')
_NUMBER = re.compile(r"^(\d+)\.(\.\.)?$")
_NUMBER_PREFIX = re.compile(r"^(\d+)\.(\.\.)?(?=[^\s.])")
# A record's result, as written -> as pbm writes it (``Outcome.result``).
_RESULT_TOKEN: dict[str, Result] = {**{r.value: r for r in Result}, "½-½": Result.DRAW}
_GIVE_UP_WORDS = ("resign", "gibt auf", "concede", "abandon", "aufgegeben")


class RecordError(ValueError):
    """A record that cannot be read or replayed; says where and why."""


@dataclass(frozen=True, slots=True)
class RecordMove:
    """One turn of a record: its number, the side (0 White, 1 Black), the text, a comment."""

    number: int
    side: int
    text: str
    comment: str = ""


def _json_record(text: str, game: str | None) -> Record:
    """The JSON record (``{"tags": {...}, "moves": [{"ply", "notation", ...}]}``)."""
    try:
        data = json.loads(text)
        tags = {str(k): str(v) for k, v in data.get("tags", {}).items()}
        entries = list(data.get("moves", []))
        moves = tuple(
            RecordMove(
                (int(e["ply"]) + 1) // 2,
                (int(e["ply"]) + 1) % 2,
                str(e["notation"]),
                str(e.get("comment") or ""),
            )
            for e in entries
        )
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise RecordError(f"not a JSON game record: {exc}") from None
    rules = game_of(tags, game)
    result = _RESULT_TOKEN.get(tags.get("Result", ""))
    return Record(tags, moves, result, game=rules.name, termination=tags.get("Termination") or None)


def game_of(tags: dict[str, str], game: str | None = None, text: str = "") -> Game:
    """The game a record is of: ``game``, else its ``Game`` tag (name or title), else the
    game whose own record format recognizes its text (an SGF's ``GM``) or its tags, else
    the first game this server runs. ``RecordError`` for a game there is none of."""
    wanted = game or tags.get("Game")
    if wanted is None:
        for name in games.names():
            own = games.record_formats(games.get(name))
            if any(games.knows_text(f) and games.recognizes_text(f, text) for f in own):
                return games.get(name)
        for name in games.names():
            if any(f.recognizes(tags) for f in games.record_formats(games.get(name))):
                return games.get(name)
        return games.get(games.names()[0])
    for name in games.names():
        found = games.get(name)
        if wanted.lower() in (found.name.lower(), found.title.lower()):
            return found
    raise RecordError(f"no game {wanted!r} here; games: {', '.join(games.names())}")


@dataclass(frozen=True, slots=True)
class Record:
    tags: dict[str, str]
    moves: tuple[RecordMove, ...]
    result: str | None  # "1-0", "0-1", "1/2-1/2" or None
    result_words: str = ""
    game: str = ""  # the game's name
    termination: str | None = None  # how it ended, as ``Outcome.termination`` words it
    result_stands: bool = False  # ``ReadRecord.result_stands``: a count the moves stop before

    @property
    def variant(self) -> str | None:
        return self.tags.get("Variant")

    def options(self) -> dict[str, str]:
        """Game options from ``[Option "k=v"]`` tags and tags named after an option."""
        return _tag_options(games.get(self.game) if self.game else None, self.tags)


def _tag_options(game: Game | None, tags: dict[str, str]) -> dict[str, str]:
    declared = {o.name for o in game.options} if game is not None else set()
    opts: dict[str, str] = {}
    for key, value in tags.items():
        if key.lower() in declared:
            opts[key.lower()] = value
        elif key.lower() == "options" or key.lower() == "option":
            for part in re.split(r"[\s,;]+", value):
                if "=" in part:
                    k, _, v = part.partition("=")
                    opts[k] = v
    return opts


def _start_ply(game: Game, tags: dict[str, str], options: dict[str, str] | None) -> int:
    """The turns the game has had before a record's first move (Go's handicap stones are
    Black's first turn: 1), by the record's tags and ``options``."""
    try:
        opts = {**_tag_options(game, tags), **(options or {})}
        return game.new(tags.get("Variant"), opts).ply
    except (BadOption, ValueError):
        return 0  # the replay says what is wrong with them


def _strip_comments(text: str) -> list[tuple[str, str]]:
    """Split text into (kind, content) pieces: ('text', ...) or ('comment', ...)."""
    out: list[tuple[str, str]] = []
    depth = 0
    buf: list[str] = []
    closing = {"(": ")", "{": "}"}
    stack: list[str] = []
    for ch in text:
        if ch in closing:
            if depth == 0:
                out.append(("text", "".join(buf)))
                buf = []
            else:
                buf.append(ch)
            depth += 1
            stack.append(closing[ch])
        elif depth and ch == stack[-1]:
            depth -= 1
            stack.pop()
            if depth == 0:
                out.append(("comment", "".join(buf)))
                buf = []
            else:
                buf.append(ch)
        else:
            buf.append(ch)
    out.append(("comment" if depth else "text", "".join(buf)))
    return out


def _result_from_words(words: str, game: Game) -> str | None:
    low = words.lower()
    first, second = (any(w in low for w in seat) for seat in game.seat_words)
    if not any(w in low for w in _GIVE_UP_WORDS):
        if "wins" in low or "gewinnt" in low or "vince" in low:
            if first:
                return RESULTS[0]
            if second:
                return RESULTS[1]
        return None
    if first:
        return RESULTS[1]
    if second:
        return RESULTS[0]
    return None


def parse_record(
    text: str, game: str | None = None, options: dict[str, str] | None = None
) -> Record:
    """Read a record (of ``game``, else the game its tags name): the text record, the JSON
    record ``pbm archive --format json`` writes, or a game's own format that recognizes
    it (PGN, SGF); ``RecordError`` when it is none of them or the move numbers do not add
    up. ``options``: the game's options where the record does not say them."""
    if text.lstrip().startswith("{"):
        return _json_record(text, game)
    tags: dict[str, str] = {}
    body_lines = []
    for ln in text.splitlines():
        m = _TAG.match(ln)
        if m:
            tags[m.group(1)] = m.group(2).replace('\\"', '"')
        else:
            body_lines.append(ln)
    rules = game_of(tags, game, text)
    own = [f for f in games.record_formats(rules) if games.recognizes_text(f, text)]
    if own:
        try:
            return _own_record(own[0].read(text), rules)
        except ValueError as exc:
            raise RecordError(str(exc)) from None
    body = "\n".join(body_lines).replace("*", " ")
    moves: list[RecordMove] = []
    result: str | None = _RESULT_TOKEN.get(tags.get("Result", ""))
    trailing: list[str] = []
    start = ply = _start_ply(rules, tags, options)
    # How the record numbers its moves: in pairs (chess, the published Accasta games) or
    # every turn (pbm's Accasta records, as its board mails do); told by the first
    # number after the first move, or by a second seat's move without one (pairs).
    per_turn: bool | None = None
    numbered = False  # a move number came just before this token
    for kind, content in _strip_comments(body):
        if kind == "comment":
            if moves:
                last = moves[-1]
                comment = f"{last.comment} {content.strip()}".strip()
                moves[-1] = RecordMove(last.number, last.side, last.text, comment)
            continue
        for raw_token in content.split():
            token = raw_token
            m = _NUMBER_PREFIX.match(token)
            if m:  # "1.a1:C-d1" written without a space
                token = token[m.end() :]
                raw_number = m.group(0)
            else:
                raw_number = token
            nm = _NUMBER.match(raw_number)
            if nm:
                number, dots = int(nm.group(1)), bool(nm.group(2))
                if per_turn is None and ply > start:
                    per_turn = number == ply + 1 != ply // 2 + 1 and not dots
                elif per_turn is None and start and number == ply + 1 != ply // 2 + 1:
                    per_turn = True  # the first move after turns of no move (a handicap)
                expected = ply + 1 if per_turn else ply // 2 + 1
                numbered = True
                if number != expected:
                    side = rules.seat_names[ply % 2]
                    raise RecordError(
                        f"move number {number}{'...' if dots else '.'} found where "
                        f"move {expected} {side} was due"
                    )
                if token == raw_number:
                    continue
            if token in ("...", "…"):
                continue
            if token in _RESULT_TOKEN:
                ended = _RESULT_TOKEN[token]
                if result is not None and result != ended:
                    raise RecordError(f"the Result tag says {result}, the record ends with {token}")
                result = ended
                continue
            if token == "*":
                continue
            if rules.looks_like_move(token) and not trailing:
                if ply % 2 == 1 and not numbered and per_turn is None:
                    per_turn = False
                numbered = False
                number = ply + 1 if per_turn else ply // 2 + 1
                moves.append(RecordMove(number, ply % 2, token.rstrip(";,")))
                ply += 1
            else:
                trailing.append(token)
    words = " ".join(trailing)
    if result is None:
        result = _result_from_words(words, rules)
    return Record(tags, tuple(moves), result, words, rules.name, tags.get("Termination") or None)


def _own_record(read: ReadRecord, rules: Game) -> Record:
    """A record as the game's own format read it, for ``replay``."""
    moves = tuple(
        RecordMove(games.move_number(rules, m.ply), (m.ply - 1) % 2, m.notation, m.comment)
        for m in read.moves
    )
    return Record(
        dict(read.tags),
        moves,
        read.result,
        "",
        rules.name,
        read.termination,
        read.result_stands,
    )


def _claimed(state: GameState, termination: str) -> Outcome | None:
    """The draw ``termination`` names if it could be claimed at the end (threefold...)."""
    try:
        claimed = state.claim_draw()
    except IllegalMove:
        return None
    return claimed if claimed.termination == termination else None


@dataclass
class Replay:
    """The outcome of replaying a record."""

    state: GameState
    canonical: list[str] = field(default_factory=list)
    result: str | None = None  # "1-0" / "0-1" / "1/2-1/2" / None while the game goes on
    termination: str | None = None


def replay(
    record: Record,
    game: str | None = None,
    variant: str | None = None,
    options: dict[str, str] | None = None,
) -> Replay:
    """Play every move of ``record``; ``RecordError`` names the first illegal one.

    Variant and options come from the record's tags unless given here. The
    result is the rules' verdict when the game ended on the board, else the
    record's own result (a resignation, a forfeit).
    """
    g = game_of(record.tags, game or record.game or None)
    opts = record.options()
    opts.update(options or {})
    state = g.new(variant or record.variant, opts)
    out = Replay(state)
    for mv in record.moves:
        side = g.seat_names[mv.side]
        if state.outcome is not None:
            raise RecordError(f"move {mv.number} {side} ({mv.text}): the game was already over")
        try:
            state, canonical = state.play(mv.text)
        except IllegalMove as exc:
            raise RecordError(f"move {mv.number} {side} ({mv.text}): {exc}") from None
        out.canonical.append(canonical)
    out.state = state
    outcome: Outcome | None = state.outcome
    term = record.termination
    stands = record.result_stands and record.result is not None
    if outcome is None and term is not None and term not in tuple(Termination) and not stands:
        outcome = _claimed(state, term)
        if outcome is None:
            raise RecordError(
                f"the record says the game ended by {term}, but after its moves the game goes on"
            )
    if outcome is not None:
        out.result = outcome.result()
        out.termination = outcome.termination
        if record.result is not None and record.result != out.result:
            raise RecordError(
                f"the record says {record.result}, but the moves end with "
                f"{out.result} ({outcome.termination})"
            )
    else:
        out.result = record.result
        if term is None and record.result is not None:
            term = Termination.AGREEMENT if record.result == Result.DRAW else Termination.RESIGN
        out.termination = term
    return out

"""Issue 37 item 5: the verbs a reply may hold come from one table, ``pbm.verbs``.

Every by-reply command of the mail language is declared with its verb (its
words, help and reply form are the verb's), every verb has its command, and
the texts that tell a reader what his reply may hold (the board mail, the
answer to a reply with no command, a follower's refusal, a challenge) are
made from the table: no list of verbs is written by hand anywhere else.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import accepted

import pbm
from pbm import verbs
from pbm.commands import ALL, parse_reply
from pbm.refusals import Refused
from pbm.usecases import unit
from pbm.usecases.auth import Password, Who
from pbm.usecases.challenges import Challenge
from pbm.usecases.moves import Move
from pbm.usecases.proposals import Undo
from pbm.usecases.queries.reading import NoCommand, Show
from pbm.usecases.site import Site
from pbm.verbs import VERBS, Reader

PACKAGE = Path(pbm.__file__).parent
ALICE, BOB = "alice@example.org", "bob@example.org"


def test_every_reply_command_names_its_verb_and_every_verb_has_one() -> None:
    replying = [c for c in ALL if c.by_reply]
    assert [c.verb for c in replying if c.verb not in VERBS] == []
    assert sorted(v.name for v in VERBS) == sorted(c.name for c in replying)
    for command in replying:
        verb = command.verb
        assert verb is not None
        assert (command.words, command.help, command.per_game) == (verb.words, verb.hint, True)
        # The reply form help shows is the one the grammar reads.
        assert verb.args == " ".join(a.name for a in command.replied), verb.name
    assert all(c.verb is None for c in ALL if not c.by_reply)


@pytest.mark.parametrize("verb", [v for v in VERBS if not v.bare], ids=lambda v: v.name)
def test_a_reply_reads_each_verb_by_each_of_its_words(verb: verbs.Verb) -> None:
    for word in verb.words:
        line = f"{word} a1:C-d1" if verb is verbs.QUEUE else word
        found = parse_reply(line, lambda w: False)
        assert found is not None and found.command.verb is verb, word


def test_every_reader_may_send_something_and_every_verb_has_a_reader() -> None:
    assert all(verbs.sendable(reader) for reader in Reader)
    assert all(verb.readers for verb in VERBS)


VERB_WORDS = {w for v in VERBS for w in v.words}


def _strings(path: Path) -> Iterator[tuple[int, str]]:
    """The string literals of a module, docstrings aside; a tuple, list or set of verb
    words as one string of them joined by commas."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                yield node.lineno, node.value
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(items) > 1 and all(str(i).lower() in VERB_WORDS for i in items):
                yield node.lineno, ", ".join(str(i) for i in items)


def _verb_runs() -> re.Pattern[str]:
    """Two verb words or more in a row, as a list writes them ("accept or reject")."""
    words = sorted(VERB_WORDS, key=len, reverse=True)
    word = rf"\b(?:{'|'.join(words)})\b"
    return re.compile(rf"{word}(?:\s*(?:,|/|\bor\b|\band\b)\s*{word})+", re.IGNORECASE)


def test_no_list_of_verbs_is_written_by_hand() -> None:
    runs = _verb_runs()
    assert runs.search("By reply you can also send resign, undo, accept, reject, show")
    assert runs.search(", ".join(("unsubscribe", "chat", "show")))
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {match.group()!r}"
        for folder in ("usecases", "mail", "commands", "runners", "web", "cli")
        for path in sorted((PACKAGE / folder).glob("*.py"))
        for line, text in _strings(path)
        for match in runs.finditer(text)
    ]
    assert found == []


# --- the texts made from the table ----------------------------------------------------------


def _refusal(site: Site, action: NoCommand) -> str:
    with pytest.raises(Refused) as refused:
        unit.run(site, action)
    return " ".join(refused.value.message.split())


def _board_mail(site: Site, board: int, to: str) -> str:
    (reply,) = unit.run(site, Show(board, to))
    return " ".join(reply.body.split())


def test_the_board_mail_and_a_reply_with_no_command_list_the_same_verbs(site: Site) -> None:
    """The board mail's list used to leave out draw, claim and record."""
    board = accepted(site, Challenge("chess", "alice", "bob", sender=ALICE))
    to_move = "resign, draw, claim, undo, accept, reject, cancel, show, history, moves, record"
    assert f"By reply you can also send {to_move} or chat [MESSAGE]." in _board_mail(
        site, board, ALICE
    )
    assert f"or {to_move} or chat [MESSAGE]." in _refusal(site, NoCommand(board, "alice"))
    waiting = "resign, draw, undo, accept, reject, cancel, show, history, moves, record"
    assert f"By reply you can also send {waiting} or chat [MESSAGE]." in _board_mail(
        site, board, BOB
    )
    queue = "queue [MOVE [if THEIR-MOVE]|if THEIR-MOVE then MOVE...|show|clear]"
    assert f"may hold {queue}, {waiting} or chat" in _refusal(site, NoCommand(board, "bob"))


def test_a_game_without_draws_lists_no_draw_verbs(site: Site) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    mail = _board_mail(site, board, ALICE)
    assert "By reply you can also send resign, undo, accept," in mail
    assert "draw" not in mail and "claim" not in mail
    assert "draw" not in _refusal(site, NoCommand(board, "alice"))


def test_a_follower_and_the_challenged_are_told_their_own_verbs(site: Site) -> None:
    board = accepted(site, Challenge("accasta", "alice", "bob", sender=ALICE))
    follower = "show, history, moves, record, chat [MESSAGE], unsubscribe or subscribe"
    assert f"may hold {follower}." in _refusal(site, NoCommand(board, "carol"))
    (sent, *_) = unit.run(site, Challenge("accasta", "carol", "alice", sender="carol@example.org"))
    waiting = sent.board
    assert waiting is not None
    assert "may hold accept or reject." in _refusal(site, NoCommand(waiting, "alice"))
    assert "may hold cancel." in _refusal(site, NoCommand(waiting, "carol"))


def test_an_undo_asked_names_the_answers_from_the_table(site: Site) -> None:
    board = accepted(site, Challenge("chess", "alice", "bob", sender=ALICE))
    alice = Who("alice", Password("pw"))
    unit.run(site, Move(board, "e4"), alice)
    asked = unit.run(site, Undo(board), alice)
    to_bob = next(r for r in asked if r.to == BOB)
    assert "Reply to this mail with accept or reject, or send:" in " ".join(to_bob.body.split())

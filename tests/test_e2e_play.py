"""End to end: a real ``pbm serve``, real SMTP in and out, whole games played by mail."""

from __future__ import annotations

import re
import signal
from email.message import EmailMessage
from pathlib import Path

import pytest
from mailserver import (
    PbmServer,
    Sink,
    about,
    board_number,
    body_of,
    challenge_accepted,
    reply_to,
    sign_up,
)

from pbm.games.accasta import ACCASTA, parse_turn, turn_to_text
from pbm.usecases.records.replay import parse_record

pytestmark = pytest.mark.e2e

DATA = Path(__file__).parent / "data"
ALICE = "alice@example.org"
BOB = "bob@example.net"


def signup_both(server: PbmServer, sink: Sink) -> None:
    sign_up(server, sink, "alice", ALICE, "pw-a")
    sign_up(server, sink, "bob", BOB, "pw-b")


def challenge(server: PbmServer, sink: Sink, variant: str = "") -> int:
    extra = f" --variant={variant}" if variant else ""
    mail = challenge_accepted(server, sink, ALICE, f"accasta challenge alice bob{extra}", BOB)
    sink.wait_for(BOB, "alice to move")
    return board_number(mail)


def test_signup_challenge_and_show(server: PbmServer, sink: Sink) -> None:
    signup_both(server, sink)
    board = challenge(server, sink)
    server.send(BOB, f"accasta show {board}")
    shown = sink.wait_for(BOB, f"Board {board}")
    text = body_of(shown)
    assert "SHC SHC SHC SHC" in text
    assert shown["Auto-Submitted"] == "auto-replied"
    assert shown["In-Reply-To"]
    # SIGTERM stops it cleanly; a restart carries on with the same boards.
    assert server.stop(signal.SIGTERM) == 0
    server.start()
    server.send(BOB, f"accasta history {board}")
    assert "No moves yet." in body_of(sink.wait_for(BOB, f"Board {board} - history"))
    assert server.stop(signal.SIGINT) == 0


@pytest.mark.parametrize(
    ("record", "variant"), [("sample_standard.txt", ""), ("sample_pari.txt", "pari")]
)
def test_sample_game_in_three_modes(
    server: PbmServer, sink: Sink, record: str, variant: str
) -> None:
    """Every move of a published game, alternating subject, body and reply mode."""
    signup_both(server, sink)
    board = challenge(server, sink, variant)
    players = [("alice", ALICE, "pw-a"), ("bob", BOB, "pw-b")]
    moves = parse_record((DATA / record).read_text()).moves
    last_mail: dict[str, EmailMessage | None] = {ALICE: None, BOB: None}
    state = ACCASTA.new(variant or None)
    for i, mv in enumerate(moves):
        uid, addr, pw = players[i % 2]
        # Every other move in the short form with no punctuation (a1Cd1Hb1b1).
        text = mv.text
        if i % 4 >= 2:
            text = turn_to_text(state.position, parse_turn(state.position, mv.text), short=True)
        state, _ = state.play(mv.text)
        mode = i % 3
        if mode == 0:
            server.send(addr, f"accasta move {board} {uid} {pw} {text}#{i + 1}", "good luck")
        elif mode == 1:
            server.send(addr, "my move", f"Hello!\naccasta move {board} {uid} {pw} {text}\n")
        else:
            prev = last_mail[addr]
            assert prev is not None
            quoted = "\n".join("> " + ln for ln in body_of(prev).splitlines())
            server.send(
                addr,
                f"Re: {prev['Subject']}",
                f"{text}\n\nOn Sunday, pbm wrote:\n{quoted}\n",
                to=reply_to(prev),
                headers={"In-Reply-To": str(prev["Message-ID"])},
            )
        other = players[(i + 1) % 2]
        for a in (ALICE, BOB):
            got = sink.wait_for(a, re.compile(rf"Board {board} - ({other[0]} to move|\w+ wins)"))
            last_mail[a] = got
        assert f"Move {i + 1}, {uid} " in body_of(got)
        canonical = mv.text.translate(str.maketrans({"–": "-", "×": "x"})).strip("!?;")
        assert canonical.replace("?", "").replace("!", "") in body_of(got)
    # Resignation by the side the record says gave up.
    loser = players[len(moves) % 2]
    server.send(loser[1], f"accasta resign {board} {loser[0]} {loser[2]}")
    final = sink.wait_for(ALICE, f"Board {board}")
    assert "wins" in about(final)

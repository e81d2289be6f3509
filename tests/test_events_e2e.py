"""End to end: a league over real SMTP with a real ``pbm serve``, through two season
changes, time moved by ``pbm tick --now`` (nothing sleeps for time).

Eight players join the league of divisions of 4 by mail; the admin runs the first
season by hand. Division 1's results are p4 > p3 > p2 > p1, division 2's p5 > p6 >
p7, and p8 never moves: he loses his games on time, is withdrawn, and drops out.
p9 joins by mail while season 1 is played. When season 1's last game ends, the timers
make season 2: p1 and p2 move down, p5 and p6 move up, p8 is gone and p9 is placed in
the lowest division with room. Season 2 is played out and a tick makes season 3.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from mailserver import PbmServer, Sink, body_of, sign_up

pytestmark = pytest.mark.e2e

OPENING = "a4:C+b4,H-c6,S-b5"  # a first move of White's
LEAGUE = "Accasta league (standard)"


def addr(uid: str) -> str:
    return f"{uid}@example.org"


def flat(text: str) -> str:
    return " ".join(text.split())


def iso(t: datetime) -> str:
    return t.isoformat(timespec="seconds")


def boards(server: PbmServer) -> list[dict[str, object]]:
    out = json.loads(server.pbm("game", "list", "--status", "all", "--json"))
    assert isinstance(out, list)
    return out


def division_of(mail_body: str) -> int:
    m = re.search(r"season \d+, division (\d+)", mail_body)
    assert m is not None, mail_body
    return int(m.group(1))


def play_out(
    server: PbmServer, sink: Sink, order: list[str], active: list[dict[str, object]]
) -> None:
    """Each board among ``order``'s players resigned by mail by the one lower in
    ``order``; back when each resignation's mail has come."""
    resigned = []
    for b in active:
        white, black = str(b["white"]), str(b["black"])
        if white in order and black in order:
            loser = white if order.index(white) > order.index(black) else black
            server.send(addr(loser), f"accasta resign {b['board']} {loser} pw")
            resigned.append((loser, b["board"]))
    for loser, board in resigned:
        sink.wait_for(addr(loser), re.compile(rf"Board {board} - (White|Black) wins"))


def test_a_league_runs_two_seasons_with_promotion_relegation_a_drop_and_a_newcomer(
    server: PbmServer, sink: Sink
) -> None:
    players = [f"p{i}" for i in range(1, 10)]
    for uid in players:
        sign_up(server, sink, uid, addr(uid), "pw")
    server.pbm("league", "create", "accasta", "--size", "4", "--time", "classic 2/3")
    for uid in players[:8]:
        server.send(addr(uid), f"league join accasta {uid} pw")
        joined = sink.wait_for(addr(uid), f"{LEAGUE} - joined")
        assert "top 2 of a division move up" in flat(body_of(joined))
    start = datetime.now(UTC)
    server.pbm("league", "season", "accasta")
    where = {}
    for uid in players[:8]:
        mail = sink.wait_for(addr(uid), "started: your 3 boards")
        where[uid] = division_of(body_of(mail))
        assert "season 1" in str(mail["Subject"])
    assert [where[p] for p in players[:8]] == [1, 1, 1, 1, 2, 2, 2, 2]
    # A newcomer while season 1 is played, and the mail answers for a stranger's errors.
    server.send(addr("p9"), "league join accasta p9 pw")
    sink.wait_for(addr("p9"), f"{LEAGUE} - joined")
    server.send(addr("p9"), "league join accasta p9 pw")
    again = sink.wait_for(addr("p9"), "")
    assert "You are in the Accasta league (standard) already" in flat(body_of(again))
    # The rule of leaving, said before anyone joins.
    server.send(addr("p9"), "help tournament")
    told = flat(body_of(sink.wait_for(addr("p9"), "pbm - help tournament")))
    assert "fewer than half of his games, all of them are struck" in told
    # Division 1 played out by resignations; division 2 too, but p8 never moves.
    active = [b for b in boards(server) if b["status"] == "active"]
    play_out(server, sink, ["p4", "p3", "p2", "p1"], active)
    play_out(server, sink, ["p5", "p6", "p7"], active)
    for b in active:
        if b["black"] == "p8":  # his opponent moves first; then p8's clock runs
            server.send(
                addr(str(b["white"])), f"accasta move {b['board']} {b['white']} pw {OPENING}"
            )
            sink.wait_for(addr("p8"), f"Board {b['board']} - p8 to move")
    server.pbm("tick", "--now", iso(start + timedelta(days=4)))
    # p8 lost on time and is withdrawn; each player has his division's final standings.
    withdrawn = sink.wait_for(addr("p8"), "withdrawn")
    assert "lost 2 games on time" in flat(body_of(withdrawn))
    dropped = sink.wait_for(addr("p8"), f"{LEAGUE} - left")
    assert "more than half: you drop out" in flat(body_of(dropped))
    final = body_of(sink.wait_for(addr("p1"), "final standings"))
    assert "Won by p4" in flat(final) and "Pts  W     SB   DE" in final
    # Season 2: p1 and p2 moved down, p5 and p6 up, p9 placed, p8 gone.
    for uid in ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p9"]:
        mail = sink.wait_for(addr(uid), "season 2, division")
        where[uid] = division_of(body_of(mail))
    assert {p for p in where if where[p] == 1 and p != "p8"} == {"p3", "p4", "p5", "p6"}
    assert {p for p in where if where[p] == 2 and p != "p8"} == {"p1", "p2", "p7", "p9"}
    # Season 2 played out, no timeouts: the timers make season 3 (``pbm tick`` now, or
    # the server's own, whichever comes first; not days ahead, which would end season
    # 3's new boards on time).
    active = [b for b in boards(server) if b["status"] == "active"]
    assert len(active) == 12
    play_out(server, sink, ["p6", "p5", "p4", "p3"], active)  # p3 and p4 move down
    play_out(server, sink, ["p9", "p7", "p2", "p1"], active)  # p9 and p7 move up
    server.pbm("tick")
    season3 = {}
    for uid in ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p9"]:
        season3[uid] = division_of(body_of(sink.wait_for(addr(uid), "season 3, division")))
    assert {p for p, d in season3.items() if d == 1} == {"p5", "p6", "p7", "p9"}
    listing = server.pbm("league", "list")
    assert re.search(r"accasta\s+standard\s+3\s+8\s", listing), listing

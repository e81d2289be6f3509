"""The pure core of events: Berger pairings, standings and tiebreaks, the withdrawal rule,
a league's season change and the crosstable; no database, no I/O.

The Berger tables below are typed out from FIDE's handbook (C.05, Annex 1, "Berger
Tables for Round-Robin Tournaments"), as its published copy prints them. The stored
copy this was typed from stopped after round 6 of the 13/14 table: its rounds 7 to
13 were written out by hand by carrying on the table's own pattern (each odd round
``k-14`` and the pairs summing like it, each even round ``14-k``), and checked
against the rule of the module's docstring by hand, not by running it.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from pbm.usecases.events import withdrawal
from pbm.usecases.events.berger import pairings, table
from pbm.usecases.events.crosstable import crosstable
from pbm.usecases.events.seasons import MAX_DIVISION, MIN_DIVISION, first_season, next_season
from pbm.usecases.events.standings import Game, standings

FIDE = {
    4: """1-4 2-3 / 4-3 1-2 / 2-4 3-1""",
    6: """1-6 2-5 3-4 / 6-4 5-3 1-2 / 2-6 3-1 4-5 / 6-5 1-4 2-3 / 3-6 4-2 5-1""",
    8: """1-8 2-7 3-6 4-5 / 8-5 6-4 7-3 1-2 / 2-8 3-1 4-7 5-6 / 8-6 7-5 1-4 2-3 /
          3-8 4-2 5-1 6-7 / 8-7 1-6 2-5 3-4 / 4-8 5-3 6-2 7-1""",
    10: """1-10 2-9 3-8 4-7 5-6 / 10-6 7-5 8-4 9-3 1-2 / 2-10 3-1 4-9 5-8 6-7 /
           10-7 8-6 9-5 1-4 2-3 / 3-10 4-2 5-1 6-9 7-8 / 10-8 9-7 1-6 2-5 3-4 /
           4-10 5-3 6-2 7-1 8-9 / 10-9 1-8 2-7 3-6 4-5 / 5-10 6-4 7-3 8-2 9-1""",
    12: """1-12 2-11 3-10 4-9 5-8 6-7 / 12-7 8-6 9-5 10-4 11-3 1-2 /
           2-12 3-1 4-11 5-10 6-9 7-8 / 12-8 9-7 10-6 11-5 1-4 2-3 /
           3-12 4-2 5-1 6-11 7-10 8-9 / 12-9 10-8 11-7 1-6 2-5 3-4 /
           4-12 5-3 6-2 7-1 8-11 9-10 / 12-10 11-9 1-8 2-7 3-6 4-5 /
           5-12 6-4 7-3 8-2 9-1 10-11 / 12-11 1-10 2-9 3-8 4-7 5-6 /
           6-12 7-5 8-4 9-3 10-2 11-1""",
    14: """1-14 2-13 3-12 4-11 5-10 6-9 7-8 / 14-8 9-7 10-6 11-5 12-4 13-3 1-2 /
           2-14 3-1 4-13 5-12 6-11 7-10 8-9 / 14-9 10-8 11-7 12-6 13-5 1-4 2-3 /
           3-14 4-2 5-1 6-13 7-12 8-11 9-10 / 14-10 11-9 12-8 13-7 1-6 2-5 3-4 /
           4-14 5-3 6-2 7-1 8-13 9-12 10-11 / 14-11 12-10 13-9 1-8 2-7 3-6 4-5 /
           5-14 6-4 7-3 8-2 9-1 10-13 11-12 / 14-12 13-11 1-10 2-9 3-8 4-7 5-6 /
           6-14 7-5 8-4 9-3 10-2 11-1 12-13 / 14-13 1-12 2-11 3-10 4-9 5-8 6-7 /
           7-14 8-6 9-5 10-4 11-3 12-2 13-1""",
}


def fide(n: int) -> list[set[tuple[int, int]]]:
    """FIDE's table for ``n`` players (an odd ``n``: the even one's, ``n + 1`` a bye)."""
    size = n + n % 2
    rounds = []
    for text in FIDE[size].split("/"):
        games = {tuple(int(x) for x in g.split("-")) for g in text.split()}
        rounds.append({(w, b) for w, b in games if w <= n and b <= n})
    return rounds  # type: ignore[return-value]


def test_the_pairings_are_fides_berger_tables_for_3_to_14_players() -> None:
    for n in range(3, 15):
        assert [set(r) for r in table(n)] == fide(n), n


@given(st.integers(min_value=3, max_value=14), st.booleans())
def test_every_pairing_plays_once_a_cycle_with_white_as_often_as_can_be(
    n: int, double: bool
) -> None:
    games = pairings(n, double)
    cycles = 2 if double else 1
    assert len(games) == cycles * n * (n - 1) // 2
    for a, b in itertools.combinations(range(1, n + 1), 2):
        between = [g for g in games if {g.white, g.black} == {a, b}]
        assert len(between) == cycles
        if double:
            assert {g.white for g in between} == {a, b}  # once in each colour
    whites = [sum(g.white == p for g in games) for p in range(1, n + 1)]
    games_each = cycles * (n - 1)
    for w in whites:
        assert abs(2 * w - games_each) <= (1 if n % 2 == 0 else 2) * cycles
    # Nobody has one colour three rounds running in a double round robin (FIDE's swap).
    if double and n % 2 == 0:
        for p in range(1, n + 1):
            colours = [
                "W" if g.white == p else "B"
                for g in sorted(games, key=lambda g: g.round)
                if p in (g.white, g.black)
            ]
            assert "WWW" not in "".join(colours) and "BBB" not in "".join(colours), p


def test_sonneborn_berger_and_a_shared_place_worked_by_hand() -> None:
    """Four players, one round robin:

    A-B 1-0, A-C ½-½, A-D 1-0, B-C 1-0, B-D ½-½, C-D 0-1.
    Points: A 1 + ½ + 1 = 2½; B 0 + 1 + ½ = 1½; C ½ + 0 + 0 = ½; D 0 + ½ + 1 = 1½.
    Sonneborn-Berger (each win: the loser's points; each draw: half the other's):
    A: B 1½ + C ½·½ + D 1½ = 3¼;  B: C ½ + D ½·1½ = 1¼;
    D: B ½·1½ + C ½ = 1¼;         C: A ½·2½ = 1¼.
    B and D: 1½ points, 1 win, SB 1¼ each, and drew with each other: they share
    second place. C is last on points.
    """
    games = [
        Game("A", "B", 1.0),
        Game("A", "C", 0.5),
        Game("A", "D", 1.0),
        Game("B", "C", 1.0),
        Game("B", "D", 0.5),
        Game("C", "D", 0.0),
    ]
    lines = {x.player: x for x in standings("ABCD", games)}
    assert (lines["A"].points, lines["A"].wins, lines["A"].sb, lines["A"].rank) == (2.5, 2, 3.25, 1)
    for p in "BD":
        assert (lines[p].points, lines[p].wins, lines[p].sb) == (1.5, 1, 1.25)
        assert lines[p].rank == 2 and lines[p].shared and lines[p].direct == 0.5
    assert (lines["C"].points, lines["C"].sb, lines["C"].rank) == (0.5, 1.25, 4)


def test_the_direct_encounter_breaks_a_tie_the_others_leave() -> None:
    """Five players: A-B 1-0, A-C 1-0, A-D ½, A-E 0-1, B-C 1-0, B-D ½, B-E 1-0,
    C-D 1-0, C-E ½, D-E 0-1.
    Points: A 2½, B 2½, E 1 + ½ + 1 = 2½, C 1½, D 1. Wins: A 2, B 2, E 2.
    SB: A: B 2½ + C 1½ + ½·D 1 = 4½; B: C 1½ + ½·D 1 + E 2½ = 4½;
    E: A 2½ + ½·C 1½ + D 1 = 4¼. A and B are tied on points, wins and SB; A beat B.
    """
    results = [1.0, 1.0, 0.5, 0.0, 1.0, 0.5, 1.0, 1.0, 0.5, 0.0]
    games = [
        Game(a, b, s) for (a, b), s in zip(itertools.combinations("ABCDE", 2), results, strict=True)
    ]
    lines = standings("ABCDE", games)
    assert [(x.player, x.rank) for x in lines] == [("A", 1), ("B", 2), ("E", 3), ("C", 4), ("D", 5)]
    assert (lines[0].sb, lines[1].sb, lines[2].sb) == (4.5, 4.5, 4.25)
    assert (lines[0].direct, lines[1].direct) == (1.0, 0.0)
    assert not any(x.shared for x in lines)


def test_a_struck_player_counts_for_nobody() -> None:
    games = [Game("A", "B", 1.0), Game("C", "A", 1.0), Game("B", "C", 0.5)]
    lines = {x.player: x for x in standings("ABC", games, struck={"A"})}
    assert lines["A"].struck and lines["A"].rank == 3
    assert lines["B"].points == 0.5 and lines["C"].points == 0.5  # C's win over A is gone
    assert lines["B"].rank == lines["C"].rank == 1 and lines["B"].shared


def test_the_withdrawal_rule() -> None:
    # Less than half played: all results struck; half or more: the rest are losses.
    assert withdrawal.struck(finished=2, total=6)
    assert not withdrawal.struck(finished=3, total=6)
    assert withdrawal.struck(finished=3, total=7) and not withdrawal.struck(4, 7)
    # Two losses on time withdraw a player; one does not.
    assert not withdrawal.withdrawn_on_time(1) and withdrawal.withdrawn_on_time(2)
    # A 30-day bar on joining.
    at = datetime(2026, 1, 1, tzinfo=UTC)
    assert withdrawal.barred_until(at) == at + timedelta(days=30)
    # A league: more than half of the games lost on time drops a player.
    assert withdrawal.drops_out(5, 9) and not withdrawal.drops_out(4, 9)


def test_the_crosstable_of_14_players_fits_78_columns() -> None:
    players = [f"player{i:02d}" for i in range(1, 15)]
    for double in (False, True):
        games = [
            Game(players[p.white - 1], players[p.black - 1], 0.5) for p in pairings(14, double)
        ]
        text = crosstable(standings(players, games), games)
        assert len(text) == 15 and max(map(len, text)) <= 78


def _divisions(sizes: list[int]) -> list[list[str]]:
    return [[f"d{i}p{j}" for j in range(n)] for i, n in enumerate(sizes)]


def test_a_season_change_promotes_two_relegates_two_drops_and_places_newcomers() -> None:
    before = _divisions([6, 6, 6])
    after = next_season(before, leaving={"d1p3"}, newcomers=["new"], size=6)
    assert after[0] == ["d0p0", "d0p1", "d0p2", "d0p3", "d1p0", "d1p1"]
    # d1p3 dropped out: division 1 takes the best of division 2 who did not come down.
    assert after[1] == ["d0p4", "d0p5", "d1p2", "d2p0", "d2p1", "d2p2"]
    assert after[2] == ["d1p4", "d1p5", "d2p3", "d2p4", "d2p5", "new"]


@given(
    st.lists(st.integers(min_value=3, max_value=12), min_size=1, max_size=6),
    st.integers(min_value=4, max_value=12),
    st.integers(min_value=0, max_value=15),
    st.data(),
)
def test_a_season_change_places_everyone_once_in_divisions_that_can_play(
    sizes: list[int], size: int, new: int, data: st.DataObject
) -> None:
    before = _divisions(sizes)
    everyone = [p for d in before for p in d]
    leaving = set(data.draw(st.lists(st.sampled_from(everyone), max_size=len(everyone) // 3)))
    newcomers = [f"new{i}" for i in range(new)]
    after = next_season(before, leaving, newcomers, size)
    placed = [p for d in after for p in d]
    assert sorted(placed) == sorted({*everyone, *newcomers} - leaving)
    if len(placed) >= MIN_DIVISION:
        assert all(len(d) <= MAX_DIVISION for d in after)
        assert all(len(d) >= MIN_DIVISION for d in after[:-1]) or len(after) == 1
    # Full divisions, nobody leaving: the top two go up, the bottom two go down.
    if not leaving and all(n == size for n in sizes):
        where = {p: i for i, d in enumerate(after) for p in d}
        for i, d in enumerate(before):
            if i > 0:
                assert all(where[p] == i - 1 for p in d[:2])
            if i < len(before) - 1:
                assert all(where[p] == i + 1 for p in d[-2:])


def test_the_first_season_cuts_the_players_by_rating() -> None:
    assert first_season([str(i) for i in range(23)], 10) == [
        [str(i) for i in range(10)],
        [str(i) for i in range(10, 20)],
        ["20", "21", "22"],
    ]
    assert first_season(["a", "b", "c", "d", "e", "f", "g"], 6) == [list("abcdefg")]

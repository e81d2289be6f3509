"""``pbm rules replay`` reads every record pbm writes: the text record and the JSON record
of ``pbm archive --format json`` (once shown as 0 turns), and says clearly when a file is
not UTF-8 (once a traceback-like decode error)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from test_archive import new_board, play, random_moves, resign

from pbm.cli import main
from pbm.usecases import queries
from pbm.usecases.records import formats
from pbm.usecases.site import Site


def replay(path: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["rules", "replay", str(path)])
    return result.exit_code, result.stdout, result.stderr


def test_the_json_record_replays_like_the_text_record(site: Site, tmp_path: Path) -> None:
    board = new_board(site)
    moves = random_moves(7, 5)
    play(site, board, moves)
    resign(site, board, "alice")
    played = queries.board(site, board)
    (tmp_path / "game.json").write_text(formats.record_json(played), encoding="utf-8")
    (tmp_path / "game.txt").write_text(formats.record_text(played), encoding="utf-8")
    json_code, json_out, _ = replay(tmp_path / "game.json")
    text_code, text_out, _ = replay(tmp_path / "game.txt")
    assert json_code == text_code == 0
    assert "after 5 turns" in json_out
    assert json_out == text_out


def test_a_file_that_is_not_utf8_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes('[Game "Accasta"]\n[Black "Jürgen"]\n\n1. a1:C-b1\n'.encode("latin-1"))
    code, out, err = replay(path)
    assert code == 1 and out == ""
    assert "is not UTF-8 text" in err and "Traceback" not in err


def test_a_broken_json_record_is_refused_in_words(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"tags": {"Game": "Accasta"}, "moves": [{"nope": 1}]}', encoding="utf-8")
    code, _, err = replay(path)
    assert code == 1 and err.startswith("error: not a JSON game record")

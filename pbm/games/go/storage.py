"""A game of Go as the text the shell stores (``GoState.dump``) and back (``load``).

JSON with short keys: the options, the board (``.``, ``b``, ``w`` by point),
the ply, captures, passes, last move, ko point, phase, dead stones, who
accepted the marking, who proposed it, and ``seen``: the Zobrist hash of
every position so far, 8 bytes each in base64, which is what positional
superko needs and why no move is replayed on load. At move 300 it is some
4 KB.
"""

from __future__ import annotations

import base64
import json
import struct

from pbm.games.go.board import EMPTY, SIZES
from pbm.games.go.values import OVER, PLAY, SCORING, GoPosition, Rules

__all__ = ["dump", "load"]

_PHASES = (PLAY, SCORING, OVER)


def dump(state: GoPosition) -> str:
    hashes = sorted(state.seen)
    data = {
        "size": state.rules.size,
        "komi": state.rules.komi,
        "handicap": state.rules.handicap,
        "grid": state.grid,
        "ply": state.ply,
        "captures": list(state.captures),
        "passes": state.passes,
        "last": state.last,
        "ko": state.ko,
        "phase": state.phase,
        "dead": sorted(state.dead),
        "accepted": state.accepted,
        "proposer": state.proposer,
        "seen": base64.b64encode(struct.pack(f">{len(hashes)}Q", *hashes)).decode(),
    }
    return json.dumps(data, separators=(",", ":"))


def load(data: str, program: str) -> GoPosition:
    """The state ``dump`` wrote; ``ValueError`` saying what is wrong with a bad one."""
    try:
        d = json.loads(data)
        size, grid = int(d["size"]), str(d["grid"])
        rules = Rules(size, float(d["komi"]), int(d["handicap"]), program)
        raw = base64.b64decode(d["seen"], validate=True)
        seen = frozenset(struct.unpack(f">{len(raw) // 8}Q", raw))
        state = GoPosition(
            rules,
            grid,
            int(d["ply"]),
            (int(d["captures"][0]), int(d["captures"][1])),
            seen,
            int(d["passes"]),
            None if d["last"] is None else int(d["last"]),
            None if d["ko"] is None else int(d["ko"]),
            str(d["phase"]),
            frozenset(int(p) for p in d["dead"]),
            None if d["accepted"] is None else int(d["accepted"]),
            str(d["proposer"]),
        )
    except (ValueError, KeyError, TypeError, IndexError, struct.error) as exc:
        raise ValueError(f"stored Go game: cannot be read ({exc})") from None
    if size not in SIZES or len(grid) != size * size or set(grid) - {EMPTY, "b", "w"}:
        raise ValueError("stored Go game: the board is not a Go board")
    if state.phase not in _PHASES or len(raw) % 8:
        raise ValueError("stored Go game: its phase or position hashes are damaged")
    return state

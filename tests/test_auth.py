"""Password hashing (pbm.usecases.auth): scrypt hashes that record their cost, verification,
and hashes that can never match."""

from __future__ import annotations

import pytest

from pbm.usecases import auth
from pbm.usecases.auth import PasswordCheck, hash_password, verify_password


def test_password_hash_roundtrip() -> None:
    h = hash_password("sesame")
    assert auth.SCRYPT_N == 2**4  # conftest: fast hashing in tests
    assert h.startswith(f"scrypt${auth.SCRYPT_N}$8$1$")
    assert "sesame" not in h
    assert verify_password("sesame", h)
    assert not verify_password("Sesame", h)
    assert not verify_password("sesame ", h)
    assert not verify_password("", h)
    assert hash_password("sesame") != h  # fresh salt each time


def test_non_ascii_and_empty_passwords() -> None:
    h = hash_password("Größe-密码")
    assert verify_password("Größe-密码", h)
    assert not verify_password("Grosse-密码", h)
    empty = hash_password("")
    assert verify_password("", empty)
    assert not verify_password(" ", empty)


def test_password_hash_keeps_its_own_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth, "SCRYPT_N", 2**14)
    strong = hash_password("pw")
    monkeypatch.setattr(auth, "SCRYPT_N", 2**4)
    assert strong.startswith("scrypt$16384$8$1$")
    assert verify_password("pw", strong)  # checked at the cost it was made with
    assert not verify_password("pW", strong)
    assert hash_password("pw").startswith("scrypt$16$")


@pytest.mark.parametrize(
    "junk",
    [
        "",
        "plain",
        "md5$1$2$3$4$5",
        "scrypt$x$8$1$AA==$AA==",
        "scrypt$16$8$1$AA==$AA==$extra",
        "scrypt$16$8$1$AA==$",  # no digest
        "scrypt$16$8$1$AA==$A",  # not base64
        "scrypt$16$8$1$é$AA==",
        "scrypt$3$8$1$AA==$AA==",  # N not a power of two
        "scrypt$16$0$1$AA==$AA==",
        "scrypt$-16$8$1$AA==$AA==",  # a negative cost
        "scrypt$18446744073709551616$8$1$AA==$AA==",  # a cost beyond any machine word
        "scrypt$16$8$99999999999999999999$AA==$AA==",
    ],
)
def test_unreadable_hash_never_matches(junk: str) -> None:
    assert verify_password("pw", junk) is False
    assert PasswordCheck().verify("pw", junk) is False


def test_a_wrong_hash_does_not_match() -> None:
    """Another password's hash, or this one's with its digest changed, does not match."""
    h = hash_password("pw")
    assert not verify_password("pw", hash_password("other"))
    *head, digest = h.split("$")
    flipped = ("B" if digest[0] == "A" else "A") + digest[1:]
    assert not verify_password("pw", "$".join([*head, flipped]))
    salted = h.split("$")
    salted[4] = hash_password("pw").split("$")[4]  # another salt
    assert not verify_password("pw", "$".join(salted))


def test_password_check_gives_the_same_answers_and_keeps_no_password() -> None:
    h = hash_password("pw")
    check = PasswordCheck(size=2)
    for _ in range(2):  # the second time from what it remembers
        assert check.verify("pw", h)
        assert not check.verify("wrong", h)
    kept = repr(check.__dict__)
    assert "'pw'" not in kept and "wrong" not in kept
    other = hash_password("pw")
    assert check.verify("pw", other)  # a third pair: the oldest is dropped, answers stay right
    assert check.verify("pw", h) and not check.verify("wrong", h)
    check.forget(h)
    assert check.verify("pw", h)

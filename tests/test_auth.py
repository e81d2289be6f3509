"""Password hashing (pbm.usecases.auth): argon2id hashes that record their cost, the scrypt
hashes of before, verification, and hashes that can never match."""

from __future__ import annotations

import base64
import hashlib
import os

import pytest
from argon2 import PasswordHasher

from pbm.usecases import auth
from pbm.usecases.auth import PasswordCheck, hash_password, needs_rehash, verify_password


def scrypt_hash(password: str, n: int = 2**4) -> str:
    """A hash as pbm made them before argon2: ``scrypt$N$r$p$salt$hash``."""
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=n, r=8, p=1, dklen=32)
    b64 = base64.b64encode
    return f"scrypt${n}$8$1${b64(salt).decode()}${b64(digest).decode()}"


def test_password_hash_roundtrip() -> None:
    h = hash_password("sesame")
    assert h.startswith("$argon2id$v=19$m=8,t=1,p=1$")  # conftest: cheap hashing in tests
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


def test_the_production_cost_is_owasps(monkeypatch: pytest.MonkeyPatch) -> None:
    """argon2id, m=7 MiB, t=5, p=1 (OWASP Password Storage Cheat Sheet); a hash keeps its
    own cost, so one made cheaper (the tests') still verifies, and is due for a rehash."""
    cheap = hash_password("pw")
    assert (auth.ARGON2_TIME_COST, auth.ARGON2_MEMORY_KIB, auth.ARGON2_LANES) == (5, 7168, 1)
    production = PasswordHasher(
        time_cost=auth.ARGON2_TIME_COST,
        memory_cost=auth.ARGON2_MEMORY_KIB,
        parallelism=auth.ARGON2_LANES,
    )
    monkeypatch.setattr(auth, "HASHER", production)
    strong = auth.hash_password("pw")
    assert strong.startswith("$argon2id$v=19$m=7168,t=5,p=1$")
    assert auth.verify_password("pw", strong) and not auth.verify_password("pW", strong)
    assert auth.verify_password("pw", cheap)  # checked at the cost it was made with
    assert auth.needs_rehash(cheap) and not auth.needs_rehash(strong)


def test_scrypt_hashes_of_before_still_verify_and_are_due_for_a_rehash() -> None:
    old = scrypt_hash("pw")
    assert verify_password("pw", old)
    assert not verify_password("pW", old)
    assert needs_rehash(old)
    assert not needs_rehash(hash_password("pw"))


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
    assert not verify_password("pw", hash_password("other"))
    h = scrypt_hash("pw")
    *head, digest = h.split("$")
    flipped = ("B" if digest[0] == "A" else "A") + digest[1:]
    assert not verify_password("pw", "$".join([*head, flipped]))
    salted = h.split("$")
    salted[4] = scrypt_hash("pw").split("$")[4]  # another salt
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

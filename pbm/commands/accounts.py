"""Account commands: signup, password, address, format, vacation."""

from __future__ import annotations

from pbm.commands.arguments import (
    DAYS,
    EMAIL,
    FORMAT,
    NEW_PASSWORD,
    OPTIONAL_EMAIL,
    PASSWORD,
    USERID,
)
from pbm.commands.grammar import Args, Built, Command, Context
from pbm.usecases import accounts, vacations


def _signup(args: Args, ctx: Context) -> Built:
    assert args.userid is not None and args.password is not None
    return accounts.Signup(args.userid, args.password, args.email or ctx.sender), None


def _password(args: Args, ctx: Context) -> Built:
    assert args.new_password is not None
    return accounts.ChangePassword(args.new_password), ctx.who(args)


def _reset(args: Args, ctx: Context) -> Built:
    assert args.userid is not None
    return accounts.AskReset(args.userid, ctx.sender), None


def _address(args: Args, ctx: Context) -> Built:
    assert args.email is not None
    return accounts.ChangeAddress(args.email), ctx.who(args)


def _format(args: Args, ctx: Context) -> Built:
    assert args.format is not None
    return accounts.SetFormat(args.format), ctx.who(args)


def _vacation(args: Args, ctx: Context) -> Built:
    if args.status:
        return vacations.VacationStatus(), ctx.who(args)
    return vacations.Vacation(args.days), ctx.who(args)


COMMANDS = (
    Command(
        ("signup",),
        (USERID, PASSWORD, OPTIONAL_EMAIL),
        "a new account (EMAIL: the sender)",
        _signup,
    ),
    Command(("password",), (USERID, PASSWORD, NEW_PASSWORD), "change your password", _password),
    Command(
        ("password reset",),
        (USERID,),
        "forgot it? a mail to the account's address lets you set a new one",
        _reset,
    ),
    Command(("address",), (USERID, PASSWORD, EMAIL), "change your address", _address),
    Command(
        ("format",),
        (USERID, PASSWORD, FORMAT),
        "board mails with a picture of the board (html, the default) or plain text only",
        _format,
    ),
    Command(
        ("vacation",),
        (USERID, PASSWORD, DAYS),
        "stop your clocks on every board for DAYS days (a yearly allowance); off: back "
        "early (only the hours away count); status: the days left",
        _vacation,
    ),
)

"""The help commands, and the help text: made from the command declarations.

``ALL`` is every mail command this server knows, in the order help lists
them; ``help_text`` writes them out, with the options each game declares.
"""

from __future__ import annotations

from pbm import games
from pbm.commands import accounts, boards, comforts, events, reading, talk
from pbm.commands.arguments import OPTIONAL_GAME
from pbm.commands.grammar import Args, Built, Command, Context
from pbm.model import rules_of
from pbm.usecases.computer import ComputerHelp
from pbm.usecases.queries.reading import Answer
from pbm.usecases.text import WIDTH, wrap

_FORM_WIDTH = 37  # a form longer than this has its help on the next line


def _help(args: Args, ctx: Context) -> Built:
    if args.topic == "computer":
        return ComputerHelp(ctx.sender), None
    name = args.game or ctx.game
    if name is None:
        return Answer(ctx.sender, "pbm - help", help_text()), None
    rules = rules_of(name)
    return Answer(ctx.sender, f"{rules.title} - help", rules.help_text()), None


HELP = (
    Command(
        ("help",),
        (OPTIONAL_GAME,),
        "this text, the rules of GAME, or (help computer) how to play the computer",
        _help,
    ),
    Command(("help",), (), "the rules and the notation of G", _help, per_game=True),
)

ALL: tuple[Command, ...] = (
    *accounts.COMMANDS,
    HELP[0],
    *reading.COMMANDS[:1],
    *comforts.COMMANDS,
    *boards.COMMANDS,
    *reading.COMMANDS[1:],
    *talk.COMMANDS,
    *events.COMMANDS,
    HELP[1],
)


def _entry(form: str, text: str) -> list[str]:
    """``  FORM   help``, the help wrapped beside the form (below a long one)."""
    indent = " " * (_FORM_WIDTH + 3)
    if len(form) > _FORM_WIDTH:
        first, *rest = wrap(form, width=WIDTH - 4)
        return [f"  {first}", *(f"      {line}" for line in rest), *wrap(text, indent=indent)]
    first, *rest = wrap(text, width=WIDTH - len(indent))
    return [f"  {form:<{_FORM_WIDTH}} {first}", *(indent + line for line in rest)]


def help_text() -> str:
    """The answer to ``help``: every command, the games and their options, replying."""
    names = games.names()
    lines = [
        "Commands (words are case-insensitive; G is a game name, B a board number):",
        "",
    ]
    for command in ALL:
        words = " / ".join(command.words[1:])
        text = command.help + (f" (also: {words})" if words else "")
        lines += _entry(command.usage(), text)
    lines += ["", *wrap(f"Games here: {', '.join(names)}. Their challenge options:")]
    for name in names:
        rules = games.get(name)
        variants = "|".join(rules.variants)
        lines.append(f"  {name}: --variant={variants}")
        for option in rules.options:
            only = f" ({' or '.join(option.variants)} only)" if option.variants else ""
            lines += wrap(
                f"--{option.name}={'|'.join(option.values)} (default {option.default}): "
                f"{option.help}{only}",
                indent="    ",
            )
    lines += [
        '  Every game: --time="TIME CONTROL" (its clock: classic 7/21, days 3,',
        "  fischer 10d+36h max 10d, ICCF 10/50d, each with weekends off [TIMEZONE]),",
        "  --nagtime=DAYS (a reminder after DAYS without a move),",
        "  --forfeittime=DAYS (the board is lost after DAYS without a move);",
        "  against the computer, --level=1..5 (help computer).",
        "",
        *wrap(
            "Put the command in the Subject, or on a line of its own in the body; the "
            "other lines of the body are a comment shown with your move."
        ),
        "",
        *wrap(
            "Every mail from the server can be answered by Reply. Replying to a board "
            "mail needs no board, userid or password: write just the move (a greeting "
            "above it is fine), or "
            + ", ".join(
                "/".join((c.reply_form(), *c.words[1:]))
                + (f" ({c.reply_note})" if c.reply_note and c.name != "move" else "")
                for c in ALL
                if c.by_reply and c.name != "move"
            )
            + ". A reply to a chat is passed on as chat; a reply to an error mail may be "
            "the corrected command; a reply to a mail about your account may hold any "
            "command; a reply to your digest holds a line for each board you move on: its "
            "number, a colon and the move (4: a1:C+b2)."
        ),
    ]
    return "\n".join(lines) + "\n"

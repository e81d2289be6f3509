"""Replying still works from clients that quote the HTML part of a board mail: Gmail,
Outlook and Apple Mail, top-posted, the move on the first line, a signature, the quoted
board (its picture and text) ignored. The HTML part quoted is the one pbm writes."""

from __future__ import annotations

import re
from email.message import EmailMessage
from email.policy import SMTP

import pytest
from test_pipeline import bob_token, make_env, make_mail

from pbm.mail import pipeline
from pbm.mail.html import html_part
from pbm.usecases import moves

BOARD_TEXT = (
    "Accasta Board 12 - bob to move\n\nMove 1, alice (White): a1:C+b2,HS-c1\n"
    "bob (Black) to move: move 2.\n\nMoves:\n  1. a1:C+b2,HS-c1\n\nDIAGRAM\n\n"
    "How to reply:\n  Reply to this mail with just your move on the first line, e.g.\n"
    "    g2:C+f2,H+f3\n"
)
OURS = html_part("Accasta Board 12: alice vs bob", BOARD_TEXT, "DIAGRAM", "board.1@x", "board")
MOVE = "g2:C+f2,H+f3"

GMAIL = (
    f'<div dir="ltr">{MOVE}&nbsp;<div><br></div><div>Your turn!</div>'
    '<div><br></div>-- <br><div dir="ltr" class="gmail_signature">Bob B.</div></div><br>'
    '<div class="gmail_quote"><div dir="ltr" class="gmail_attr">On Mon, Nov 25, 2026 at '
    "10:00\u202fAM PBM Server &lt;pbm@example.org&gt; wrote:<br></div>"
    f'<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex">{OURS}</blockquote></div>'
)
OUTLOOK = (
    '<html><body><div style="font-family:Calibri">'
    f"{MOVE}</div><div><br></div><div>Regards, Bob</div>"
    '<hr style="display:inline-block;width:98%"><div id="divRplyFwdMsg" dir="ltr">'
    "<b>From:</b> PBM Server &lt;pbm@example.org&gt;<br><b>Sent:</b> Monday, November 25, "
    "2026 10:00 AM<br><b>To:</b> bob@example.org<br><b>Subject:</b> Accasta Board 12: alice "
    f"vs bob</div><div>{OURS}</div></body></html>"
)
APPLE = (
    '<html><body dir="auto"><div dir="ltr">'
    f'{MOVE}<br><br><div>Sent from my iPhone</div><div dir="ltr"><br><blockquote '
    'type="cite">On 25 Nov 2026, at 10:00, PBM Server &lt;pbm@example.org&gt; wrote:<br><br>'
    f'</blockquote></div><blockquote type="cite"><div dir="ltr">{OURS}</div></blockquote>'
    "</div></body></html>"
)


def reply(html: str, with_text: bool) -> bytes:
    msg = EmailMessage()
    msg["From"] = "bob@example.org"
    msg["To"] = bob_token()
    msg["Subject"] = "Re: Accasta Board 12: alice vs bob"
    msg["Message-ID"] = "<r1@client.test>"
    if with_text:  # Gmail and Apple send both; Outlook on the web sometimes HTML alone
        msg.set_content(
            f"{MOVE}\n\nOn Mon, PBM Server wrote:\n> " + BOARD_TEXT.replace("\n", "\n> ")
        )
        msg.add_alternative(html, subtype="html")
    else:
        msg.set_content(html, subtype="html")
    return msg.as_bytes(policy=SMTP)


@pytest.mark.parametrize("client", ["gmail", "outlook", "apple"])
@pytest.mark.parametrize("with_text", [True, False])
def test_the_move_on_the_first_line_is_found_and_the_quote_ignored(
    client: str, with_text: bool
) -> None:
    html = {"gmail": GMAIL, "outlook": OUTLOOK, "apple": APPLE}[client]
    mail = pipeline.run_steps(make_mail(reply(html, with_text), rcpt=bob_token()), make_env())
    (request,) = mail.requests
    assert isinstance(request.action, moves.Move)
    assert request.action.notation == MOVE and request.action.board == 12
    assert "Reply to this mail" not in request.action.comment  # the quote stayed out
    assert "DIAGRAM" not in request.action.comment


def test_a_sentence_the_text_part_wrapped_is_one_line_of_the_html_part() -> None:
    """On a phone the text part's 78-column lines broke again mid-line (issue 36): the
    HTML part joins what the text part wrapped, keeps apart what it laid out line by line
    (an example move, the next sentence), and a narrow screen wraps it under its indent."""
    text = (
        "Title\n\nHow to reply:\n"
        "  To have your answer played the moment they move, reply with queue MOVE (or\n"
        "  queue MOVE if THEIR-MOVE; several lines are tried in order).\n"
        "    g2:C+f2,H+f3\n"
        "  Every legal move: accasta moves 1\n\n"
        "bob writes:\n"
        "  > " + "word " * 14 + "a-rather-long-word\n"
        "  > and the rest.\n"
    )
    html = html_part("Title", text, "", "board.1@x", "board")
    lines = re.findall(r'<div style="padding-left:(\d+)ch;">([^<]*)</div>', html)
    assert lines == [
        ("0", "How to reply:"),
        (
            "2",
            "To have your answer played the moment they move, reply with queue MOVE (or "
            "queue MOVE if THEIR-MOVE; several lines are tried in order).",
        ),
        ("4", "g2:C+f2,H+f3"),
        ("2", "Every legal move: accasta moves 1"),
        ("0", "bob writes:"),
        ("2", "&gt; " + "word " * 14 + "a-rather-long-word and the rest."),
    ]

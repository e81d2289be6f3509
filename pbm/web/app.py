"""The read-only web site: an ASGI application (Starlette, Jinja2 templates).

Mail stays the way to play: the site only shows (GET and HEAD; anything else
405), reading through ``pbm.usecases.queries.pages``. Every page is escaped by the
templates (autoescape), sent with a strict Content-Security-Policy (no
script but the one small file of our own), and cached by browsers and
proxies: a board's ETag is what its page is made from (``pages.made_of``: its
version, its players' vacations, the site's pauses), so a 304 costs one read
and no render; the site keeps the pages it made for as long (``KEEP_SECONDS``)
for the next visitor. Errors are a plain 404 page, never a traceback.
"""

from __future__ import annotations

import functools
import gc
import hashlib
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pbm import config, games, version
from pbm.model import Board
from pbm.ratings import PROVISIONAL_GAMES
from pbm.store.engine import Database
from pbm.usecases import deadlines
from pbm.usecases.boardview import board_view
from pbm.usecases.queries import pages
from pbm.usecases.queries.pages import NotShown
from pbm.usecases.records import formats
from pbm.usecases.site import TIME_RANGE, Site, in_range
from pbm.usecases.text import fmt_time
from pbm.web import connections, events

STATIC = Path(__file__).parent / "static"
# How long a visitor, a proxy and the site itself may keep a page without asking
# again (a name or a rating a page shows may be this old).
KEEP_SECONDS = 30
PAGES_KEPT = 256  # some 20 KB each
# RFC 9110 9.3: only the safe methods are served; the site changes nothing.
METHODS = ("GET", "HEAD")
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; img-src 'self'; style-src 'self'; script-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
}


def create_app(site: Site) -> ASGIApp:
    """The site's application, reading ``site``'s database."""
    templates = Environment(
        loader=PackageLoader("pbm.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    templates.globals["when"] = fmt_time  # as mail shows a moment
    # Where to play: the one address the site shows (never a player's).
    templates.globals["server_address"] = site.config.mail.address
    views = _Views(site, templates)
    event_views = events.views(site, templates, views.page)
    web = site.config.web
    app = Starlette(
        middleware=[
            # A Host the site does not answer to is a 400 (RFC 9110 7.2, 15.5.1): no page
            # is made for a name an attacker chose; and whatever is built from the request
            # after that (a redirect's Location) names the site as it names itself.
            Middleware(TrustedHostMiddleware, allowed_hosts=host_names(web), www_redirect=False),
            Middleware(_OwnName, base=web.base),
        ],
        routes=[
            Route("/", views.front),
            Route("/boards/{number:int}", views.board),
            Route("/boards/{number:int}/ply/{ply:int}", views.board),
            # A picture's address names its position (``picture_tag``): it can be kept for
            # ever. Without the tag (an address made before): sent on to the one of now.
            Route("/boards/{number:int}/picture/{ply:int}-{seat:int}.{tag:str}.svg", views.picture),
            Route("/boards/{number:int}/picture/{ply:int}-{seat:int}.svg", views.picture),
            Route("/boards/{number:int}/record.{suffix:str}", views.record),
            Route("/boards/{number:int}/feed", views.board_feed),
            Route("/players/{userid:str}/deadlines.ics", views.deadlines),
            Route("/players/{userid:str}", views.player),
            Route("/players/{userid:str}/feed", views.player_feed),
            Route("/ratings", views.ratings),
            Route("/archive", views.archive),
            Route("/feed", views.finished_feed),
            *event_views.routes(),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        exception_handlers={
            HTTPException: views.error,
            NotShown: views.error,
            BadQuery: views.bad_query,
            Exception: views.error,
        },
    )
    return _Guard(app, views)


def from_environment() -> ASGIApp:
    """The site's application for a uvicorn worker process: the configuration named by
    ``PBM_CONFIG`` (with the environment's overrides), its database opened here."""
    cfg = config.load()
    connections.configure(cfg.web)  # the bounds of GuardedH11 in this process
    app = create_app(Site(Database.open(cfg, create=False), cfg))
    # A full collection walks every object the process holds and stops every answer
    # meanwhile (some 50 ms, now and then: a visitor's p99). What is loaded by now
    # (modules, tables, templates) lives as long as the process: left out of them.
    gc.collect()
    gc.freeze()
    return app


def host_names(web: config.WebConfig) -> list[str]:
    """The names a visitor's Host may give: ``base_url``'s, the listen address's, this
    machine's own (localhost, 127.0.0.1, ::1), and those of ``web.hosts``."""
    names = {"localhost", "127.0.0.1", "[::1]", *web.host_names}
    for address in (web.base, f"http://{web.listen}"):
        try:
            host = urlsplit(address).hostname
        except ValueError:  # a listen value of no known form: pbm web refuses it itself
            continue
        if host and host not in ("0.0.0.0", "::"):
            names.add(f"[{host}]" if ":" in host else host)
    return sorted(names)


class _OwnName:
    """The request names the site as ``web.base`` does (its scheme and host): what is
    made from it (Starlette's redirect of /static to /static/) never names a Host a
    visitor chose, nor http:// behind a proxy that speaks https."""

    def __init__(self, app: ASGIApp, base: str) -> None:
        self.app = app
        parts = urlsplit(base)
        self.scheme = parts.scheme or "http"
        try:
            self.host = parts.netloc.encode("idna")  # a name in Unicode as DNS writes it
        except UnicodeError:
            self.host = parts.netloc.encode("ascii", "replace")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [(k, v) for k, v in scope["headers"] if k != b"host"]
            scope = {**scope, "scheme": self.scheme, "headers": [(b"host", self.host), *headers]}
        await self.app(scope, receive, send)


class _Guard:
    """Before the routes: only GET and HEAD, the security headers on every answer."""

    def __init__(self, app: ASGIApp, views: _Views) -> None:
        self.app = app
        self.views = views

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.decode("latin-1").lower() not in SECURITY_HEADERS
                ]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        if scope["method"] not in METHODS:
            response: Response = self.views.page("error.html", status_code=405, status=405)
            response.headers["allow"] = ", ".join(METHODS)
            await response(scope, receive, secured)
            return
        await self.app(scope, receive, secured)


class _Views:
    """The pages: each reads what it shows through ``pages`` and fills its template.

    They read on the event loop itself: a page's reads take a few milliseconds, less
    than a hand-over to a thread costs (``web.workers`` runs more processes)."""

    def __init__(self, site: Site, templates: Environment) -> None:
        self.site = site
        self.templates = templates
        # Pages made lately, by ETag: when made, and the page (``_cached``).
        self._kept: OrderedDict[str, tuple[datetime, bytes]] = OrderedDict()

    def page(self, name: str, status_code: int = 200, **values: Any) -> HTMLResponse:
        html = self.templates.get_template(name).render(**values)
        return HTMLResponse(html, status_code=status_code)

    async def error(self, request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if isinstance(exc, NotShown) or status != 405:
            status = 404  # whatever went wrong, a visitor learns nothing more of it
        return self.page("error.html", status_code=status, status=status)

    async def bad_query(self, request: Request, exc: Exception) -> Response:
        """400, with the sentence that says what the site takes (``BadQuery``)."""
        return self.page("error.html", status_code=400, status=400, message=str(exc))

    async def front(self, request: Request) -> Response:
        number = _int(request.query_params.get("page", "1"))
        with pages.snapshot(self.site) as read:  # one read: a 304, or the page
            return self._cached(
                request,
                f"front.{number}.{pages.site_stamp(read)}",
                lambda: self.page("front.html", front=pages.front_in(read, number), title="Games"),
            )

    def _cached(self, request: Request, made_of: str, make: Callable[[], Response]) -> Response:
        """A page its visitor (or a proxy) may keep: 304 when he has it (``made_of`` is
        what it is made from), else made; RFC 9110 8.8.3 (ETag), 13.1.2 (If-None-Match).

        The site keeps the pages it made too, as a proxy would (for as long as
        ``max-age`` lets one): the next visitor of the same page gets it without its
        reads and its render. Most of all the front page, which every visitor asks for."""
        tag = '"' + hashlib.blake2b(made_of.encode(), digest_size=12).hexdigest() + '"'
        headers = {"etag": tag, "cache-control": f"public, max-age={KEEP_SECONDS}"}
        if tag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        now = self.site.clock()
        kept = self._kept.get(tag)
        if kept is not None and now - kept[0] < timedelta(seconds=KEEP_SECONDS):
            self._kept.move_to_end(tag)
            return HTMLResponse(kept[1], headers=headers)
        response = make()
        response.headers.update(headers)
        if response.status_code == 200 and isinstance(response, HTMLResponse):
            self._kept[tag] = (now, bytes(response.body))
            if len(self._kept) > PAGES_KEPT:
                self._kept.popitem(last=False)  # the one asked for longest ago
        return response

    async def board(self, request: Request) -> Response:
        number = request.path_params["number"]
        seat = 1 if request.query_params.get("seat") == "1" else 0
        ply = request.path_params.get("ply")
        with pages.snapshot(self.site) as read:  # one read: a 304, or the page
            row = pages.board_row(read, number)
            if row is None:
                raise NotShown(number)
            made_of = f"board.{number}.{pages.made_of(row)}.{ply}.{seat}"
            return self._cached(
                request,
                made_of,
                lambda: self._board_page(pages.board_in(read, self.site, row), ply, seat),
            )

    def _board_page(self, board: Board, ply: int | None, seat: int) -> Response:
        ply = board.ply if ply is None else ply
        position = pages.position_at(board, ply)  # a ply past the end is no page
        last = pages.move_at(board, ply)
        view = board_view(board, self.site.clock())
        return self.page(
            "board.html",
            board=board,
            view=view,
            ply=ply,
            first=pages.first_ply(board),
            seat=seat,
            picture=f"/boards/{board.number}/picture/{ply}-{seat}."
            f"{picture_tag(board.game, position, last)}.svg",
            formats=[(f, formats.suffix_of(board.game, f)) for f in formats.formats_of(board)],
            title=board.title(),
            seat_names=board.rules.seat_names,
        )

    async def picture(self, request: Request) -> Response:
        number = request.path_params["number"]
        board = pages.board(self.site, number)
        ply, seat = request.path_params["ply"], request.path_params["seat"]
        if seat not in (0, 1):
            raise NotShown(seat)
        position = pages.position_at(board, ply)
        last = pages.move_at(board, ply)
        tag = picture_tag(board.game, position, last)
        asked = request.path_params.get("tag")
        if asked is None:
            return RedirectResponse(
                f"/boards/{number}/picture/{ply}-{seat}.{tag}.svg",
                headers={"cache-control": "no-cache"},  # it names the picture of now
            )
        if asked != tag:  # that position is no longer this board's at that turn (an undo)
            raise NotShown(asked)
        svg = _picture(board.game, position, seat, last)
        return Response(
            svg,
            media_type="image/svg+xml",
            # Its address names what it shows: the same address never shows another.
            headers={"cache-control": "public, max-age=86400, immutable"},
        )

    async def record(self, request: Request) -> Response:
        board = pages.board(self.site, request.path_params["number"])
        suffix = request.path_params["suffix"]
        fmt = next(
            (f for f in formats.formats_of(board) if formats.suffix_of(board.game, f) == suffix),
            None,
        )
        if fmt is None:
            raise NotShown(suffix)
        text, ending = formats.record_in(board, fmt, self._site_name())
        name = f"{board.game}-{board.number}.{ending}"
        return Response(
            text,
            media_type=formats.media_type(board.game, ending),
            headers={"content-disposition": f'attachment; filename="{name}"'},
        )

    async def player(self, request: Request) -> Response:
        found = pages.player(self.site, request.path_params["userid"])
        return self.page("player.html", player=found, title=found.display)

    async def deadlines(self, request: Request) -> Response:
        """A player's deadlines as a calendar (``usecases.deadlines``), read afresh."""
        display, found = deadlines.player_deadlines(self.site, request.path_params["userid"])
        base = self.site.config.web.base  # never the request's Host
        domain = urlsplit(base).hostname or "localhost"
        ics = deadlines.calendar_of(display, found, base, domain, self.site.clock())
        return Response(
            ics, media_type="text/calendar; charset=utf-8", headers={"cache-control": "no-cache"}
        )

    async def ratings(self, request: Request) -> Response:
        return self.page(
            "ratings.html",
            lines=pages.ratings(self.site),
            provisional_games=PROVISIONAL_GAMES,
            title="Ratings",
        )

    async def archive(self, request: Request) -> Response:
        q = request.query_params
        unknown = sorted(set(q) - set(ARCHIVE_QUERY))
        if unknown:  # a filter not applied would show every game as if it were
            raise BadQuery(
                f"The archive does not know {', '.join(unknown)}; it takes "
                f"{', '.join(ARCHIVE_QUERY[:-1])} and {ARCHIVE_QUERY[-1]} (dates as YYYY-MM-DD)."
            )
        number = _int(q.get("page", "1"))
        found, more = pages.archive(
            self.site,
            page=number,
            game=q.get("game") or None,
            variant=q.get("variant") or None,
            player=q.get("player") or None,
            since=_date(q.get("since"), "since"),
            until=_date(q.get("until"), "until", next_day=True),
        )
        kept = {k: v for k, v in q.items() if k != "page" and v}
        return self.page(
            "archive.html",
            boards=found,
            query=kept,
            page=number,
            more=more,
            link=lambda n: "/archive?" + urlencode({**kept, "page": n}),
            games=games.names(),
            title="Archive",
        )

    async def board_feed(self, request: Request) -> Response:
        number = request.path_params["number"]
        board = pages.board(self.site, number)
        entries = pages.feed(self.site, number=number)
        return self._feed(f"/boards/{number}", board.title(), entries)

    async def player_feed(self, request: Request) -> Response:
        found = pages.player(self.site, request.path_params["userid"])
        entries = pages.feed(self.site, userid=found.userid)
        return self._feed(f"/players/{found.userid}", f"Games of {found.display}", entries)

    async def finished_feed(self, request: Request) -> Response:
        """Every game as it ends, the site over (``/feed``)."""
        entries = pages.finished_feed(self.site)
        return self._feed("", "Finished games", entries, alternate="/archive")

    def _feed(
        self, page: str, title: str, entries: list[pages.FeedEntry], alternate: str = ""
    ) -> Response:
        """An Atom feed (RFC 4287) at ``page``/feed: one entry a turn and one for a game's
        end, newest first; ``alternate``: the page it follows (``page`` unless given)."""
        base = self.site.config.web.base  # never the request's Host
        domain = urlsplit(base).hostname or "localhost"
        xml = self.templates.get_template("feed.xml").render(
            base=base,
            path=f"{page}/feed",
            alternate=alternate or page,
            domain=domain,
            title=title,
            entries=entries,
            updated=max((e.at for e in entries), default=datetime(2000, 1, 1, tzinfo=UTC)),
            names={name: games.get(name).title for name in games.names()},
        )
        return Response(xml, media_type="application/atom+xml")

    def _site_name(self) -> str:
        """The site as records name it: its web address, else its mail domain (never an
        address: the site shows none)."""
        base = self.site.config.web.base_url
        return urlsplit(base).netloc or self.site.mail_domain


def picture_tag(game: str, position: str, last: str) -> str:
    """What a picture's address says of what it shows: a short hash of the game, the
    position, the last move (marked on it) and pbm's version (which draws it). After an
    undo and another move the same turn has another position, so another address."""
    shown = f"{version()}\n{game}\n{position}\n{last}"
    return hashlib.blake2b(shown.encode(), digest_size=6).hexdigest()


@functools.lru_cache(maxsize=1024)
def _picture(game: str, position: str, seat: int, last: str) -> str:
    """A position's SVG from a seat: drawn once, for every visitor."""
    state = games.get(game).load(position)
    drawn = games.picture(state, seat, "", last)
    if drawn is None:
        raise NotShown(game)
    return drawn


def _int(text: str) -> int:
    return int(text) if text.isdigit() and len(text) < 7 else 1


class BadQuery(ValueError):
    """What a visitor asked for that the site does not take (a date that is none, or
    outside the years pbm takes; a filter it does not know): a 400 that says why."""


# The archive's query parameters, its form's names.
ARCHIVE_QUERY = ("game", "variant", "player", "since", "until", "page")


def _date(text: str | None, name: str, next_day: bool = False) -> datetime | None:
    """A date a visitor gave as ``name`` (YYYY-MM-DD), as the start of that day in UTC
    (``next_day``: of the day after, for "up to and with"); None if none was given.
    ``BadQuery`` for a text that is no such date, or a day outside ``site.TIME_RANGE``
    (a day after 9999-12-31 would overflow)."""
    if not text:
        return None
    try:
        if len(text) != 10:
            raise ValueError(text)
        day = date.fromisoformat(text)
    except ValueError:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise BadQuery(f"{name}={shown} is no date: write it as YYYY-MM-DD.") from None
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    if not in_range(start):
        raise BadQuery(f"{TIME_RANGE}, not {day.isoformat()}.")
    return start + timedelta(days=1) if next_day else start

"""The events' pages of the web site: ``/tournaments`` (every event, and the leagues),
``/tournaments/T`` (standings with every figure, the crosstable with each result a
link to its game, the boards), ``/leagues/GAME`` (a season's divisions), and an Atom
feed of each. Read through ``pbm.usecases.events.event_pages``; nothing is written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from pbm.usecases.events import event_pages
from pbm.usecases.events.crosstable import number
from pbm.usecases.site import Site

Page = Callable[..., HTMLResponse]


class EventViews:
    """The events' pages; ``page`` renders a template as the site's other pages do."""

    def __init__(self, site: Site, templates: Environment, page: Page) -> None:
        self.site = site
        self.templates = templates
        self.page = page
        templates.globals["points"] = number

    def routes(self) -> list[Route]:
        return [
            Route("/tournaments", self.events),
            Route("/tournaments/feed", self.events_feed),
            Route("/tournaments/{number:int}", self.event),
            Route("/tournaments/{number:int}/feed", self.event_feed),
            Route("/leagues/{game:str}", self.league),
            Route("/leagues/{game:str}/feed", self.league_feed),
        ]

    async def events(self, request: Request) -> Response:
        found = event_pages.events(self.site)
        return self.page("tournaments.html", found=found, title="Tournaments")

    async def event(self, request: Request) -> Response:
        found = event_pages.event(self.site, request.path_params["number"])
        return self.page("tournament.html", page=found, title=found.event.name)

    async def league(self, request: Request) -> Response:
        variant = request.query_params.get("variant") or None
        name, divisions = event_pages.league(self.site, request.path_params["game"], variant)
        return self.page(
            "league.html",
            league_name=name,
            divisions=divisions,
            game=request.path_params["game"],
            title=name,
        )

    async def events_feed(self, request: Request) -> Response:
        return self._feed("/tournaments/feed", "Tournaments", event_pages.events_feed(self.site))

    async def event_feed(self, request: Request) -> Response:
        number = request.path_params["number"]
        page, items = event_pages.event_feed(self.site, number)
        return self._feed(f"/tournaments/{number}/feed", page.event.name, items)

    async def league_feed(self, request: Request) -> Response:
        game = request.path_params["game"]
        variant = request.query_params.get("variant") or None
        name, items = event_pages.league_feed(self.site, game, variant)
        return self._feed(f"/leagues/{game}/feed", name, items)

    def _feed(self, path: str, title: str, items: Sequence[event_pages.FeedItem]) -> Response:
        """An Atom feed (RFC 4287), newest first."""
        base = self.site.config.web.base  # never the request's Host
        xml = self.templates.get_template("eventfeed.xml").render(
            base=base,
            path=path,
            domain=urlsplit(base).hostname or "localhost",
            title=title,
            items=items,
            updated=max((i.at for i in items), default=datetime(2000, 1, 1, tzinfo=UTC)),
        )
        return Response(xml, media_type="application/atom+xml")


def views(site: Site, templates: Environment, page: Any) -> EventViews:
    return EventViews(site, templates, page)

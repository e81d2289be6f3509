"""A board picture as layers: a backdrop every position from a seat shares, and sprites.

A game may draw its picture this way (``GameState.layers``) instead of as one
SVG document: the backdrop is the empty board with its names, and each sprite
is what stands on one spot (a stack, the last move's outline), drawn around
(0, 0) and put at whole pixels. ``Layers.document`` joins them into the same
SVG any other game gives; a renderer that knows layers (``pbm.mail.pictures``)
draws the backdrop once and each distinct sprite once, and only lays them
together for a new position. Pure values: strings and numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Layers", "Sprite"]


@dataclass(frozen=True, slots=True)
class Sprite:
    """What stands on one spot: ``drawing`` (SVG elements around (0, 0), within a
    square ``size`` pixels wide, ``size`` even) put with its centre at (``x``, ``y``).
    ``attributes``: the group's own (``class``, ``data-``), which do not change how it
    looks."""

    x: int
    y: int
    size: int
    drawing: str
    attributes: str = ""

    def __post_init__(self) -> None:
        if self.size <= 0 or self.size % 2:
            raise ValueError(f"a sprite's size must be even and positive, not {self.size}")

    def placed(self) -> str:
        """The sprite as a group of the whole picture."""
        extra = f" {self.attributes}" if self.attributes else ""
        return f'<g{extra} transform="translate({self.x} {self.y})">{self.drawing}</g>'

    def alone(self) -> str:
        """The sprite as an SVG document of its own, ``size`` pixels square."""
        half = self.size // 2
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.size}" height="{self.size}" '
            f'viewBox="{-half} {-half} {self.size} {self.size}">{self.drawing}</svg>'
        )


@dataclass(frozen=True, slots=True)
class Layers:
    """A picture ``width`` x ``height`` pixels: ``opening`` (its root ``<svg ...>`` tag,
    whose ``viewBox`` is ``0 0 width height``), ``title`` (escaped), ``backdrop`` (SVG
    elements), then ``sprites`` in drawing order. ``swatch``: sprites that show every
    colour a position can bring (every kind of piece on every kind of spot), from which
    a renderer takes the palette of all the seat's pictures."""

    width: int
    height: int
    opening: str
    title: str
    backdrop: str
    sprites: tuple[Sprite, ...]
    swatch: tuple[Sprite, ...] = ()

    def document(self) -> str:
        """The whole picture as one SVG document."""
        placed = "\n".join(s.placed() for s in self.sprites)
        return f"{self.opening}\n<title>{self.title}</title>\n{self.backdrop}\n{placed}\n</svg>\n"

    def backdrop_alone(self) -> str:
        """The backdrop as an SVG document (no title: it names no position)."""
        return f"{self.opening}\n{self.backdrop}\n</svg>\n"

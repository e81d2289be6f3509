"""Events, in one home: round robins (``tournaments``), leagues (``leagues``, ``seasons``)
and knockout cups (``cups``, ``bracket``). The arithmetic is pure: ``berger`` (the
pairings), ``standings`` (points and tiebreaks), ``withdrawal`` (the fair way of
leaving), ``crosstable``. ``running`` starts and ends events, ``new_boards`` makes
their boards, ``event_changes`` writes them, ``event_timers`` is what ``pbm tick``
does for them, ``event_pages`` is what the web site shows."""

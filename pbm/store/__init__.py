"""The database: tables (``tables``), connection and migrations (``engine``), the inbox
and outbox queues (``inbox``, ``outbox``), and every statement the use cases need, by
subject (``accounts``, ``stops``, ``boards``, ``lists``, ``pages``, ``limits``...). Use
cases build on it; it knows none.

``Session`` is the session a use case is handed and passes on to the store's
functions: named here, so that nothing above the store imports the database library.
"""

from sqlmodel import Session

__all__ = ["Session"]

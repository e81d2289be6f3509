"""The database: tables (``tables``), connection and migrations (``engine``), and the
inbox and outbox queues (``inbox``, ``outbox``). Use cases build on it; it knows none."""

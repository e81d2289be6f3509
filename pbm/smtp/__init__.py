"""The front door for mail: SMTP, or LMTP behind a mail server, into the inbox.

``lifecycle`` listens and stops, ``protocol`` is aiosmtpd's as pbm speaks it,
``handler`` decides each command (a mail is in the inbox before its 250),
``rates`` keeps each client's minute, ``codes`` holds every reply.
"""

"""The replies pbm's listener gives, in one place (RFC 5321 §4.2, RFC 3463 codes).

The same replies serve SMTP and LMTP (RFC 2033 §4.1: LMTP uses SMTP's reply
codes); after DATA, LMTP answers once per accepted recipient (``LMTP_*``).
"""

# RFC 5321 §4.2.2 reply codes with RFC 3463 enhanced status codes.
OK_SENDER = "250 2.1.0 OK"
OK_RCPT = "250 2.1.5 OK"
# The message is committed to the inbox before this is sent (RFC 5321 §6.1:
# once 250 is given the server is responsible for the message).
OK_QUEUED = "250 2.0.0 OK: queued as {id}"
# A temporary failure: the client keeps the message and retries (RFC 5321 §4.2.1, 4yz).
TRY_AGAIN = "451 4.3.0 Temporary failure, please try again later"
# We relay nothing: only our own address and its reply-token addresses (RFC 5321 §3.6.2).
NO_SUCH_USER = "550 5.1.1 <{address}>: no such mailbox here (this server relays no mail)"
# One of our reply or bounce addresses (pbm+...@our domain) whose token we did not make:
# RFC 5321 §4.2.3's wording for 550, "Requested action not taken: mailbox unavailable"
# (§3.3: a server refuses at RCPT a recipient it will not take); RFC 3463 X.1.1.
NO_SUCH_ADDRESS = "550 5.1.1 <{address}>: Requested action not taken: mailbox unavailable"
NO_RECIPIENTS = "554 5.5.1 No valid recipients"

# More recipients than smtp.max_recipients (RFC 5321 §4.5.3.1.8, the recipients
# buffer; §4.5.3.1.10: 452 is the code for too many recipients; RFC 3463 X.5.3).
# The client sends the mail to the others in a transaction of its own.
TOO_MANY_RECIPIENTS = "452 4.5.3 Too many recipients"
# More connections from one address than smtp.connections_per_minute: the
# greeting is a 421 and the connection is closed (RFC 5321 §3.8, §4.2.1;
# RFC 3463 X.7.0). The client tries again later.
TOO_MANY_CONNECTIONS = "421 4.7.0 Too many connections from your address, try again later"
# More mails from one address than smtp.messages_per_minute: MAIL FROM gets a
# 451 (RFC 5321 §4.2.1, §4.2.2: 451 "local error in processing", the client
# retries; RFC 3463 X.7.1: not allowed now).
TOO_MANY_MAILS = "451 4.7.1 Too many mails from your address, try again later"

# LMTP after DATA: one reply per accepted recipient, in RCPT order (RFC 2033 §4.2),
# each naming its recipient as RFC 2033's examples do. The mail is committed once,
# for all of them, before the first 250; if that fails, each gets the 451.
LMTP_QUEUED = "250 2.0.0 <{address}> OK: queued as {id}"
LMTP_TRY_AGAIN = "451 4.3.0 <{address}> Temporary failure, please try again later"

# An envelope address with control characters in it (a NUL, say): RFC 5321 §4.2.2,
# 553 "mailbox name not allowed"; RFC 3463 X.1.3, bad syntax. Nothing of it is stored.
BAD_ADDRESS = "553 5.1.3 Mailbox name not allowed: control characters"
# STARTTLS in a session that already speaks TLS: RFC 3207 §4.2 (a client MUST NOT
# send it again; 503, bad sequence of commands; RFC 3463 X.5.1).
TLS_ACTIVE = "503 5.5.1 TLS is already active"
# AUTH, which pbm neither offers nor implements (it has no SMTP logins; EHLO does not
# advertise it, RFC 4954 §3): RFC 5321 §4.2.4, 502 "command not implemented";
# RFC 3463 X.5.1, invalid command.
NO_AUTH = "502 5.5.1 Command not implemented: this server has no logins"
# A mail larger than smtp.max_message_bytes (RFC 5321 §4.5.3.1.7, RFC 1870 §6.3;
# RFC 3463 X.3.4). Over LMTP, once per accepted recipient (RFC 2033 §4.2).
TOO_BIG = "552 5.3.4 Message too big for this server"
LMTP_TOO_BIG = "552 5.3.4 <{address}> Message too big for this server"

"""The SMTP replies pbm's listener gives, in one place (RFC 5321 §4.2, RFC 3463 codes)."""

# RFC 5321 §4.2.2 reply codes with RFC 3463 enhanced status codes.
OK_RCPT = "250 2.1.5 OK"
# The message is committed to the inbox before this is sent (RFC 5321 §6.1:
# once 250 is given the server is responsible for the message).
OK_QUEUED = "250 2.0.0 OK: queued as {id}"
# A temporary failure: the client keeps the message and retries (RFC 5321 §4.2.1, 4yz).
TRY_AGAIN = "451 4.3.0 Temporary failure, please try again later"
# We relay nothing: only our own address and its reply-token addresses (RFC 5321 §3.6.2).
NO_SUCH_USER = "550 5.1.1 <{address}>: no such mailbox here (this server relays no mail)"
NO_RECIPIENTS = "554 5.5.1 No valid recipients"

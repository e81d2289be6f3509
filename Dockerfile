# pbm in a container: `pbm serve` on the embedded default (an SQLite file and a
# Maildir outbox), everything it keeps in the volume /var/lib/pbm (the config
# with its mail.secret too), SMTP on port 2525.
#
#   docker build -t pbm .
#   docker run -d --name pbm -p 2525:2525 -v pbm-data:/var/lib/pbm \
#       -e PBM_MAIL_ADDRESS=pbm@games.example.org pbm
#   docker exec pbm pbm status
#
# Any config key can be set with its PBM_SECTION_NAME variable (docs/deploying.md).
FROM python:3.11-slim

RUN useradd --system --user-group --home-dir /var/lib/pbm --shell /usr/sbin/nologin pbm \
    && mkdir -p /var/lib/pbm \
    && chown pbm:pbm /var/lib/pbm

WORKDIR /opt/pbm
COPY pyproject.toml README.md LICENSE ./
COPY pbm ./pbm
RUN pip install --no-cache-dir '.[postgres]' && rm -rf /opt/pbm/pbm /opt/pbm/build

ENV PBM_CONFIG=/var/lib/pbm/pbm.toml \
    PBM_SMTP_LISTEN=0.0.0.0:2525 \
    PYTHONUNBUFFERED=1
USER pbm
WORKDIR /var/lib/pbm
VOLUME ["/var/lib/pbm"]
EXPOSE 2525

# init writes the config once (kept afterwards) and creates or upgrades the database.
CMD ["sh", "-c", "pbm init && exec pbm serve"]

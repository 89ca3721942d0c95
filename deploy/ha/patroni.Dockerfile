# PostgreSQL 16 under Debian's Patroni (docs/operations.md "PostgreSQL through Patroni").
FROM postgres:16-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends patroni python3-etcd \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/patroni && chown postgres:postgres /var/lib/postgresql/patroni
COPY --chown=postgres:postgres deploy/ha/patroni.yml /etc/patroni/patroni.yml
COPY --chown=postgres:postgres deploy/ha/post-bootstrap.sh /etc/patroni/post-bootstrap.sh
USER postgres
HEALTHCHECK --interval=5s --timeout=3s --retries=10 CMD ["python3", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8008/health', timeout=2)"]
ENTRYPOINT ["patroni", "/etc/patroni/patroni.yml"]

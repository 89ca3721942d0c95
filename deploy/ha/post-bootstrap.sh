#!/bin/sh
# Run once by Patroni after it created the cluster: the service's role and
# database. Patroni passes a connection string to the new primary.
set -eu
psql "$1" -v ON_ERROR_STOP=1 -v pw="$POLICIA_DB_PASSWORD" <<'SQL'
create role policia login password :'pw';
create database policia owner policia;
SQL

#!/bin/sh
# Writes the secret files compose.yaml reads (./secrets/, beside compose.yaml), once: a file that
# exists is kept, so running it again never changes a key the database already depends on.
#
#   scripts/compose-secrets.sh
#
# The directory is 0700 (only its owner on the host reads the secrets); the files are 0644 so the
# containers' own users (emend's uid 10001, postgres) can read the bind-mounted copies.
set -eu
cd "$(dirname "$0")/.."
umask 077
mkdir -p secrets
chmod 0700 secrets

write() { # name value
  if [ ! -s "secrets/$1" ]; then
    printf '%s' "$2" > "secrets/$1"
    echo "wrote secrets/$1"
  fi
  chmod 0644 "secrets/$1"
}

hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

write postgres_password "$(hex 24)"
write database_url "postgres://emend:$(cat secrets/postgres_password)@postgres:5432/emend"
write emend_secret_key "$(hex 32)"


#!/bin/sh
# Writes the secret files compose.yaml reads (./secrets/, beside compose.yaml), once: a file that
# exists is kept, so running it again never changes a key the database already depends on.
#
#   scripts/compose-secrets.sh            # podman (compose.yaml's defaults)
#   scripts/compose-secrets.sh --docker   # also writes .env with Docker's sandbox options
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

if [ "${1:-}" = "--docker" ]; then
  if [ -e .env ] && grep -q '^EMEND_PROC_OPT=' .env; then
    echo ".env already names Docker's sandbox options"
  else
    umask 022
    cat >> .env <<'ENV'
# Docker's spelling of what the sandbox needs (compose.yaml, x-sandbox-security).
EMEND_PROC_OPT=systempaths=unconfined
EMEND_SECCOMP_OPT=seccomp=unconfined
EMEND_APPARMOR_OPT=apparmor=unconfined
ENV
    echo "wrote Docker's sandbox options to .env"
  fi
fi

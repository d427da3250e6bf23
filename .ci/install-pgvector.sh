#!/usr/bin/env bash
# Installs pgvector into the machine's PostgreSQL server when it is missing.
# Debian 12 (bookworm) does not package pgvector, so we build it from Debian trixie's
# source package against postgresql-server-dev-<major>, using a private apt configuration
# so the system's own sources stay untouched.
set -euo pipefail

pg_major=$(ls /etc/postgresql | sort -n | tail -1)
ext_dir="/usr/share/postgresql/${pg_major}/extension"
if ls "$ext_dir"/vector.control >/dev/null 2>&1; then
  echo "pgvector already installed for PostgreSQL ${pg_major}"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "postgresql-server-dev-${pg_major}" dpkg-dev make gcc >/dev/null

work=$(mktemp -d); chmod 755 "$work"
mkdir -p "$work/lists/partial" "$work/archives/partial"
cat > "$work/sources.list" <<SRC
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
SRC
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
          -o "Dir::State::Lists=$work/lists" -o "Dir::Cache::Archives=$work/archives")
apt-get "${apt_opts[@]}" update -qq
( cd "$work" && apt-get "${apt_opts[@]}" source -qq pgvector >/dev/null )
src=$(find "$work" -maxdepth 1 -type d -name 'pgvector-*' | head -1)
make -s -C "$src" PG_CONFIG="/usr/lib/postgresql/${pg_major}/bin/pg_config" OPTFLAGS="" >/dev/null
make -s -C "$src" PG_CONFIG="/usr/lib/postgresql/${pg_major}/bin/pg_config" install >/dev/null
rm -rf "$work"
echo "pgvector built and installed for PostgreSQL ${pg_major}"

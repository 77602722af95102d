#!/usr/bin/env bash
# mysqlclient compiles against the MariaDB/MySQL client headers, found through pkg-config.
set -euo pipefail
if command -v pkg-config >/dev/null 2>&1 && { pkg-config --exists mysqlclient || pkg-config --exists libmariadb; }; then
  exit 0
fi
packages="pkg-config libmariadb-dev build-essential"
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing the MariaDB client headers mysqlclient needs: $packages"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
else
  echo "mysqlclient needs the MariaDB/MySQL client headers. Install them with:" >&2
  echo "  sudo apt-get install $packages        (Debian/Ubuntu)" >&2
  echo "  brew install mysql-client pkg-config  (macOS)" >&2
  exit 1
fi

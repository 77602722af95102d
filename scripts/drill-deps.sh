#!/usr/bin/env bash
# What `make drills` starts besides the product (e2e/cluster.py): Debian's MariaDB server with
# Galera and mariabackup (the full copy a joining node takes, streamed with socat), Redis with
# Sentinel, HAProxy. Installed when missing and allowed (root with apt-get); otherwise named.
set -euo pipefail
needed=()
command -v mariadbd >/dev/null 2>&1 || needed+=(mariadb-server)
[ -e /usr/lib/galera/libgalera_smm.so ] || needed+=(galera-4)
command -v mariabackup >/dev/null 2>&1 || needed+=(mariadb-backup)
command -v socat >/dev/null 2>&1 || needed+=(socat)
command -v redis-server >/dev/null 2>&1 || needed+=(redis-server)
command -v redis-sentinel >/dev/null 2>&1 || needed+=(redis-sentinel)
command -v haproxy >/dev/null 2>&1 || needed+=(haproxy)
[ ${#needed[@]} = 0 ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing what the drills start: ${needed[*]}"
  # Installing mariadb-server or redis-server must not start Debian's own services: the drills
  # run their own, and this machine may already serve 3306 and 6379. A policy already there
  # (Debian's container images ship one) is left as it is.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${needed[@]}" >/dev/null
else
  echo "The drills need: ${needed[*]}. Install them with:" >&2
  echo "  sudo apt-get install ${needed[*]}" >&2
  exit 1
fi

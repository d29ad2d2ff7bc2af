#!/bin/sh
# Checks the Debian packages retrysim needs and installs the missing ones.
# As root it runs apt-get; otherwise it prints the exact command and fails.
# Usage: tools/deps.sh   (called by `make deps`; safe to run again)
set -eu

# pkg-config module or command  ->  Debian package
missing=""
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
if command -v pkg-config >/dev/null 2>&1; then
  pkg-config --exists gsl     || missing="$missing libgsl-dev"
  pkg-config --exists jansson || missing="$missing libjansson-dev"
  pkg-config --exists cmocka  || missing="$missing libcmocka-dev"
else
  missing="$missing libgsl-dev libjansson-dev libcmocka-dev"
fi
command -v gnuplot >/dev/null 2>&1 || missing="$missing gnuplot-nox"

[ -z "$missing" ] && exit 0

cmd="apt-get update && apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "deps: installing$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends $missing >&2
  exit 0
fi
echo "deps: missing packages:$missing" >&2
echo "deps: run as root:  $cmd" >&2
exit 1

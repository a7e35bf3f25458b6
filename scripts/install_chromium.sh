#!/bin/sh
# Headless Chromium for the report's browser test (tests/report/test_browser.py).
# Installs Debian's `chromium` package when /usr/bin/chromium is missing; runs
# `apt-get update` only when the package is not already known to apt.  Quiet.
set -eu
[ -x /usr/bin/chromium ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# A stale package list can name files the mirror no longer has: then update and try again.
if ! apt-cache show chromium >/dev/null 2>&1 \
   || ! $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; then
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
[ -x /usr/bin/chromium ] || { echo "install_chromium: /usr/bin/chromium still missing" >&2; exit 1; }

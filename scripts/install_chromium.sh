#!/bin/sh
# Headless Chromium for the report's browser test (tests/report/test_browser.py).
# Installs Debian's `chromium` package when /usr/bin/chromium is missing; runs
# `apt-get update` only when the package is not already known to apt.  Quiet.
set -eu
[ -x /usr/bin/chromium ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if ! apt-cache show chromium >/dev/null 2>&1; then
    $SUDO apt-get update -qq >/dev/null
fi
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
[ -x /usr/bin/chromium ] || { echo "install_chromium: /usr/bin/chromium still missing" >&2; exit 1; }

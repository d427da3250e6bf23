#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (test/browser.test.ts) when it is missing.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "chromium already installed"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
echo "chromium installed: $(/usr/bin/chromium --version)"

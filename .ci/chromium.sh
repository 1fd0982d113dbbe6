#!/usr/bin/env bash
# Sourced by .ci/run: makes sure headless Chromium (Debian's package) is installed for the browser tests
# (test/support/browser.ts), and sets REQUIRE_BROWSER=1 so that a missing browser fails them instead of
# skipping them. Without it, `npm test` skips browser tests with one line saying why.
if ! command -v chromium >/dev/null 2>&1; then
  echo "ci: installing Chromium from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
export CHROMIUM_PATH="$(command -v chromium)"
export REQUIRE_BROWSER=1
echo "ci: $("$CHROMIUM_PATH" --version 2>/dev/null | head -n 1) at $CHROMIUM_PATH"

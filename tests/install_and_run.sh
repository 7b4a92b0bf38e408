#!/usr/bin/env bash
# Install everything the tests need on a fresh Debian or Ubuntu machine, then run the whole suite.
# This is the README's test command; .ci/run calls it too.  Arguments go to pytest
# (e.g. `bash tests/install_and_run.sh -m "not browser and not slow"`).
#
# It installs:
# - Debian packages: chromium (the browser tests drive it through Playwright; nothing is
#   downloaded by Playwright itself), fonts-noto-core, fonts-noto-cjk and fonts-noto-color-emoji
#   (every sample's script drawn in screenshots: Thai, Devanagari, Hebrew, Arabic, CJK, emoji),
#   haproxy (the workshop command `python -m ui.serve` puts it in front of the app processes);
# - Python packages: requirements-dev.txt, i.e. this project (editable) with its test extras
#   (pytest, hypothesis, playwright, axe-playwright-python, tokenizers, tiktoken, ruff, vulture) and Dask.
# Packages already installed are left as they are; apt-get runs through sudo when not root.
set -euo pipefail
cd "$(dirname "$0")/.."

system_packages=(chromium fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji haproxy)
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for package in "${system_packages[@]}"; do  # a removed package's config left behind is not installed
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$package")
  done
fi
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  echo "Installing Debian packages: ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
elif ! command -v dpkg-query >/dev/null 2>&1; then
  echo "Not Debian: install ${system_packages[*]} yourself; tests that need them skip" \
       "(and fail under CI=true)." >&2
fi

echo "Installing Python packages: requirements-dev.txt"
python -m pip install -q -r requirements-dev.txt
exec python -m pytest "$@"

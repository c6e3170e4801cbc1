#!/usr/bin/env bash
# Builds sot from the action's own source (the tag the workflow uses) with
# the Go toolchain on the runner, into $RUNNER_TEMP/sot-bin, and puts it on
# the PATH of the steps after this one.
set -euo pipefail
src="${SOT_ACTION_PATH:?SOT_ACTION_PATH must name the directory of the action}"
bin="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/sot-bin"
if ! command -v go >/dev/null 2>&1; then
  echo "::error::sot is built from source with Go; add actions/setup-go before this action"
  exit 1
fi
mkdir -p "$bin"
(cd "$src" && go build -o "$bin/sot" ./cmd/sot)
"$bin/sot" version
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$bin" >> "$GITHUB_PATH"
fi

#!/usr/bin/env bash
# Rebuild static/editor.js from the pinned packages in package.json.
# The built bundle is committed, so running the platform needs no Node.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
npm run build

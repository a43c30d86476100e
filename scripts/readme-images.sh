#!/usr/bin/env bash
# The README's pictures, made by trajan itself: a chart (`export chart`) and the top of an HTML
# report (`export report`, screenshot by headless Chromium), over the classify and demo fixtures
# classified by the heuristic and labelled by two reviewers.
#   TRAJAN=target/release/trajan scripts/readme-images.sh
set -euo pipefail
cd "$(dirname "$0")/.."
trajan=${TRAJAN:-target/release/trajan}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/readme.db
"$trajan" --db "$db" ingest fixtures/classify fixtures/demo >/dev/null
"$trajan" --db "$db" classify >/dev/null
ids=$("$trajan" --db "$db" runs --json | python3 -c 'import json,sys; print(" ".join(str(r["id"]) for r in json.load(sys.stdin)))')
set -- $ids
for id in "${@:1:8}"; do "$trajan" --db "$db" --rater alice label "$id" --mode context_flooding >/dev/null; done
for id in "${@:4:9}"; do "$trajan" --db "$db" --rater bob label "$id" --mode missed_edit_location --evidence 1 >/dev/null; done
mkdir -p docs/images
"$trajan" --db "$db" export chart agreement -o docs/images/chart-agreement.png
"$trajan" --db "$db" export report --filter "model:classify" -o "$work/report.html"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --window-size=1100,760 \
    --screenshot=docs/images/report.png "file://$work/report.html" 2>/dev/null
ls -l docs/images

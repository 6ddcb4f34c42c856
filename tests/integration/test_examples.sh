#!/usr/bin/env bash
# Every spec / adapter / engine combination docs/examples/README.md lists runs as given: each row
# of its table, from another directory than the repository, with the table's own arguments.  The
# spec of one chip on the adapter of another fails on C7 and names the two frequencies.
set -euo pipefail
: "${CS_BIN:?}" "${CS_SOURCE_DIR:?}" "${CS_WORK:?}"
rm -rf "$CS_WORK" && mkdir -p "$CS_WORK" && cd "$CS_WORK"
ex=$CS_SOURCE_DIR/docs/examples
fail() { echo "FAIL: $*" >&2; exit 1; }

rows=0
while IFS='|' read -r _ spec adapter engine _; do
  spec=$(echo "$spec" | tr -d ' `') adapter=$(echo "$adapter" | tr -d ' `')
  engine=$(echo "$engine" | tr -d '`' | sed 's/^ *//; s/ *$//')
  case $spec in spec_*.json) ;; *) continue ;; esac
  set -- $engine
  [ "$1" = --engine-config ] && set -- "$1" "$ex/$2"
  "$CS_BIN" run --spec "$ex/$spec" --config "$ex/$adapter" "$@" --no-txlog --table > out.txt 2> err.txt ||
    fail "$spec + $adapter + $engine: $(cat err.txt)"
  grep -q "transactions" out.txt || fail "$spec + $adapter + $engine printed no result"
  rows=$((rows + 1))
done < "$ex/README.md"
[ $rows -ge 9 ] || fail "only $rows combinations found in docs/examples/README.md"
for f in "$ex"/spec_*.json "$ex"/adapter_*.json "$ex"/engine_*.json; do
  grep -q "$(basename "$f")" "$ex/README.md" || fail "$(basename "$f") is in no combination of the README"
done

# another chip's spec: the C7 message names both frequencies
rc=0
"$CS_BIN" run --spec "$ex/spec_allreduce.json" --config "$ex/adapter_vcnet.json" \
  --engine-config "$ex/engine_vcnet.json" --no-txlog 2> c7.txt || rc=$?
[ $rc = 1 ] && grep -q "C7: chip_spec_summary.noc_frequency_ghz = 2 differs from the adapter's noc_frequency_ghz = 1" c7.txt ||
  fail "C7 message: $(cat c7.txt)"
echo "test_examples: $rows combinations run"

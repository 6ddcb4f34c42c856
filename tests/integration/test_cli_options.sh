#!/usr/bin/env bash
# The option tables of the subcommands (include/commsweep/cli_opts.h): every command that
# `commsweep --help` lists refuses an unknown option with exit status 2 and a message naming
# the command and the option; values are parsed whole and checked against their option's rule;
# "--name=VALUE" means "--name VALUE"; --help prints every option of the table.
set -euo pipefail
: "${CS_BIN:?}" "${CS_SOURCE_DIR:?}" "${CS_WORK:?}"
rm -rf "$CS_WORK" && mkdir -p "$CS_WORK" && cd "$CS_WORK"
ex=$CS_SOURCE_DIR/docs/examples
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect STATUS MESSAGE COMMAND...: the command exits with STATUS and prints MESSAGE on stderr
expect() {
  local want=$1 msg=$2 rc=0
  shift 2
  "$@" > out.txt 2> err.txt || rc=$?
  [ "$rc" = "$want" ] || fail "$*: exit status $rc, expected $want: $(cat err.txt)"
  grep -qF -- "$msg" err.txt || fail "$*: expected '$msg' in: $(cat err.txt)"
}

# the commands, as the top-level help lists them (a new command is covered by itself)
"$CS_BIN" --help > top.txt
commands=$(sed -n '/^commands:/,/^$/p' top.txt | awk 'NF > 1 && $1 != "commands:" {print $1}')
[ "$(echo "$commands" | wc -w)" -ge 13 ] || fail "commands in the help: $commands"
for c in $commands; do
  expect 2 "commsweep $c: unknown option '--no-such-option'" "$CS_BIN" "$c" --no-such-option
  grep -qF "(commsweep $c --help lists the options)" err.txt || fail "$c: no hint: $(cat err.txt)"
  "$CS_BIN" "$c" --help > help.txt || fail "$c --help"
  grep -q -- "-h, --help" help.txt || fail "$c --help does not list -h, --help"
done

# one option of each kind
expect 2 "commsweep show: option '--limit' needs a value" "$CS_BIN" show f.h5 --limit
expect 2 "commsweep show: --limit wants a count, got '3x'" "$CS_BIN" show f.h5 --limit 3x
expect 2 "commsweep show: unexpected argument 'g.h5'" "$CS_BIN" show f.h5 g.h5
expect 2 "commsweep netbench: --vcs wants a non-negative integer, got '2x'" "$CS_BIN" netbench --vcs 2x
expect 2 "commsweep netbench: --delays wants four stage delays RC,VA,SA,ST, got '1,1,1'" \
  "$CS_BIN" netbench --delays 1,1,1
expect 2 "commsweep sweep: --txlog wants full, steps or none, got 'some'" \
  "$CS_BIN" sweep s.json --out o.h5 --txlog some
expect 2 "commsweep sweep: unknown option '--dry-run=yes'" "$CS_BIN" sweep s.json --dry-run=yes
expect 2 "commsweep run: --deadlock-ticks wants a positive integer, got '0'" \
  "$CS_BIN" run --deadlock-ticks 0
expect 2 "commsweep faults: --trials wants a non-negative integer, got '-1'" \
  "$CS_BIN" faults --trials -1
# "--name=VALUE" is "--name VALUE"
"$CS_BIN" run --engine=math --spec="$ex/spec_allreduce.json" --config "$ex/adapter_2die.json" \
  --no-txlog --table > table.txt || fail "run with --name=VALUE"
grep -q "math" table.txt || fail "run --engine=math: $(cat table.txt)"
# every option of a table is in its --help
"$CS_BIN" sweep --help > help.txt
for o in --out --dry-run --txlog --results-only --progress --quiet --verify-log --retry-failed \
         --break-lock --refine --calibration; do
  grep -q -- "$o" help.txt || fail "sweep --help does not list $o"
done
echo "cli options: ok"

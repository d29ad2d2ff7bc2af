#!/bin/sh
# Issue 11: a study run past one process, through GNU parallel, gives exactly the files of one
# local run. A small sweep with replications runs (1) as one local `retrysim run`, (2) as the
# shard commands `retrysim plan --shards 4` prints, run by `parallel`, then the merge line it
# prints, and (3) as docs/scaling-out.md's recipe (`parallel ... --shard {}/4 ::: 1 2 3 4`, then
# `retrysim merge`). Every file of (2) and (3) must equal (cmp) the local run's, and the file
# lists must be the same. Then merge must refuse a missing shard and a shard given twice.
# Installs GNU parallel as root (tools/ops/deps.sh parallel); otherwise says which command to run.
# Usage: BUILD=build sh tools/test/test-parallel.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
sh "$ops/deps.sh" parallel || { echo "test-parallel: FAIL: GNU parallel missing"; exit 1; }
command -v parallel >/dev/null 2>&1 || { echo "test-parallel: FAIL: parallel not on PATH"; exit 1; }
# Debian's moreutils also has a `parallel`: this must be GNU's.
parallel --version 2>/dev/null | grep -q 'GNU parallel' ||
  { echo "test-parallel: FAIL: $(command -v parallel) is not GNU parallel (moreutils?)"; exit 1; }

t_tmp
# The commands plan prints name `retrysim`: this build's comes first on PATH.
t_bindir
PATH="$bindir:$PATH"
export PATH

# The first failure ends the script (the later steps use what the earlier ones made).
fail() {
  echo "test-parallel: FAIL: $*"
  exit 1
}

# A sweep of 2 rates x 2 variants x 3 replications = 12 runs of 40 simulated seconds (the
# trigger is at 20-35 s), every point and variant on the same three seeds.
set -- experiments/quickstart.json --duration 40s --reps 3 \
  --variant no-retries --variant throttled --sweep clients.web.arrival.rate=1500/s,2500/s --quiet

# same_files A B WHAT: A and B hold the same files, each byte-identical (B's shard folders,
# where the merged files sit beside them, are not compared).
same_files() {
  (cd "$1" && find . -maxdepth 1 -type f | LC_ALL=C sort) >"$tmp/list-a"
  (cd "$2" && find . -maxdepth 1 -type f | LC_ALL=C sort) >"$tmp/list-b"
  if ! cmp -s "$tmp/list-a" "$tmp/list-b"; then
    diff "$tmp/list-a" "$tmp/list-b"
    fail "$3: not the same files as the local run"
  fi
  [ -s "$tmp/list-a" ] || fail "$3: no files at all"
  while IFS= read -r f; do
    cmp "$1/$f" "$2/$f" || fail "$3: $f differs from the local run's"
  done <"$tmp/list-a"
}

# (1) one local run
retrysim run "$@" --out "$tmp/local" >"$tmp/local.log" 2>&1 ||
  { cat "$tmp/local.log"; fail "the local run failed"; }
[ -s "$tmp/local/summary.json" ] || fail "the local run wrote no summary.json"
n_runs=$(sed -n 's/.*"n_runs": *\([0-9]*\).*/\1/p' "$tmp/local/summary.json" | head -n 1)
[ "${n_runs:-}" = 12 ] || fail "the local study has n_runs '${n_runs:-}', expected 12"

# (2) what plan prints: 4 shard lines, then the merge line
retrysim plan "$@" --shards 4 --out "$tmp/planned" >"$tmp/plan.txt" 2>"$tmp/plan.log" ||
  { cat "$tmp/plan.log"; fail "retrysim plan failed"; }
[ "$(wc -l <"$tmp/plan.txt")" -eq 5 ] || { cat "$tmp/plan.txt"; fail "plan printed not 5 lines"; }
head -n -1 "$tmp/plan.txt" >"$tmp/shards.txt"
tail -n 1 "$tmp/plan.txt" >"$tmp/merge.txt"
k=1
while IFS= read -r line; do
  case "$line" in
    *"--shard $k/4"*"--out $tmp/planned/shard-$k"* | *"--out $tmp/planned/shard-$k"*"--shard $k/4"*) ;;
    *) fail "plan's line $k is not shard $k/4 into $tmp/planned/shard-$k: $line" ;;
  esac
  k=$((k + 1))
done <"$tmp/shards.txt"
grep -q "merge.*--out $tmp/planned" "$tmp/merge.txt" || fail "plan's last line is no merge: $(cat "$tmp/merge.txt")"
parallel -j 2 --halt now,fail=1 <"$tmp/shards.txt" >"$tmp/par.log" 2>&1 ||
  { cat "$tmp/par.log"; fail "parallel running plan's shard lines failed"; }
for k in 1 2 3 4; do
  [ -s "$tmp/planned/shard-$k/shard.json" ] || fail "shard $k wrote no shard.json"
done
sh "$tmp/merge.txt" >"$tmp/merge.log" 2>&1 || { cat "$tmp/merge.log"; fail "plan's merge line failed"; }
same_files "$tmp/local" "$tmp/planned" "plan + parallel + merge"

# (3) docs/scaling-out.md's recipe, as written there (from the top of the tree)
parallel -j 2 --halt now,fail=1 retrysim run "$@" -j 1 --shard {}/4 --out "$tmp/recipe/shard-{}" \
  ::: 1 2 3 4 >"$tmp/recipe.log" 2>&1 || { cat "$tmp/recipe.log"; fail "the parallel recipe failed"; }
retrysim merge "$tmp"/recipe/shard-* --out "$tmp/recipe" >"$tmp/rmerge.log" 2>&1 ||
  { cat "$tmp/rmerge.log"; fail "merging the recipe's shards failed"; }
same_files "$tmp/local" "$tmp/recipe" "parallel recipe + merge"

# merge refuses an incomplete or duplicated set of shards (exit 2), and writes nothing.
retrysim merge "$tmp/recipe/shard-1" "$tmp/recipe/shard-2" "$tmp/recipe/shard-4" \
  --out "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$tmp/bad.log"; fail "merge of shards 1, 2, 4 of 4 exited $rc, not 2"; }
[ -e "$tmp/bad/summary.json" ] && fail "merge of an incomplete set wrote summary.json"
retrysim merge "$tmp"/recipe/shard-1 "$tmp"/recipe/shard-1 "$tmp"/recipe/shard-2 \
  "$tmp"/recipe/shard-3 "$tmp"/recipe/shard-4 --out "$tmp/bad2" >"$tmp/bad2.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$tmp/bad2.log"; fail "merge with shard 1 twice exited $rc, not 2"; }

echo "test-parallel: a sweep of 12 runs (2 rates x 2 variants x 3 replications) in 4 shards through GNU parallel ($(parallel --version |
  head -n 1)), merged, equals the local run (every file cmp-identical), both from plan's lines" \
  "and from the recipe; merge refuses a missing or duplicated shard"

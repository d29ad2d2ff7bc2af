#!/bin/sh
# Issue 11: docs/scaling-out.md's recipe for GNU parallel across machines (--sshloginfile),
# run as written, gives exactly the files of one local run. The "other machine" is an sshd
# this test starts on loopback (a free port, its own host key and authorized key, all in a
# temporary folder; nothing in ~/.ssh or /etc/ssh is touched), so the program, the scenario and
# the shards' folders really travel by ssh and rsync to and from another work directory.
# Stops the sshd it started. As root it installs what it needs (tools/ops/deps.sh ssh parallel);
# not as root it skips (exit 77), saying so: sshd must run as root to log a user in.
# Usage: BUILD=build sh tools/test/test-ssh.sh          (make test-ssh)
set -u
. "$(dirname "$0")/lib.sh"
need_bin
need_root "the test's sshd runs as root; CI runs this as root"
sh "$ops/deps.sh" ssh parallel || { echo "test-ssh: FAIL: could not install sshd, rsync, parallel"; exit 1; }
t_bindir
top=$(pwd)

tmp=$(mktemp -d /tmp/retrysim-ssh.XXXXXX)
remote="$tmp/remote"
cleanup() {
  if [ -f "$tmp/sshd.pid" ]; then
    kill "$(cat "$tmp/sshd.pid")" 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
  echo "test-ssh: FAIL: $*"
  [ -f "$tmp/sshd.log" ] && { echo "--- sshd.log"; tail -n 20 "$tmp/sshd.log"; }
  exit 1
}

# ---- an sshd on loopback, with keys of its own
ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key" || fail "ssh-keygen (host key)"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/id" || fail "ssh-keygen (user key)"
cp "$tmp/id.pub" "$tmp/authorized_keys"
chmod 0600 "$tmp/authorized_keys"
port=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$tmp/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $tmp/host_key
PidFile $tmp/sshd.pid
AuthorizedKeysFile $tmp/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
EOF
# sshd wants its privilege-separation folder (Debian's service makes it at boot).
mkdir -p /run/sshd
/usr/sbin/sshd -f "$tmp/sshd_config" -E "$tmp/sshd.log" || fail "sshd did not start"
login="ssh -p $port -i $tmp/id -o UserKnownHostsFile=$tmp/known_hosts -o StrictHostKeyChecking=no -o BatchMode=yes root@127.0.0.1"
i=0
until $login true 2>/dev/null; do
  i=$((i + 1))
  [ $i -ge 20 ] && fail "cannot log in to the test's sshd on 127.0.0.1:$port"
  sleep 0.25
done

# ---- the recipe, as docs/scaling-out.md writes it (the first sh block of its section), in a
# folder of its own holding the scenario; its work directory on the "remote" is replaced by one
# inside the test's folder.
mkdir -p "$tmp/here/experiments"
cp experiments/quickstart.json "$tmp/here/experiments/"
echo "2/$login" >"$tmp/here/hosts"
awk '/^## GNU parallel across machines/ { f = 1 } f && /^```sh/ { g = 1; next }
  g && /^```/ { exit } g { print }' "$top/docs/scaling-out.md" >"$tmp/recipe.sh"
grep -q -- '--sshloginfile hosts' "$tmp/recipe.sh" || fail "no --sshloginfile recipe in docs/scaling-out.md"
grep -q '/tmp/retrysim-study' "$tmp/recipe.sh" || fail "the recipe's work directory is not /tmp/retrysim-study"
sed "s|/tmp/retrysim-study|$remote|g" "$tmp/recipe.sh" >"$tmp/recipe-here.sh"
(cd "$tmp/here" && PATH="$bindir:$PATH" sh "$tmp/recipe-here.sh") >"$tmp/recipe.log" 2>&1 ||
  { cat "$tmp/recipe.log"; fail "the recipe failed"; }

# The shards ran over there (their folders are in the remote work directory) and came back.
for k in 1 2 3 4; do
  [ -s "$remote/study/shard-$k/shard.json" ] || fail "shard $k did not run in the remote work directory"
  [ -s "$tmp/here/study/shard-$k/shard.json" ] || fail "shard $k did not come back"
done
grep -q 'Accepted publickey' "$tmp/sshd.log" || fail "sshd logged no login"

# The same study, run here in one process, and the merged files compared.
(cd "$tmp/here" && "$bindir/retrysim" run experiments/quickstart.json --reps 20 --quiet \
  --out "$tmp/local") >"$tmp/local.log" 2>&1 || { cat "$tmp/local.log"; fail "the local run failed"; }
(cd "$tmp/local" && find . -maxdepth 1 -type f | LC_ALL=C sort) >"$tmp/list-a"
(cd "$tmp/here/study" && find . -maxdepth 1 -type f | LC_ALL=C sort) >"$tmp/list-b"
cmp -s "$tmp/list-a" "$tmp/list-b" || { diff "$tmp/list-a" "$tmp/list-b"; fail "not the same files as the local run"; }
[ -s "$tmp/list-a" ] || fail "the local run wrote no files"
while IFS= read -r f; do
  cmp "$tmp/local/$f" "$tmp/here/study/$f" || fail "$f differs from the local run's"
done <"$tmp/list-a"
logins=$(grep -c 'Accepted publickey' "$tmp/sshd.log")

pid=$(cat "$tmp/sshd.pid")
kill "$pid" 2>/dev/null
i=0
while kill -0 "$pid" 2>/dev/null && ! grep -q '^[0-9]* (.*) Z' "/proc/$pid/stat" 2>/dev/null; do
  i=$((i + 1))
  [ $i -ge 20 ] && fail "the test's sshd ($pid) does not stop"
  sleep 0.25
done
rm -f "$tmp/sshd.pid"
cd "$top" || exit 1
echo "test-ssh: docs/scaling-out.md's --sshloginfile recipe (60 runs in 4 shards, program and" \
  "scenario sent by --basefile, shards back by --return, $logins ssh logins to an sshd on" \
  "loopback) merged equals the local run, every file cmp-identical"

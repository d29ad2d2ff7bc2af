#!/bin/sh
# Checks the policy warnings of the retrysim command line (docs/cli.md, "Warnings"): each
# ignored field or probable unit mistake of a policy, inline or in a file, is one line
# "retrysim: warning: FILE: PATH: MESSAGE" on stderr, printed once however many variants load
# the policy; --strict (run and validate) makes the first one an error, exit 2, nothing
# written. Also the loader's file rules: /dev/zero and a FIFO are refused at once, a long
# policy path keeps its file name. Usage: BUILD=build sh tools/test/test-config-warnings.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
t_tmp
# run_rc (lib.sh) gives each run of retrysim at most 20 s.
T_TIMEOUT=20

# A scenario whose inline policy misspells retryPolicy (so it retries nothing) and whose
# variant b gives the Finagle budget a percent where a fraction belongs.
cat >"$tmp/s.json" <<'JSON'
{"duration": "2s", "seed": 1,
 "services": {"api": {"replicas": 1, "workers": 4, "service_time": "5ms"}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "50/s"},
   "methods": ["/pkg.Api/Get"],
   "policy": {"methodConfig": [{"name": [{}], "retryPolicies": {}}],
              "retrysim": {"budget": {"type": "finagle", "percentCanRetry": 0.2}}}}},
 "variants": [{"name": "a", "set": {"duration": "1s"}},
              {"name": "b", "set": {"clients.web.policy.retrysim.budget.percentCanRetry": 20}}]}
JSON
w1='retrysim: warning: '"$tmp"'/s.json: $.clients.web.policy.methodConfig[0].retryPolicies: unknown field "retryPolicies" ignored; did you mean "retryPolicy"?'
w2='retrysim: warning: '"$tmp"'/s.json: $.clients.web.policy.retrysim.budget.percentCanRetry: in variant "b": "percentCanRetry" 20 means that many retries per request: it is a fraction, 0.2 is 20 %'

run_rc 0 validate "$tmp/s.json"
line "$tmp/out" "$tmp/s.json: ok (2 runs)"
line "$tmp/err" "$w1"
line "$tmp/err" "$w2"
# Loaded by the base and by both variants, each warning is printed once.
lines "$tmp/err" 2

run_rc 0 run "$tmp/s.json" --quiet
line "$tmp/err" "$w1"
lines "$tmp/err" 2

# --strict: the first warning is the error, as an error line; exit 2 on run and validate.
e1='retrysim: '"$tmp"'/s.json: $.clients.web.policy.methodConfig[0].retryPolicies: unknown field "retryPolicies" ignored; did you mean "retryPolicy"?'
run_rc 2 validate "$tmp/s.json" --strict
line "$tmp/err" "$e1"
lines "$tmp/err" 1
lines "$tmp/out" 0
run_rc 2 run --strict "$tmp/s.json" --out "$tmp/o1"
line "$tmp/err" "$e1"
ok
[ ! -e "$tmp/o1" ] || fail "run --strict wrote $tmp/o1"
run_rc 2 run "$tmp/s.json" --strict=yes
line "$tmp/err" "retrysim: option '--strict=yes' takes no value (see retrysim --help)"

# A clean scenario is unaffected by --strict.
sed -e 's/"retryPolicies": {}/"timeout": "1s"/' -e 's/percentCanRetry": 20/percentCanRetry": 0.5/' \
  "$tmp/s.json" >"$tmp/clean.json"
run_rc 0 validate "$tmp/clean.json" --strict
lines "$tmp/err" 0
run_rc 0 run "$tmp/clean.json" --strict --quiet

# A policy file: the warning names the file and the path in it; grpc-go's case.
cat >"$tmp/policy.json" <<'JSON'
{"methodConfig": [{"name": [{}],
  "retryPolicy": {"MaxAttempts": 3, "maxAttempts": 3, "initialBackoff": "0.1s",
                  "maxBackoff": "1s", "backoffMultiplier": 2,
                  "retryableStatusCodes": ["UNAVAILABLE"]}}]}
JSON
# policy_scenario FILE POLICY: a scenario whose client's policy is the file POLICY.
policy_scenario() {
  cat >"$1" <<JSON
{"duration": "1s",
 "services": {"api": {"replicas": 1, "workers": 4, "service_time": "5ms"}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "50/s"},
   "methods": ["/pkg.Api/Get"], "policy": "$2"}}}
JSON
}
policy_scenario "$tmp/f.json" policy.json
run_rc 0 validate "$tmp/f.json"
line "$tmp/err" 'retrysim: warning: '"$tmp"'/policy.json: $.methodConfig[0].retryPolicy.MaxAttempts: field "MaxAttempts" ignored: the field is "maxAttempts" (only the case differs; grpc-go accepts that, grpc-java and C-core do not)'
lines "$tmp/err" 1
run_rc 2 validate "$tmp/f.json" --strict
line "$tmp/err" 'retrysim: '"$tmp"'/policy.json: $.methodConfig[0].retryPolicy.MaxAttempts: field "MaxAttempts" ignored: the field is "maxAttempts" (only the case differs; grpc-go accepts that, grpc-java and C-core do not)'

# Not a regular file: refused at once, never read.
run_rc 2 validate /dev/zero
line "$tmp/err" "retrysim: /dev/zero: cannot read the file: it is a character device, not a regular file"
policy_scenario "$tmp/dev.json" /dev/urandom
run_rc 2 validate "$tmp/dev.json"
line "$tmp/err" "retrysim: $tmp/dev.json: \$.clients.web.policy: cannot open the policy file \"/dev/urandom\": it is a character device, not a regular file"
if mkfifo "$tmp/pipe.json" 2>/dev/null; then
  run_rc 2 validate "$tmp/pipe.json"
  line "$tmp/err" "retrysim: $tmp/pipe.json: cannot read the file: it is a FIFO (named pipe), not a regular file"
  policy_scenario "$tmp/fifo.json" pipe.json
  run_rc 2 validate "$tmp/fifo.json"
  line "$tmp/err" "retrysim: $tmp/fifo.json: \$.clients.web.policy: cannot open the policy file \"pipe.json\": it is a FIFO (named pipe), not a regular file"
fi

# A policy path over 255 characters keeps the file's name in the message.
long="$tmp/$(printf '%090d' 0)/$(printf '%090d' 1)/$(printf '%090d' 2)"
mkdir -p "$long"
printf '{"methodConfig": ' >"$long/the-policy.json"
policy_scenario "$tmp/long.json" "$long/the-policy.json"
run_rc 2 validate "$tmp/long.json"
ok
grep -q '^retrysim: \.\.\..*/the-policy.json:1:[0-9]*: invalid JSON' "$tmp/err" ||
  { fail "long policy path lost its name"; sed 's/^/    /' "$tmp/err"; }

# test_long_policy_path_value_error_names_the_file: an error about a value inside a policy
# file whose path is over 255 characters still names the file (the end of its path).
printf '{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": "x", "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}' >"$long/the-policy.json"
run_rc 2 validate "$tmp/long.json"
ok
grep -q '^retrysim: \.\.\..*/the-policy.json: \$\.methodConfig\[0\]\.retryPolicy\.maxAttempts: ' "$tmp/err" ||
  { fail "a value error in a long policy path lost the file's name"; sed 's/^/    /' "$tmp/err"; }
# ... and a missing file with a long name keeps the end of the name.
policy_scenario "$tmp/longmiss.json" "$long/not-there.json"
run_rc 2 validate "$tmp/longmiss.json"
ok
grep -q 'cannot open the policy file "\.\.\..*/not-there.json": No such file' "$tmp/err" ||
  { fail "a missing long policy path lost its name"; sed 's/^/    /' "$tmp/err"; }

# test_patched_policy_file_warns_once_as_the_file: a variant whose set patches a policy file
# does not repeat the file's warnings under the scenario's name.
printf '{"retryThrotling": {}, "methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}' >"$tmp/pt.json"
cat >"$tmp/pv.json" <<JSON
{"duration": "1s",
 "services": {"api": {"replicas": 1, "workers": 4, "service_time": "5ms"}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "50/s"},
   "methods": ["/pkg.Api/Get"], "policy": "pt.json"}},
 "variants": [{"name": "a", "set": {}},
              {"name": "c", "set": {"clients.web.policy.methodConfig[0].retryPolicy.maxAttempts": 4}}]}
JSON
run_rc 0 validate "$tmp/pv.json"
line "$tmp/err" 'retrysim: warning: '"$tmp"'/pt.json: $.retryThrotling: unknown field "retryThrotling" ignored; did you mean "retryThrottling"?'
lines "$tmp/err" 1

# Issue 23: a key misspelt in a variant's patch of a policy file is the scenario's, at its path
# there, not the file's (the file does not hold it).
cat >"$tmp/pw.json" <<JSON
{"duration": "1s",
 "services": {"api": {"replicas": 1, "workers": 4, "service_time": "5ms"}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "50/s"},
   "methods": ["/pkg.Api/Get"], "policy": "pt.json"}},
 "variants": [{"name": "a", "set": {}},
              {"name": "c", "set": {"clients.web.policy.methodConfig[0].retryPolicy.maxAtempts": 4}}]}
JSON
run_rc 0 validate "$tmp/pw.json"
has "$tmp/err" 'pw.json: $.clients.web.policy.methodConfig[0].retryPolicy.maxAtempts: in variant "c": unknown field "maxAtempts"'
grep -q 'pt.json: \$.methodConfig\[0\].retryPolicy.maxAtempts' "$tmp/err" &&
  fail "the variant's misspelt key was blamed on the policy file: $(cat "$tmp/err")"

# test_profile_without_hedging_warns_on_hedging_policy: under grpc-core-1.51 a hedgingPolicy
# is accepted and ignored, as C-core 1.51 does; retrysim says so, and --strict refuses it.
printf '{"retrysim": {"profile": "grpc-core-1.51"}, "methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.05s"}}]}' >"$tmp/hedge.json"
policy_scenario "$tmp/h.json" hedge.json
run_rc 0 validate "$tmp/h.json"
line "$tmp/err" 'retrysim: warning: '"$tmp"'/hedge.json: $.methodConfig[0].hedgingPolicy: "hedgingPolicy" ignored: profile "grpc-core-1.51" does not hedge, so each call makes one attempt (as that implementation does)'
run_rc 2 validate "$tmp/h.json" --strict
printf '{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.05s"}}]}' >"$tmp/hedge.json"
run_rc 0 validate "$tmp/h.json" --strict
lines "$tmp/err" 0

t_done

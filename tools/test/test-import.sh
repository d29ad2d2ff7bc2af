#!/bin/sh
# Checks `retrysim import` (docs/policy-formats.md, docs/cli.md "import"): a foreign policy file
# is printed as the service config retrysim runs, each field with its file:line, the
# unmodelled fields as warnings; --strict refuses a file with warnings; bad input is exit 2
# with file:line:column; and a scenario whose client policy is such a file runs.
# Usage: BUILD=build sh tools/test/test-import.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
t_tmp
T_TIMEOUT=20
d=tests/data/import

# Envoy: a route with a budget; every mapped field and its source line.
run_rc 0 import "$d/envoy/orders-route.yaml"
has "$tmp/out" '"maxAttempts": 4,'
line "$tmp/out" '  $.methodConfig[0].retryPolicy.maxAttempts = 4'
line "$tmp/out" "      from $d/envoy/orders-route.yaml:16:24 \$.route_config.virtual_hosts[0].routes[0].route.retry_policy.num_retries"
has "$tmp/out" "warning: $d/envoy/orders-route.yaml:38:5: \$.clusters[0].outlier_detection: not modelled in a policy"
run_rc 0 import --format json "$d/envoy/orders-route.yaml"
is_json "$tmp/out"
has "$tmp/out" '"budget":{"type":"envoy","budgetPercent":25.0,"minRetryConcurrency":5}'
# --strict: the same file has warnings, so it is refused.
run_rc 2 import --strict "$d/envoy/orders-route.yaml"
has "$tmp/err" 'refused with --strict'

# Envoy hedging: hedge_on_per_try_timeout is A6 hedging at each per-try timeout; what has no
# counterpart warns by name, and --strict refuses it.
run_rc 0 import --format json "$d/envoy/hedge-route.yaml"
has "$tmp/out" '"hedgingPolicy":{"maxAttempts":3,"hedgingDelay":"0.05s","nonFatalStatusCodes":["RESOURCE_EXHAUSTED","UNAVAILABLE"]}'
lacks "$tmp/out" '"retryPolicy"'
run_rc 0 import "$d/envoy/hedge-route.yaml"
has "$tmp/out" "hedge-route.yaml:18:29: \$.route_config.virtual_hosts[0].routes[0].route.hedge_policy.initial_requests: initial_requests 2 is not modelled"
has "$tmp/out" 'hedging is approximated: Envoy sends the hedge after the retry back-off'
has "$tmp/out" '"budget_interval" is not modelled: Envoy then counts the upstream requests started in the last interval'
run_rc 2 import --strict "$d/envoy/hedge-route.yaml"

# Istio: two documents; the route without retries gets Istio's default, said so.
run_rc 0 import "$d/istio/ratings.yaml"
line "$tmp/out" "      from $d/istio/ratings.yaml:16:17 \$.spec.http[0].retries.attempts"
has "$tmp/out" "default: Istio's default, since the route has no retries"
has "$tmp/out" "$d/istio/ratings.yaml:37:7: \$.spec.trafficPolicy.outlierDetection"
run_rc 0 import --format json "$d/istio/default-grpc.yaml"
has "$tmp/out" '"retryableStatusCodes":["CANCELLED","UNAVAILABLE"]'
lacks "$tmp/out" '"warnings":[{'

# Linkerd: a ServiceProfile's retryable route and its budget.
run_rc 0 import --format json "$d/linkerd/books-profile.yaml"
has "$tmp/out" '"format":"linkerd"'
has "$tmp/out" '"budget":{"type":"linkerd","retryRatio":0.2,"minRetriesPerSecond":10,"ttl":"10s"}'

# Linkerd's annotations: the Service's for every method, a GRPCRoute's own retries, an
# HTTPRoute's own retry group with the Service's limit not inherited.
run_rc 0 import "$d/linkerd/authors-annotations.yaml"
line "$tmp/out" "      from $d/linkerd/authors-annotations.yaml:23:29 \$.metadata.annotations.retry.linkerd.io/limit"
has "$tmp/out" '"jitter": "linkerd",'
has "$tmp/out" "warning: $d/linkerd/authors-annotations.yaml:38:34: \$.metadata.annotations.timeout.linkerd.io/response: timeout.linkerd.io/response is not modelled"
run_rc 0 import --format json "$d/linkerd/authors-annotations.yaml"
has "$tmp/out" '"retryableStatusCodes":["UNAVAILABLE","RESOURCE_EXHAUSTED","DEADLINE_EXCEEDED"]'
run_rc 2 import --strict "$d/linkerd/authors-annotations.yaml"

# Gateway API: an HTTPRoute's retry and a backend traffic policy's budget.
run_rc 0 import "$d/gateway/checkout.yaml"
line "$tmp/out" "      from $d/gateway/checkout.yaml:14:17 \$.spec.rules[0].retry.attempts"
has "$tmp/out" "warning: $d/gateway/checkout.yaml:24:5: \$.spec.retryConstraint: GEP-3388 leaves open"

# resilience4j: an instance over the default config, and its circuit breaker.
run_rc 0 import "$d/resilience4j/application.yml"
line "$tmp/out" "      from $d/resilience4j/application.yml:8:23 \$.resilience4j.retry.configs.default.waitDuration"
has "$tmp/out" '"type": "count",'

# Polly: the standard resilience handler's sections in an appsettings.json.
run_rc 0 import --format json "$d/polly/appsettings.json"
has "$tmp/out" '"format":"polly"'
has "$tmp/out" '"jitter":"polly-v2"'
run_rc 2 import --strict "$d/polly/appsettings.json"

# AWS: the [default] profile of a shared config file.
run_rc 0 import --format json "$d/aws/config"
has "$tmp/out" '"format":"aws-config"'
has "$tmp/out" '"maxAttempts":4'
has "$tmp/out" '"budget":{"type":"aws","retryCost":14,"timeoutCost":14,"throttleCost":5}'
has "$tmp/out" '"throttleInitialBackoff":"1s"'
has "$tmp/out" '"initialBackoff":"0.05s"'
# The behaviour before 2026, by retrysim's own key, so before and after can be compared.
printf '[default]\nretry_mode = standard\nretrysim_retry_behavior = before-2026\n' >"$tmp/aws-before"
run_rc 0 import --format json "$tmp/aws-before"
has "$tmp/out" '"budget":{"type":"aws"}'
has "$tmp/out" '"initialBackoff":"1s"'
lacks "$tmp/out" 'throttleInitialBackoff'
printf '[default]\nretrysim_retry_behavior = 2025\n' >"$tmp/aws-bad"
run_rc 2 import "$tmp/aws-bad"
has "$tmp/err" 'retrysim_retry_behavior is 2026 or before-2026, not "2025"'
printf '[default]\nretry_mode = quick\n' >"$tmp/aws-config"
run_rc 2 import "$tmp/aws-config"
line "$tmp/err" "retrysim: $tmp/aws-config:2:14: \$.default.retry_mode: retry_mode is standard, adaptive or legacy, not \"quick\""

# Bad input: a YAML syntax error names file:line:column; an unknown field warns with a
# did-you-mean.
run_rc 2 import "$d/invalid/envoy-syntax.yaml"
has "$tmp/err" "$d/invalid/envoy-syntax.yaml:5:14: \$: YAML syntax error: did not find expected ',' or '}'"
run_rc 0 import "$d/invalid/envoy-typo.yaml"
has "$tmp/out" 'unknown field "num_retry" ignored; did you mean "num_retries"?'
run_rc 2 import "$tmp/missing.yaml"
run_rc 2 import
# A service config is read as it is.
printf '{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}' >"$tmp/sc.json"
run_rc 0 import "$tmp/sc.json"
has "$tmp/out" "grpc-service-config"

# A scenario whose client policy is an Envoy file runs, with the file's warnings once.
cp "$d/envoy/grpc-retry-policy.yaml" "$tmp/envoy.yaml"
cat >"$tmp/s.json" <<'JSON'
{"duration": "2s", "seed": 1, "recovery": {"hold": "1s"},
 "services": {"api": {"replicas": 2, "workers": 4, "service_time": "5ms",
   "faults": [{"kind": "down", "replicas": [1], "start": "0s", "end": "1s"}]}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "50/s"},
   "methods": ["/pkg.Api/Get"], "policy": "envoy.yaml"}}}
JSON
run_rc 0 run "$tmp/s.json" --format json --quiet
is_json "$tmp/out"
w='"retry_host_predicate" is not modelled'
has "$tmp/err" "retrysim: warning: $tmp/envoy.yaml: \$.retry_policy.retry_host_predicate: $w"
lines "$tmp/err" 1
run_rc 2 validate "$tmp/s.json" --strict
has "$tmp/err" "$w"

# The same scenario under Istio's default policy: no warning, and the retries show.
cp "$d/istio/default-grpc.yaml" "$tmp/envoy.yaml"
run_rc 0 run "$tmp/s.json" --format json --quiet --strict
is_json "$tmp/out"
lines "$tmp/err" 0

# explain names the line each rule of an imported policy was read from (docs/explain.md).
cp "$d/envoy/orders-route.yaml" "$tmp/orders.yaml"
cat >"$tmp/x.json" <<'JSON'
{"duration": "2s", "seed": 1,
 "services": {"api": {"replicas": 2, "workers": 4, "service_time": "5ms", "space": "http",
   "faults": [{"kind": "down", "replicas": [1], "start": "0s", "end": "1s"}]}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "50/s"},
   "methods": ["/orders.v1.Orders/Get"], "policy": "orders.yaml"}}}
JSON
run_rc 0 explain "$tmp/x.json" --stopped max_attempts
p='$.route_config.virtual_hosts[0].routes[0].route'
has "$tmp/out" "=> done: HTTP 503, stop reason max_attempts: all 4 attempts are used"
line "$tmp/out" "                   rule \$.methodConfig[0].retryPolicy.maxAttempts: orders.yaml:16:24, envoy $p.retry_policy.num_retries"
line "$tmp/out" "                   rule \$.methodConfig[0].retryPolicy.retryableStatusCodes: orders.yaml:15:21, envoy $p.retry_policy.retry_on"
line "$tmp/out" "                   rule \$.methodConfig[0].retryPolicy.backoffMultiplier: orders.yaml, envoy default: Envoy doubles the interval"
has "$tmp/out" "rule \$.retrysim.budget.budgetPercent: orders.yaml:35:33, envoy"
# A rule an override changed is said to be, with the file's line it replaced.
run_rc 0 explain "$tmp/x.json" --stopped max_attempts --set 'clients.web.policy.methodConfig[0].retryPolicy.maxAttempts=3'
has "$tmp/out" "rule \$.methodConfig[0].retryPolicy.maxAttempts: overridden (--set or a variant's set); the file's value: orders.yaml:16:24"
run_rc 0 explain "$tmp/x.json" --stopped max_attempts --format json
has "$tmp/out" '"field": "$.methodConfig[0].retryPolicy.maxAttempts",'
has "$tmp/out" '"line": 16,'
# A policy written in the scenario has no rule lines.
run_rc 0 explain experiments/seed003-pushback.json --variant timeline-900ms --call 1
has "$tmp/out" "stop reason deadline"
lacks "$tmp/out" "rule "

# An override may name a policy file and a later one patch inside it (docs/scenario-format.md,
# "--set"): the file is read in turn, on the command line and in a variant's "set", in a
# service config as in a foreign format.
printf '{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}' >"$tmp/sc.json"
cat >"$tmp/o.json" <<'JSON'
{"duration": "1s", "seed": 1,
 "services": {"api": {"replicas": 1, "workers": 4, "service_time": "5ms"}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "50/s"}, "methods": ["/a.A/B"]}}}
JSON
run_rc 0 explain "$tmp/o.json" --call 1 --set clients.web.policy=sc.json \
  --set 'clients.web.policy.methodConfig[0].retryPolicy.maxAttempts=2'
has "$tmp/out" "policy retry, up to 2 attempts"
cp "$d/envoy/grpc-retry-policy.yaml" "$tmp/bare.yaml"
run_rc 0 explain "$tmp/o.json" --call 1 --set clients.web.policy=bare.yaml \
  --set 'clients.web.policy.methodConfig[0].retryPolicy.maxAttempts=5'
has "$tmp/out" "policy retry, up to 5 attempts"
# A file that cannot be read is reported as such, not as a string in the way.
run_rc 2 validate "$tmp/o.json" --set clients.web.policy=missing.json \
  --set 'clients.web.policy.methodConfig[0].retryPolicy.maxAttempts=2'
has "$tmp/err" 'cannot open the policy file "missing.json"'
cat >"$tmp/ov.json" <<'JSON'
{"duration": "1s", "seed": 1,
 "services": {"api": {"replicas": 1, "workers": 4, "service_time": "5ms"}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "50/s"}, "methods": ["/a.A/B"]}},
 "variants": [{"name": "two", "set": {"clients.web.policy": "sc.json",
                                      "clients.web.policy.methodConfig[0].retryPolicy.maxAttempts": 2}},
              {"name": "plain"}]}
JSON
run_rc 0 explain "$tmp/ov.json" --variant two --call 1
has "$tmp/out" "policy retry, up to 2 attempts"
run_rc 0 explain "$tmp/ov.json" --variant plain --call 1
has "$tmp/out" "policy none"
sed 's/"sc.json"/"gone.json"/' "$tmp/ov.json" >"$tmp/ovm.json"
run_rc 2 validate "$tmp/ovm.json"
has "$tmp/err" '$.clients.web.policy: cannot open the policy file "gone.json"'

t_done

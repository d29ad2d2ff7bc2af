#!/bin/sh
# test_report_html_renders_in_chromium: report.html of `retrysim run --plot`, checked by HTML
# Tidy as HTML5 (no error, no warning), then opened in headless Chromium (Debian's `chromium`
# and `tidy`, `tools/ops/deps.sh browser`): the page renders, every picture
# loads (naturalWidth > 0), the browser reports nothing on its console (the page's
# Content-Security-Policy makes any external load a console report), and a screenshot of the
# whole page is kept as build/artifacts/report.png (ARTIFACTS to change the folder).
# No network is used. Usage: BUILD=build sh tools/test/test-report-html.sh [SCENARIO.json]
set -u
. "$(dirname "$0")/lib.sh"
art="${ARTIFACTS:-${BUILD:-build}/artifacts}"
scn="${1:-tests/data/scenarios/valid/internal-edge/scenario.json}"
need_bin
browser=""
for b in chromium chromium-browser; do
  command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
done
[ -n "$browser" ] || { echo "test-report-html: chromium missing: install it with tools/ops/deps.sh browser"; exit 1; }
need_cmd tidy "tidy missing: install it with tools/ops/deps.sh browser"
t_tmp

# chrome ARGS...: headless Chromium, in its own profile under $tmp, logging to $tmp/log.
# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
chrome() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 --hide-scrollbars \
    --virtual-time-budget=10000 "$@" 2>"$tmp/log"
}

"$bin" run "$scn" --quiet --plot --out "$tmp/out" >"$tmp/run" 2>&1 || { cat "$tmp/run"; fail "retrysim run --plot failed"; exit 1; }
page="$tmp/out/report.html"
[ -s "$page" ] || { fail "no report.html"; exit 1; }

# 0. Valid HTML5: tidy reports neither an error nor a warning (exit 0).
tidy -q -e "$page" >"$tmp/tidy" 2>&1 || { fail "tidy found problems in report.html:"; sed 's/^/    /' "$tmp/tidy" | head -n 10; }

# 1. The page as written: Chromium's console must stay silent.
chrome --dump-dom "file://$page" >"$tmp/dom.html" || fail "chromium failed on report.html (exit $?)"
grep -q '<h1>' "$tmp/dom.html" || fail "the rendered page has no <h1>"
if grep -q 'CONSOLE' "$tmp/log"; then
  fail "the browser's console reported:"; grep 'CONSOLE' "$tmp/log" | sed 's/^/    /' | head -n 10
fi

# 2. A copy with a probe: after load, every image complete with naturalWidth > 0, and every
# error event (a picture that fails to decode) or console.error/warn counted. The copy drops the
# page's policy, which would refuse the probe's own script.
cat >"$tmp/probe.js" <<'JS'
<script>
var probeErrors = [];
window.addEventListener('error', function (e) {
  probeErrors.push('error event: ' + (e.message || (e.target && e.target.alt) || '?'));
}, true);
['error', 'warn'].forEach(function (k) {
  var f = console[k];
  console[k] = function () { probeErrors.push(k + ': ' + Array.prototype.join.call(arguments, ' ')); f.apply(console, arguments); };
});
window.addEventListener('load', function () {
  var bad = [], imgs = document.images;
  for (var i = 0; i < imgs.length; i++)
    if (!imgs[i].complete || imgs[i].naturalWidth === 0) bad.push('broken picture: ' + imgs[i].alt);
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = 'PROBE images=' + imgs.length + ' broken=' + bad.length + ' errors=' +
    probeErrors.length + ' height=' + document.documentElement.scrollHeight + ' END\n' +
    bad.concat(probeErrors).join('\n');
  document.body.appendChild(pre);
});
</script>
JS
sed -e '/<meta http-equiv="Content-Security-Policy"/d' -e "/<head>/r $tmp/probe.js" "$page" >"$tmp/out/probe.html"
chrome --dump-dom "file://$tmp/out/probe.html" >"$tmp/probe-dom.html" || fail "chromium failed on the probe page"
probe=$(grep -o 'PROBE [^E]*END' "$tmp/probe-dom.html")
[ -n "$probe" ] || { fail "the probe did not run (no PROBE line in the rendered page)"; exit 1; }
echo "test-report-html: $probe"
n_img=$(echo "$probe" | sed 's/.*images=\([0-9]*\).*/\1/')
n_bad=$(echo "$probe" | sed 's/.*broken=\([0-9]*\).*/\1/')
n_err=$(echo "$probe" | sed 's/.*errors=\([0-9]*\).*/\1/')
height=$(echo "$probe" | sed 's/.*height=\([0-9]*\).*/\1/')
want=$(grep -c '^!\[' "$tmp/out/report.md")
[ "$n_img" -eq "$want" ] && [ "$n_img" -gt 0 ] || fail "the page shows $n_img pictures, report.md has $want"
[ "$n_bad" -eq 0 ] || { fail "$n_bad pictures did not load"; sed -n '/PROBE/,/<\/pre>/p' "$tmp/probe-dom.html" | head -n 10; }
[ "$n_err" -eq 0 ] || { fail "$n_err errors while loading"; sed -n '/PROBE/,/<\/pre>/p' "$tmp/probe-dom.html" | head -n 10; }

# 3. The screenshot of the whole page, 1280 px wide, kept for people to look at.
[ "$height" -gt 0 ] 2>/dev/null || height=4000
[ "$height" -le 30000 ] || height=30000
mkdir -p "$art"
rm -f "$art/report.png"
chrome --window-size="1280,$height" --screenshot="$art/report.png" "file://$page" >/dev/null ||
  fail "chromium could not take the screenshot"
# A PNG starts with its 8-byte signature; its width is bytes 17-20 of the IHDR chunk.
sig=$(od -An -tx1 -N8 "$art/report.png" 2>/dev/null | tr -d ' \n')
[ "$sig" = 89504e470d0a1a0a ] || fail "$art/report.png is not a PNG"
w=$(od -An -tu1 -j16 -N4 "$art/report.png" | awk '{print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4}')
[ "$w" = 1280 ] || fail "the screenshot is $w px wide, want 1280"

[ "$fails" -eq 0 ] || exit 1
echo "test-report-html: report.html renders, $n_img pictures loaded, console silent; screenshot $art/report.png (1280x$height)"

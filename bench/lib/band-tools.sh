# Sourced by bench/band-cost.sh and bench/band-encode-cost.sh: finds ffmpeg, the font and the patched x264 as wmark
# does (needs a build: npm run build), the viewer's mark, and cpu LABEL CMD... which prints the CPU seconds
# (user+sys, children included) that CMD took. Expects $repo.
tool() { node -e "import('$repo/dist/ffmpeg/locate-tools.js').then((m) => console.log(m.locateTools({}).$1.path))"; }
FF="$(tool ffmpeg)"
FONT="$(tool font)"
X="$(node -e "import('$repo/dist/ffmpeg/locate-x264.js').then((m) => console.log(m.locateBandX264() ?? ''))")"
[ -n "$X" ] || { echo "no patched x264: run scripts/build-x264.sh"; exit 1; }
MARK="drawtext=fontfile=$FONT:text='viewer 42 alice@example.com':fontsize=40:fontcolor=white:box=1:boxcolor=black@0.5:x='20+80*t':y=20"
TIMEFORMAT='%U %S'
cpu() { local label=$1 out; shift; out=$( { time "$@" >/dev/null 2>&1; } 2>&1 ); echo "$label cpu_s=$(echo "$out" | awk '{print $1+$2}')"; }

#!/usr/bin/env bash
# Rough figures for band rendering at 720p (6 s of testsrc2 with a box racing across it, 25 fps, band = the bottom
# 80 px, macroblock rows 40-45): CPU seconds (user+sys of the processes) of a shared encode with and without the clamp
# and their bytes and PSNR; of one viewer's band (mark on the band rows, band encode, splice); and of today's full
# render of the same mark (decode, drawtext, libx264). Then the gate on the result. Needs the patched x264
# (scripts/build-x264.sh) and a build (npm run build). Usage: bash bench/band-cost.sh [work folder]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$(mktemp -d)}"
cd "$work"
# shellcheck source=lib/band-tools.sh
. "$repo/bench/lib/band-tools.sh"
COMMON="--preset veryfast --crf 23 --bframes 0 --weightp 0 --ref 3 --keyint 50 --min-keyint 50 --aud --threads 2"
psnr() { "$X" $COMMON --psnr "$@" 2>&1 | grep -o 'Global:[0-9.]*' | tail -1; }

"$FF" -hide_banner -loglevel error -y -filter_complex "testsrc2=s=1280x720:r=25:d=6[bg];testsrc=s=320x180:r=25:d=6[box];[bg][box]overlay=x='480+400*sin(2*t)':y='270+300*sin(3*t)'" -pix_fmt yuv420p -f yuv4mpegpipe src.y4m
cpu shared-clamped "$X" $COMMON --band-rows 40,45 -o shared.264 src.y4m
cpu shared-unclamped "$X" $COMMON -o plain.264 src.y4m
echo "shared-clamped bytes=$(stat -c %s shared.264) psnr_$(psnr --band-rows 40,45 -o /dev/null src.y4m)"
echo "shared-unclamped bytes=$(stat -c %s plain.264) psnr_$(psnr -o /dev/null src.y4m)"

# The band's source rows: kept from the ingest's decode in production, so not counted.
"$FF" -hide_banner -loglevel error -y -i src.y4m -vf crop=1280:80:0:640 -f yuv4mpegpipe rows.y4m
node -e "Promise.all([import('$repo/dist/core/h264/frame-types.js'), import('$repo/dist/core/plan/band-plan.js'), import('node:fs')]).then(([t, p, fs]) => fs.writeFileSync('qp.txt', p.qpfileFor(t.frameTypesOf(fs.readFileSync('shared.264')))))"
cpu viewer-mark "$FF" -hide_banner -loglevel error -y -i rows.y4m -vf "$MARK" -f yuv4mpegpipe band.y4m
cpu viewer-band-encode "$X" $COMMON --band-self --scenecut 0 --qpfile qp.txt -o band.264 band.y4m
node -e "Promise.all([import('$repo/dist/core/h264/splice-band.js'), import('node:fs')]).then(([s, fs]) => { const t = process.cpuUsage(); fs.writeFileSync('spliced.264', s.spliceStreams(fs.readFileSync('shared.264'), fs.readFileSync('band.264'), { top: 40, bottom: 45 })); const u = process.cpuUsage(t); console.log('viewer-splice cpu_s=' + ((u.user + u.system) / 1e6).toFixed(3) + ' (in process)'); })"

"$FF" -hide_banner -loglevel error -y -r 25 -i plain.264 -c copy mezz.mp4
cpu full-render "$FF" -hide_banner -loglevel error -y -i mezz.mp4 -vf "$MARK" -c:v libx264 -preset veryfast -crf 23 -threads 2 -f mpegts full.ts

md5() { "$FF" -hide_banner -loglevel error -i "$1" -vf "crop=1280:$2:0:$3" -f framemd5 - | grep -v '^#' | awk '{print $NF}'; }
[ "$(md5 shared.264 640 0)" = "$(md5 spliced.264 640 0)" ] && echo "gate outside: equal" || echo "gate outside: DIFFERENT"
[ "$(md5 band.264 80 0)" = "$(md5 spliced.264 80 640)" ] && echo "gate inside: equal" || echo "gate inside: DIFFERENT"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Why a viewer's band encode costs more than its share of the picture: CPU seconds (user+sys, the whole pipeline) of
# the patched x264's band encode at 720p25 (6 s, testsrc2 with a box racing across it) under x264 options that cut
# per-frame work (threads, lookahead, macroblock tree), at band heights from 48 px to the whole picture (what does
# not shrink with the band is the fixed per-frame cost), and with the mark drawn by ffmpeg into a temporary y4m file
# against piped straight into x264. Rounds alternate the variants (A B C A B C ...). Prints one line per run.
# Needs the patched x264 (scripts/build-x264.sh) and a build (npm run build).
# Usage: bash bench/band-encode-cost.sh [rounds (default 5)] [work folder]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-5}"
work="${2:-$(mktemp -d)}"
cd "$work"
# shellcheck source=lib/band-tools.sh
. "$repo/bench/lib/band-tools.sh"
COMMON="--preset veryfast --crf 23 --bframes 0 --weightp 0 --ref 3 --keyint 50 --min-keyint 50 --aud --scenecut 0 --band-self"

[ -f src.y4m ] || "$FF" -hide_banner -loglevel error -y -filter_complex "testsrc2=s=1280x720:r=25:d=6[bg];testsrc=s=320x180:r=25:d=6[box];[bg][box]overlay=x='480+400*sin(2*t)':y='270+300*sin(3*t)'" -pix_fmt yuv420p -f yuv4mpegpipe src.y4m
for h in 48 80 160 320 720; do
  "$FF" -hide_banner -loglevel error -y -i src.y4m -vf "crop=1280:$h:0:$((720 - h)),$MARK" -f yuv4mpegpipe "band$h.y4m"
done
# The band's source rows as the ingest keeps them (unmarked), for the piped runs.
"$FF" -hide_banner -loglevel error -y -i src.y4m -vf crop=1280:80:0:640 -f yuv4mpegpipe rows80.y4m
awk 'BEGIN { for (i = 0; i < 150; i++) print i, (i % 50 ? "P" : "I"), -1 }' >qp.txt

declare -A VARIANT=(
  [threads2]="--threads 2"
  [threads1]="--threads 1"
  [threads1-sync0]="--threads 1 --sync-lookahead 0"
  [threads1-rcla5]="--threads 1 --sync-lookahead 0 --rc-lookahead 5"
  [threads1-nombtree]="--threads 1 --sync-lookahead 0 --rc-lookahead 0 --no-mbtree"
)
for round in $(seq "$rounds"); do
  for name in threads2 threads1 threads1-sync0 threads1-rcla5 threads1-nombtree; do
    # shellcheck disable=SC2086
    cpu "round=$round options=$name rows=80" "$X" $COMMON ${VARIANT[$name]} --qpfile qp.txt -o band.264 band80.y4m
  done
  for h in 48 160 320 720; do
    # shellcheck disable=SC2086
    cpu "round=$round options=threads1-nombtree rows=$h" "$X" $COMMON ${VARIANT[threads1-nombtree]} --qpfile qp.txt -o band.264 "band$h.y4m"
    # shellcheck disable=SC2086
    cpu "round=$round options=threads2 rows=$h" "$X" $COMMON ${VARIANT[threads2]} --qpfile qp.txt -o band.264 "band$h.y4m"
  done
  # The viewer's whole band step: mark drawn on the kept rows, then the encode (temporary file, or a pipe).
  # shellcheck disable=SC2086
  cpu "round=$round step=file" bash -c "'$FF' -hide_banner -loglevel error -y -i rows80.y4m -vf \"$MARK\" -f yuv4mpegpipe marked.y4m && '$X' $COMMON ${VARIANT[threads1-nombtree]} --qpfile qp.txt -o band.264 marked.y4m"
  # shellcheck disable=SC2086
  cpu "round=$round step=pipe" bash -c "'$FF' -hide_banner -loglevel error -i rows80.y4m -vf \"$MARK\" -f yuv4mpegpipe - | '$X' $COMMON ${VARIANT[threads1-nombtree]} --qpfile qp.txt --demuxer y4m -o band.264 -"
  # Process start-up alone: x264 and ffmpeg on one frame.
  cpu "round=$round step=x264-1frame" "$X" $COMMON --threads 1 --frames 1 -o band1.264 band80.y4m
  cpu "round=$round step=ffmpeg-1frame" "$FF" -hide_banner -loglevel error -y -i rows80.y4m -frames:v 1 -vf "$MARK" -f yuv4mpegpipe one.y4m
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

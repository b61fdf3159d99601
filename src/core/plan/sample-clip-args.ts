// The ffmpeg arguments that generate a sample video (natural texture, flat colour or the demo's scene), so nothing large ships with the package.
import { num } from './filter-values.js';

export interface SamplePlan {
  output: string;
  width: number;
  height: number;
  seconds: number;
  fps: number;
  /**
   * 'natural': a zooming fractal with film grain and a tone (motion, texture, audio); 'flat': one colour, for pixel
   * tests; 'scene': the demo's landscape at dusk (colour gradients, a rising sun, hills drifting at two speeds).
   */
  kind: 'natural' | 'flat' | 'scene';
  color?: string;
  audio?: boolean;
}

/**
 * The demo's scene: a dusk sky (a vertical colour gradient), a soft sun rising slowly, and two ranges of hills that
 * drift sideways at different speeds, with the hue swaying a little over time. Every layer is drawn once (geq on one
 * frame, then looped) and only moved afterwards, so it costs little more than an encode; the hills repeat every frame
 * width, so scrolling them by a width modulo is seamless.
 */
function sceneGraph(p: SamplePlan): string {
  const { width: w, height: h, fps } = p;
  const still = `loop=loop=-1:size=1:start=0,setpts=N/${fps}/TB`;
  const sun = Math.max(8, Math.round(h / 2.25));
  const c = sun / 2;
  const glow = `clip(1-(hypot(X-${c},Y-${c})-${num(sun / 6)})/${num(sun / 3)},0,1)`;
  const ridge = (base: number, waves: string) => `255*gte(Y,H*${base}+${waves})`;
  return (
    `nullsrc=s=${w}x${h}:d=0.04,format=gbrp,geq=r='22+228*pow(Y/H,1.3)':g='38+120*pow(Y/H,1.6)':b='112-40*Y/H',${still},format=rgba[sky];` +
    `nullsrc=s=${sun}x${sun}:d=0.04,format=rgba,geq=r=255:g=214:b=120:a='255*${glow}*${glow}',${still}[sun];` +
    `nullsrc=s=${2 * w}x${h}:d=0.04,format=rgba,geq=r='92+40*Y/H':g='70+20*Y/H':b=128:` +
    `a='${ridge(0.6, `H*0.07*sin(2*PI*X/${w}*2)+H*0.03*sin(2*PI*X/${w}*5+1)`)}',${still}[far];` +
    `nullsrc=s=${2 * w}x${h}:d=0.04,format=rgba,geq=r='28+30*Y/H':g='78+40*(1-Y/H)':b=58:` +
    `a='${ridge(0.74, `H*0.06*sin(2*PI*X/${w}*3+2)+H*0.025*sin(2*PI*X/${w}*7)`)}',${still}[near];` +
    `[sky][sun]overlay=x='W*0.12+t*W*0.025-${c}':y='H*0.62-t*H*0.018-${c}':shortest=1[s1];` +
    `[s1][far]overlay=x='-mod(t*${w}/40,${w})':y=0[s2];` +
    `[s2][near]overlay=x='-mod(t*${w}/14,${w})':y=0,hue=h='12*sin(2*PI*t/20)',setsar=1,format=yuv420p[v]`
  );
}

/**
 * A generated test/sample video, so nothing large has to ship with the package. 'natural' is a slow camera pan over a
 * multi-scale cloud texture with film grain: real motion and texture everywhere in the frame, cheap to generate
 * (the texture is drawn once, then only cropped), and never periodic within a title. The grain has a fixed seed and the
 * texture's random layers are drawn on one thread, so the same options always make the same picture (the noise filter
 * seeds itself at random otherwise, and geq's random() hands its states to threads in any order).
 */
export function sampleVideoArgs(p: SamplePlan): string[] {
  const size = `${p.width}x${p.height}`;
  const layer = (grid: string, seed: number, chroma: boolean) =>
    `nullsrc=s=${grid}:d=0.04,format=yuv444p,geq=threads=1:lum='random(${seed})*255':cb='${chroma ? `128+60*(random(${seed + 1})-0.5)` : '128'}':cr='${chroma ? `128+60*(random(${seed + 2})-0.5)` : '128'}',scale=1920:1080:flags=bicubic`;
  const natural =
    `${layer('40x23', 1, true)}[l0];${layer('160x90', 4, false)}[l1];${layer('640x360', 7, false)}[l2];` +
    `[l0][l1]blend=all_expr='A*0.65+B*0.35'[ab];[ab][l2]blend=c0_expr='A*0.85+B*0.15':c1_expr=A:c2_expr=A,` +
    `loop=loop=-1:size=1:start=0,setpts=N/${p.fps}/TB,` +
    `crop=1280:720:x='320+300*sin(2*PI*t/97)':y='180+170*sin(2*PI*t/131)',scale=${p.width}:${p.height}:flags=bicubic,` +
    `noise=alls=6:allf=t:all_seed=1,setsar=1,format=yuv420p[v]`;
  const flat = `color=c=0x${p.color ?? '336699'}:size=${size}:rate=${p.fps},format=yuv420p[v]`;
  const graph = p.kind === 'flat' ? flat : p.kind === 'scene' ? sceneGraph(p) : natural;
  const audio = p.audio !== false;
  return [
    '-y',
    ...(audio ? ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:beep_factor=4'] : []),
    '-filter_complex',
    graph,
    '-map',
    '[v]',
    ...(audio ? ['-map', '0:a'] : []),
    '-t',
    String(p.seconds),
    '-r',
    String(p.fps),
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    p.kind === 'flat' ? '12' : '18',
    '-pix_fmt',
    'yuv420p',
    ...(audio ? ['-c:a', 'aac', '-b:a', '96k'] : []),
    '-movflags',
    '+faststart',
    p.output,
  ];
}

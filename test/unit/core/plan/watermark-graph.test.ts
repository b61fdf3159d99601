// Unit tests for composing a watermark's filtergraph from text filters and image overlays, and for an image's drawn size.
import { describe, expect, it } from 'vitest';
import { imagePixels, renditionProblem } from '../../../../src/core/plan/image-drawing.js';
import { composeGraph } from '../../../../src/core/plan/watermark-graph.js';

describe('composeGraph', () => {
  const text = (n: string) => ({ filters: [`drawtext=textfile=${n}`] });
  const image = (n: string) => ({ source: `movie=filename=${n}`, overlay: 'overlay=x=0:y=0' });

  it('is the chain of filters alone without images, null when there is nothing', () => {
    expect(composeGraph([text('a'), text('b')], '')).toBe('drawtext=textfile=a,drawtext=textfile=b');
    expect(composeGraph([], '')).toBe('null');
  });

  it('starts on the frames and ends with the drawn frames, both unlabelled, whatever comes first or last', () => {
    expect(composeGraph([image('l')], 'w0')).toBe('null[w0a0];movie=filename=l[w0i0];[w0a0][w0i0]overlay=x=0:y=0');
    expect(composeGraph([text('a'), image('l'), text('b'), image('m')], '')).toBe(
      [
        'drawtext=textfile=a[a0]',
        'movie=filename=l[i0]',
        '[a0][i0]overlay=x=0:y=0,drawtext=textfile=b[a1]',
        'movie=filename=m[i1]',
        '[a1][i1]overlay=x=0:y=0',
      ].join(';'),
    );
  });
});

describe('imagePixels', () => {
  it('is width x the frame width, the height keeping the aspect, at least a pixel each way', () => {
    expect(imagePixels({ width: 0.25 }, { width: 400, height: 200 }, 1280)).toEqual({ width: 320, height: 160 });
    expect(imagePixels({ width: 0.1 }, { width: 3, height: 2 }, 1920)).toEqual({ width: 192, height: 128 });
    expect(imagePixels({ width: 0.0001 }, { width: 4000, height: 10 }, 320)).toEqual({ width: 1, height: 1 });
  });

  it('refuses a rendition larger than 4096 pixels a side', () => {
    expect(renditionProblem({ width: 4096, height: 4096 })).toBeUndefined();
    expect(renditionProblem({ width: 384, height: 5000 })).toMatch(/^would be drawn 384x5000 pixels on this video, larger than 4096x4096/);
  });
});

// docs/api.md describes every route the server really has: each path of the route table (both versions, as `{v}`)
// appears in the document, and every route the document's tables name exists.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../harness/fixtures.js';
import type { TestApp } from '../../harness/serve-helpers.js';
import { inProcessAppPerFile } from '../helpers/serve-in-tests.js';

const DOC = readFileSync(path.join(REPO, 'docs', 'api.md'), 'utf8');
let s: TestApp;

inProcessAppPerFile((_engine, app) => {
  s = app;
});

/** A route as the docs write it: the version as {v}, parameters as {name}, no trailing slash. */
const asDocumented = (p: string) =>
  p
    .replace(/^\/(1\.0|2\.0)(?=\/|$)/, '/{v}')
    .replace(/^\/player\/(1\.0|2\.0)\//, '/player/{v}/')
    .replace(/:(\w+)/g, '{$1}')
    .replace(/(.)\/$/, '$1');

describe('docs/api.md and the route table', () => {
  it('documents every path the server routes', () => {
    const routes = s.app.routes();
    expect(routes.length).toBeGreaterThan(20);
    const paths = [...new Set(routes.map((r) => asDocumented(r.path)))];
    const escapeRegExp = (t: string) => t.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
    const missing = paths.filter((p) => {
      // A parameter may be written with another name ({id}) or as an example value (video.m3u8, seg_00000.ts).
      const pattern = p
        .split(/\{\w+\}/)
        .map(escapeRegExp)
        .join('(\\{\\w+\\}|[\\w.{},-]+)');
      return !new RegExp(`${pattern}/?(?=[\\s\`?:)]|$)`, 'm').test(DOC);
    });
    expect(missing).toEqual([]);
  });

  it('every method of every route is one the document names for it', () => {
    const methods = new Set(s.app.routes().map((r) => r.method));
    for (const m of methods) expect(DOC).toMatch(new RegExp(`\\b${m}\\b`));
  });
});

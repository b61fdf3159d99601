// What a Node process's main thread spent its time on, from a V8 CPU profile (`node --cpu-prof`): every sample is
// given to the first part, in the order listed, whose test matches any frame of its stack (so the splice's own
// buffer copies count as the splice, and an HTTP response written from it too). Pure: the profile is parsed JSON.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfilePart {
  name: string;
  /** Whether a frame belongs to this part. */
  test: (frame: { functionName: string; url: string }) => boolean;
}

const fn = (...names: string[]) => {
  const set = new Set(names);
  return (f: { functionName: string }) => set.has(f.functionName);
};
const url = (pattern: RegExp) => (f: { url: string }) => pattern.test(f.url);

/** serve's parts, most specific first. */
const SERVE_PARTS: readonly ProfilePart[] = [
  { name: 'idle', test: fn('(idle)') },
  { name: 'garbage collection', test: fn('(garbage collector)') },
  { name: 'splice: shared segment parsed (once per segment)', test: fn('prepareSharedSegment') },
  { name: 'splice: a viewer', test: fn('spliceViewer') },
  { name: 'child processes: spawn, pipes, exit', test: url(/node:(internal\/)?child_process/) },
  { name: 'metrics (/metrics scrapes)', test: (f) => /prom-client|\/metrics\.js/.test(f.url) || f.functionName === 'collect' },
  { name: 'state (SQLite)', test: (f) => /better-sqlite3|sqlite/.test(f.url) || /^(prepare|run|get|all)$/.test(f.functionName) },
  { name: 'files (fs calls)', test: url(/^node:(internal\/)?fs/) },
  { name: 'HTTP (parse, route, answer)', test: url(/^node:(_http|internal\/http|http|net|internal\/streams|stream)|find-my-way|undici/) },
  { name: 'module loading', test: url(/^node:internal\/modules/) },
  { name: 'other wmark code', test: url(/wmark|\/dist\/|\/src\//) },
  { name: '(program): V8 and native work outside JavaScript', test: fn('(program)') },
];

/** Milliseconds of the profile per part (and `other` for samples no part claims). */
export function profileSplit(profile: CpuProfile, parts: readonly ProfilePart[] = SERVE_PARTS): Map<string, number> {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const partOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = partOf.get(id);
    if (known !== undefined) return known;
    const frames: ProfileNode['callFrame'][] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) frames.push(byId.get(at)!.callFrame);
    const part = parts.find((p) => frames.some((f) => p.test(f)))?.name ?? 'other';
    partOf.set(id, part);
    return part;
  };
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const part = classify(id);
    out.set(part, (out.get(part) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return out;
}

// The key `wmark ingest` gives a video when none is given: the source's file name without its extension, which is
// what people type next (`wmark ingest movie.mp4`, then `wmark watermark --key movie`).

/** "movie" for /films/movie.mp4 and for https://cdn.example.com/films/movie.mp4?token=1; the source itself when no name is left. */
export function defaultVideoKey(source: string): string {
  let name: string;
  try {
    const url = new URL(source);
    name = url.protocol === 'http:' || url.protocol === 'https:' ? decoded(url.pathname.split('/').pop() ?? '') : baseName(source);
  } catch {
    name = baseName(source);
  }
  const stem = name.replace(/\.[^.]*$/, '').trim();
  return stem || source;
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function baseName(path: string): string {
  return (
    path
      .replace(/[/\\]+$/, '')
      .split(/[/\\]/)
      .pop() ?? ''
  );
}

// The key `wmark ingest` gives a video when none is given: the source's file name without its extension, which is
// what people type next (`wmark ingest movie.mp4`, then `wmark watermark --key movie`).

/** "movie" for /films/movie.mp4 and for https://cdn.example.com/films/movie.mp4?token=1; the source itself when no name is left. */
export function defaultVideoKey(source: string): string {
  const stem = sourceFileName(source)
    .replace(/\.[^.]*$/, '')
    .trim();
  return stem || source;
}

/** A source's file name: "movie.mp4" for /films/movie.mp4 and for https://cdn.example.com/films/movie.mp4?token=1. */
export function sourceFileName(source: string): string {
  try {
    const url = new URL(source);
    if (url.protocol === 'http:' || url.protocol === 'https:') return decoded(url.pathname.split('/').pop() ?? '');
  } catch {
    // Not a URL: a file path.
  }
  return baseName(source);
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

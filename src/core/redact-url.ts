// A URL with credentials in it (a database's, a queue's), shown without its password: in messages, logs, `doctor` and
// `status`. Pure, so that anything can name a server without loading its client.

/** The URL with its password (in the authority or a `password=` parameter) replaced by `***`. */
export function redactUrl(url: string): string {
  // Up to the last @ of the authority: a password with an unencoded @ in it is hidden whole.
  return url.replace(/\/\/([^:/@?#]*):[^/?#]*@/, '//$1:***@').replace(/([?&]password=)[^&#]*/gi, '$1***');
}

/** The URL's password, decoded, when it has one: to scrub it from a driver's message before it is shown. */
function urlPassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}

/** The text with every appearance of the URL's password, and of the URL itself, made harmless. */
export function scrubUrl(text: string, url: string): string {
  let out = text.split(url).join(redactUrl(url));
  const password = urlPassword(url);
  if (password && password.length >= 3) out = out.split(password).join('***');
  return out;
}

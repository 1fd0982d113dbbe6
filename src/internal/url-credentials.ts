/**
 * Internal: the `user:password@` of a URL, found (the cassette's redaction) or hidden (lines that
 * reach logs: a `baseURL` with credentials ends up in a connection error's message, which a retry logs).
 */

/** A URL's credentials: group 1 is the `user:password` before its `@`. Global: use with `matchAll` or `replace`. */
export const urlCredentials = /\b[A-Za-z][A-Za-z0-9+.-]*:\/\/([^\s/?#@"'<>]+)@/g

/**
 * `text` with each URL's credentials replaced by `***`.
 *
 * @example
 * ```ts
 * withoutUrlCredentials("fetch failed: http://gw:s3cret@10.0.0.1/v1") // "fetch failed: http://***@10.0.0.1/v1"
 * ```
 */
export const withoutUrlCredentials = (text: string): string =>
  text.replace(urlCredentials, (whole: string, credentials: string) => `${whole.slice(0, whole.length - credentials.length - 1)}***@`)

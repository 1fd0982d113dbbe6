/**
 * Internal: a text with the `user:password@` of every URL in it hidden, for lines that reach logs
 * (a `baseURL` with credentials ends up in a connection error's message, which a retry logs).
 */

/**
 * `text` with each URL's credentials replaced by `***`.
 *
 * @example
 * ```ts
 * withoutUrlCredentials("fetch failed: http://gw:s3cret@10.0.0.1/v1") // "fetch failed: http://***@10.0.0.1/v1"
 * ```
 */
export const withoutUrlCredentials = (text: string): string => text.replace(/\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/g, "$1***@")

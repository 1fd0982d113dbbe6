/**
 * The version of an installed package, as resolved from this package (for error messages that name
 * the version to install). `undefined` when the package is not installed or does not say.
 *
 * @example
 * ```ts
 * installedVersion("effect") // "4.1.0"
 * ```
 */
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)

export const installedVersion = (name: string): string | undefined => {
  try {
    const manifest = require(`${name}/package.json`) as { readonly version?: unknown }
    return typeof manifest.version === "string" ? manifest.version : undefined
  } catch {
    return undefined
  }
}

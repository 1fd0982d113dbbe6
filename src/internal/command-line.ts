/**
 * What the package's command-line programs (`effect-agent-trace`, `effect-agent-studio`) share: leaving
 * with a one-line message on standard error, and the package's version for `--version`.
 *
 * @example
 * ```ts
 * const fail = commandFailure("effect-agent-trace")
 * if (files.length === 0) fail(2, "pass one JSON Lines trace file")
 * process.stdout.write(`${packageVersion()}\n`)
 * ```
 */
import { readFileSync } from "node:fs"

/** A function that writes `<program>: <message>` to standard error and exits with `code`. */
export const commandFailure = (program: string) => (code: number, message: string): never => {
  process.stderr.write(`${program}: ${message}\n`)
  process.exit(code)
}

/**
 * The package's version, read from its package.json (src/<folder>/ and dist/<folder>/ are both two
 * levels below it, where these programs and this module are built); "unknown" when it cannot be read.
 */
export const packageVersion = (): string => {
  try {
    return String(JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version)
  } catch {
    return "unknown"
  }
}

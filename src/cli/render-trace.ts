#!/usr/bin/env node
/**
 * `effect-agent-trace trace.jsonl` (or `npm run trace -- trace.jsonl`, or `-` / no file for standard
 * input): prints a JSON Lines trace as an indented timeline. `--help` and `--version` answer; a file
 * that cannot be read, an unknown option or a second file end with a one-line message saying what to
 * pass (exit 1 for a file that cannot be read, 2 for a usage mistake), never a stack trace.
 */
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { commandFailure, packageVersion } from "../internal/command-line.ts"
import { renderTrace } from "../trace/render-trace.ts"

const usage = `Usage: effect-agent-trace [options] [trace.jsonl]

Prints a JSON Lines trace (written by jsonlTrace(path)) as an indented timeline.
Reads standard input when the file is "-" or left out (and input is piped).

Options:
  -h, --help     show this help
  -v, --version  show the version of effect-agent-dsl
`

const hint = 'pass one JSON Lines trace file, or "-" for standard input (--help for usage)'

const fail = commandFailure("effect-agent-trace")

const version = packageVersion

const parsed = (() => {
  try {
    return parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: { help: { type: "boolean", short: "h" }, version: { type: "boolean", short: "v" } }
    })
  } catch (error) {
    return fail(2, `${error instanceof Error ? error.message : String(error)}; ${hint}`)
  }
})()

if (parsed.values.help === true) {
  process.stdout.write(usage)
  process.exit(0)
}
if (parsed.values.version === true) {
  process.stdout.write(`${version()}\n`)
  process.exit(0)
}
if (parsed.positionals.length > 1) fail(2, `expected one trace file, got ${parsed.positionals.length}; ${hint}`)

const path = parsed.positionals[0]
const fromStdin = path === undefined || path === "-"
// Nothing piped and no file: print the usage instead of waiting for a terminal's input.
if (path === undefined && process.stdin.isTTY === true) fail(2, `no trace given; ${hint}`)

const text = (() => {
  try {
    return readFileSync(fromStdin ? 0 : path, "utf8")
  } catch (error) {
    const reason = (error as { code?: unknown }).code === "ENOENT"
      ? "no such file"
      : (error as { code?: unknown }).code === "EISDIR"
      ? "it is a directory"
      : error instanceof Error
      ? error.message
      : String(error)
    return fail(1, `cannot read ${fromStdin ? "standard input" : JSON.stringify(path)}: ${reason}; ${hint}`)
  }
})()
process.stdout.write(`${renderTrace(text)}\n`)

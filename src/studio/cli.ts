#!/usr/bin/env node
/**
 * `effect-agent-studio [module]` (or `npm run studio`): loads a module exporting agents and composites,
 * serves the studio on 127.0.0.1 and prints its URL with the token. Runs persist to
 * `.effect-agent-studio/runs.jsonl` in the current folder (bounded: 1,000 runs, 64 MiB). `--help`
 * lists the options; a mistake ends with a one-line message (exit 2), a module that does not load with
 * exit 1, never a stack trace.
 */
import { parseArgs } from "node:util"
import { commandFailure, packageVersion } from "../internal/command-line.ts"
import { loadModule, ModuleLoadFailed } from "./load-module.ts"
import { startStudio, type StudioOptions } from "./server/studio-server.ts"
import type { StudioSessions } from "./collect/sessions.ts"
import type { DurableSource } from "./collect/durable-source.ts"

const usage = `Usage: effect-agent-studio [options] [module]

Serves the studio: a local web UI to watch, debug and steer agent runs.
"module" is a JavaScript or TypeScript file exporting agents and composites (TypeScript needs tsx).
It may also export "sessions" (a session store to browse), "durable" (durable agents to show)
and "studio" (more options for startStudio).

Options:
  -p, --port <n>        port (default 4111, or the next free one)
      --host <address>  address to listen on (default 127.0.0.1; others expose the studio)
      --token <token>   the API token (default: a new random one)
      --store <file>    where runs persist (default .effect-agent-studio/runs.jsonl)
      --no-store        keep runs in memory only
      --max-runs <n>    runs kept (default 1000; the least recently active are evicted)
      --max-mb <n>      megabytes of events kept (default 64)
      --trace <file>    import a JSON Lines trace (repeatable)
  -h, --help            show this help
  -v, --version         show the version of effect-agent-dsl
`

const fail = commandFailure("effect-agent-studio")

const version = packageVersion

const parsed = (() => {
  try {
    return parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: {
        port: { type: "string", short: "p" },
        host: { type: "string" },
        token: { type: "string" },
        store: { type: "string" },
        "no-store": { type: "boolean" },
        "max-runs": { type: "string" },
        "max-mb": { type: "string" },
        trace: { type: "string", multiple: true },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" }
      }
    })
  } catch (error) {
    return fail(2, `${error instanceof Error ? error.message : String(error)} (--help for usage)`)
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
if (parsed.positionals.length > 1) fail(2, `expected one module, got ${parsed.positionals.length} (--help for usage)`)

const integer = (name: string, text: string | undefined, min: number): number | undefined => {
  if (text === undefined) return undefined
  const n = Number(text)
  if (!Number.isInteger(n) || n < min) fail(2, `--${name} must be an integer of at least ${min}, got ${JSON.stringify(text)}`)
  return n
}

const port = integer("port", parsed.values.port, 0)
const maxRuns = integer("max-runs", parsed.values["max-runs"], 1)
const maxMb = integer("max-mb", parsed.values["max-mb"], 1)
const file = parsed.positionals[0]

let exports: Record<string, unknown> = {}
if (file !== undefined) {
  try {
    exports = await loadModule(file)
  } catch (error) {
    fail(1, error instanceof ModuleLoadFailed ? error.message : `cannot load ${file}: ${String(error)}`)
  }
}
const extra = (typeof exports.studio === "object" && exports.studio !== null ? exports.studio : {}) as Partial<StudioOptions>
const options: StudioOptions = {
  ...extra,
  agents: exports,
  ...(parsed.values.host === undefined ? {} : { host: parsed.values.host }),
  ...(port === undefined ? {} : { port }),
  ...(parsed.values.token === undefined ? {} : { token: parsed.values.token }),
  ...(parsed.values["no-store"] === true ? {} : { storeFile: parsed.values.store ?? extra.storeFile ?? ".effect-agent-studio/runs.jsonl" }),
  ...(maxRuns === undefined ? {} : { maxRuns }),
  ...(maxMb === undefined ? {} : { maxBytes: maxMb * 1024 * 1024 }),
  ...(parsed.values.trace === undefined ? {} : { traces: parsed.values.trace }),
  ...(exports.sessions === undefined ? {} : { sessions: exports.sessions as StudioSessions }),
  ...(exports.durable === undefined ? {} : { durable: exports.durable as DurableSource })
}

let studio: Awaited<ReturnType<typeof startStudio>>
try {
  studio = await startStudio(options)
} catch (error) {
  fail(1, `cannot start: ${error instanceof Error ? error.message : String(error)}`)
}
const names = [...studio!.agents.values()].map((e) => `${e.info.name} (${e.info.kind})`)
process.stdout.write([
  `effect-agent studio: ${studio!.url}`,
  `  ${names.length === 0 ? "no agents exported" : `agents: ${names.join(", ")}`}`,
  `  runs kept: ${studio!.store.maxRuns} runs / ${Math.round(studio!.store.maxBytes / 1024 / 1024)} MiB${options.storeFile === undefined ? " (memory only)" : ` in ${options.storeFile}`}`,
  `  connect an app: EFFECT_AGENT_STUDIO_URL='${studio!.url}' and .onEvent(studioHooks())`,
  ...(["127.0.0.1", "localhost", "::1", undefined].includes(options.host) ? [] : [`  warning: listening on ${options.host}, not loopback: anyone who can reach it and has the token can run the agents`]),
  ""
].join("\n"))

const shutdown = () => {
  studio.close().finally(() => process.exit(0))
}
process.once("SIGINT", shutdown)
process.once("SIGTERM", shutdown)

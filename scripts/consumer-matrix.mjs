#!/usr/bin/env node
/**
 * The package at both ends of every range it declares, on every Node it claims (`npm run
 * test:consumers`; CI runs it after `npm test`).
 *
 * `npm pack` once, then for each install:
 * - **lowest**: every peer at the lowest version its range allows (read from package.json, so the
 *   ranges and this check cannot drift apart), the oldest TypeScript and AI SDK provider we claim;
 * - **newest**: every peer at the newest version npm resolves today inside its range, TypeScript's
 *   latest and the AI SDK's latest provider; and a line for each peer whose `latest` lies outside our
 *   range (a new major to try), which does not fail the run;
 * a fresh consumer project is installed from the tarball, type-checked with that install's TypeScript,
 * and run under each Node of the install's row: `test/package/fixture/src/main.ts` (core, testing,
 * durable) and `test/package/matrix/every-entry.mjs` (every entry point: providers against loopback
 * servers, durable engines including PGlite files and PostgreSQL when DATABASE_URL is set, MCP, session
 * store, the web and AG-UI handlers, A2A both ways, evaluations, arbitraries).
 *
 * Node versions come from the npm registry (the `node` package, cached under
 * node_modules/.cache/consumer-nodes). Prints a line per step and ends with "N passed, N failed".
 *
 *   node scripts/consumer-matrix.mjs                 # both installs
 *   node scripts/consumer-matrix.mjs --only newest   # one
 */
import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(fileURLToPath(import.meta.url), "../..")
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined
const started = Date.now()
const log = (line) => console.log(`[consumers ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`)

/** The lowest version a range allows: `^4.0.6` → 4.0.6; `^6.49.0 || ^7.0.0` → 6.49.0. */
const lowest = (range) => {
  const match = /(\d+\.\d+\.\d+)/.exec(range.split("||")[0])
  if (match === null) throw new Error(`cannot read the lowest version of "${range}"`)
  return match[1]
}
/** The oldest Node `engines` allows (`>=20.19` → 20.19.0). */
const oldestNode = () => {
  const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(manifest.engines.node)
  return `${match[1]}.${match[2]}.${match[3] ?? 0}`
}

const peers = Object.keys(manifest.peerDependencies)
// What a consumer installs beside the package besides our peers: TypeScript (the oldest we claim in the
// README, and the newest), the AI SDK provider of `ai` 5 (LanguageModelV2) and of today's AI SDK.
const newestPackages = [
  ...peers.map((name) => `${name}@${manifest.peerDependencies[name]}`),
  "typescript@latest",
  // tsx: what the studio bin loads a TypeScript module with (the docs say to install it).
  "tsx@latest",
  "@ai-sdk/openai-compatible@latest",
  "@types/node@latest"
]
const installs = {
  lowest: {
    packages: [
      ...peers.map((name) => `${name}@${lowest(manifest.peerDependencies[name])}`),
      // The oldest TypeScript we claim: the declarations use `NoInfer` (5.4), without which some
      // documented mistakes silently compile.
      "typescript@5.4.5",
      "tsx@4",
      "@ai-sdk/openai-compatible@1",
      "@types/node@20"
    ],
    nodes: [oldestNode(), "22", "24"]
  },
  // npm prefers the versions whose `engines` accept the Node it runs on, so what "newest" means depends
  // on the user's Node (openai 7 and @effect/platform-node-shared 4.1 declare Node >= 22): one install
  // resolved by npm on Node 20, run on the oldest Node we claim, and one resolved on Node 22.
  "newest-node20": {
    packages: newestPackages,
    resolveWith: oldestNode(),
    nodes: [oldestNode()]
  },
  newest: {
    packages: newestPackages,
    resolveWith: "22",
    nodes: ["22", "24"]
  }
}

const run = (command, args, options = {}) => {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: "pipe", maxBuffer: 64 * 1024 * 1024, ...options })
  } catch (error) {
    throw new Error(`${command} ${args.join(" ")} failed:\n${error.stdout ?? ""}\n${error.stderr ?? ""}`.trim())
  }
}

/** A Node binary of `spec` ("22", "20.19.0"), installed once from the npm registry's `node` package. */
const nodeBinary = (spec) => {
  const dir = join(root, "node_modules/.cache/consumer-nodes", spec)
  const binary = join(dir, "node_modules/.bin/node")
  if (!existsSync(binary)) {
    log(`installing Node ${spec} from the npm registry`)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "package.json"), '{ "private": true }\n')
    run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", `node@${spec}`], { cwd: dir })
  }
  return binary
}

/** npm's own script, to run it with another Node. */
const npmCli = () => join(resolve(run("npm", ["root", "-g"]).trim()), "npm/bin/npm-cli.js")

const expected = {
  main: { viaPromise: "3", viaEffect: "hi", failed: "ToolNotAllowed", viaDurable: "3" },
  everyEntry: {
    openai: "3", anthropic: "4", ollama: "5", gemini: "7", durableMemory: "3", durableEmbedded: "3", mcp: "42", arbitraries: 3,
    web: "ok", agUi: "ok", a2a: "1 EUR = 1.08 USD", evals: 1,
    ...(process.env.DATABASE_URL ? { durablePostgres: "3", sessionPostgres: 1 } : {})
  }
}

let passed = 0
let failed = 0
const check = (name, body) => {
  try {
    body()
    passed++
    log(`ok    ${name}`)
  } catch (error) {
    failed++
    log(`FAIL  ${name}\n${String(error.message ?? error).split("\n").slice(0, 40).join("\n")}`)
  }
}
const sameAs = (actual, wanted) => {
  for (const [key, value] of Object.entries(wanted)) {
    if (actual[key] !== value) throw new Error(`${key}: expected ${JSON.stringify(value)}, got ${JSON.stringify(actual[key])} in ${JSON.stringify(actual)}`)
  }
}

/** Peers whose `latest` is outside our range (informational: a release to try and widen the range for). */
const outsideRanges = () => {
  for (const name of peers) {
    const range = manifest.peerDependencies[name]
    const latest = run("npm", ["view", `${name}@latest`, "version"]).trim()
    const inside = run("npm", ["view", `${name}@${range}`, "version", "--json"])
    if (!inside.includes(`"${latest}"`)) log(`note: ${name}@${latest} is out, outside our range ${range}`)
  }
}

const work = mkdtempSync(join(tmpdir(), "effect-agent-dsl-consumers-"))
try {
  log("packing the package (npm pack builds dist/)")
  run("npm", ["pack", "--silent", "--pack-destination", work], { cwd: root })
  const tarball = join(work, readdirSync(work).find((f) => f.endsWith(".tgz")))
  for (const [name, install] of Object.entries(installs)) {
    if (only !== undefined && only !== name) continue
    if (name === "newest") outsideRanges()
    const consumer = join(work, name)
    cpSync(join(root, "test/package/fixture"), consumer, { recursive: true })
    for (const file of ["every-entry.mjs", "studio-bin.mjs", "studio-agents.ts"]) cpSync(join(root, "test/package/matrix", file), join(consumer, file))
    let installed = false
    check(`${name}: npm install ${install.packages.join(" ")}${install.resolveWith ? ` (npm on Node ${install.resolveWith})` : ""}`, () => {
      const args = ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", tarball, ...install.packages]
      if (install.resolveWith === undefined) run("npm", args, { cwd: consumer })
      else run(nodeBinary(install.resolveWith), [npmCli(), ...args], { cwd: consumer })
      installed = true
    })
    if (!installed) continue
    const versions = Object.fromEntries(["effect", "@effect/platform-node-shared", "openai", "@anthropic-ai/sdk", "@google/genai", "@electric-sql/pglite", "typescript", "@ai-sdk/provider"].map((p) => {
      try {
        return [p, JSON.parse(readFileSync(join(consumer, "node_modules", p, "package.json"), "utf8")).version]
      } catch {
        return [p, "-"]
      }
    }))
    log(`${name}: resolved ${Object.entries(versions).map(([p, v]) => `${p}@${v}`).join(" ")}`)
    check(`${name}: type-checks with TypeScript ${versions.typescript}`, () => {
      run(process.execPath, [join(consumer, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: consumer })
    })
    check(`${name}: every documented mistake is a compile error with TypeScript ${versions.typescript}`, () => {
      let output = ""
      try {
        run(process.execPath, [join(consumer, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.errors.json"], { cwd: consumer })
      } catch (error) {
        output = String(error.stdout ?? error.message)
      }
      const lines = readFileSync(join(consumer, "src/type-errors.ts"), "utf8").split("\n")
      const silent = lines.flatMap((line, at) => {
        const label = /\/\/ ([A-Z_]+)$/.exec(line)?.[1]
        return label !== undefined && !output.includes(`src/type-errors.ts(${at + 1},`) ? [label] : []
      })
      if (silent.length > 0) throw new Error(`no compile error on: ${silent.join(", ")}`)
    })
    for (const spec of install.nodes) {
      let node
      check(`Node ${spec} is available`, () => {
        node = nodeBinary(spec)
      })
      if (node === undefined) continue
      const version = run(node, ["--version"]).trim()
      const env = { ...process.env, NODE_OPTIONS: "" }
      check(`${name} on Node ${version}: the compiled consumer program`, () => {
        sameAs(JSON.parse(run(node, ["out/main.js"], { cwd: consumer, env })), expected.main)
      })
      check(`${name} on Node ${version}: every entry point`, () => {
        const output = run(node, ["every-entry.mjs"], { cwd: consumer, env, timeout: 240_000 })
        const result = JSON.parse(output.trim().split("\n").at(-1))
        sameAs(result, expected.everyEntry)
        if (!/^v[234]:6$/.test(result.aiSdk)) throw new Error(`aiSdk: expected "v2|v3|v4:6", got ${JSON.stringify(result.aiSdk)}`)
      })
      check(`${name} on Node ${version}: the studio bin loads a TypeScript module`, () => {
        const output = run(node, ["studio-bin.mjs"], { cwd: consumer, env, timeout: 120_000 })
        const agents = JSON.parse(output.trim().split("\n").at(-1)).agents
        if (JSON.stringify(agents) !== JSON.stringify(["calculator"])) throw new Error(`agents: expected ["calculator"], got ${JSON.stringify(agents)}`)
      })
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
console.log(`\nconsumers: ${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)

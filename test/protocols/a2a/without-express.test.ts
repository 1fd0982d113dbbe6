/**
 * `express` is an optional peer for the A2A server only: the entry imports, and its client works,
 * in a program where `express` cannot be found; `serveA2a` then fails with an `AgentConfigError` that
 * names the package and how to install it. Run in a fresh `node` (tsx, on the sources) with a module
 * hook that refuses `express` as Node refuses a package that is not installed.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, expect, it } from "vitest"

const root = resolve(import.meta.dirname, "../../..")
const work = mkdtempSync(join(tmpdir(), "a2a-without-express-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

it("imports and builds a client without express; serveA2a says to install it", { timeout: 60_000 }, () => {
  const hook = join(work, "hook.mjs")
  writeFileSync(
    hook,
    `export async function resolve(specifier, context, next) {
  if (specifier === "express") {
    const error = new Error("Cannot find package 'express' imported from " + context.parentURL)
    error.code = "ERR_MODULE_NOT_FOUND"
    throw error
  }
  return next(specifier, context)
}
`
  )
  const register = join(work, "register.mjs")
  writeFileSync(register, `import { register } from "node:module"\nregister(${JSON.stringify(pathToFileURL(hook).href)})\n`)
  const entry = join(work, "program.mjs")
  writeFileSync(
    entry,
    `const a2a = await import(${JSON.stringify(pathToFileURL(join(root, "src/protocols/a2a/index.ts")).href)})
const { agent, ModelClient, text } = await import(${JSON.stringify(pathToFileURL(join(root, "src/index.ts")).href)})
// A card served by plain node:http: the client reads it and gives the remote agent as a tool.
const { createServer } = await import("node:http")
const server = createServer((req, res) => {
  const card = a2a.agentCardOf({ name: "remote", prompt: undefined, input: undefined, output: undefined, skills: [], tools: [] }, { url: "http://127.0.0.1:" + server.address().port + "/a2a/jsonrpc", bearer: false })
  res.setHeader("content-type", "application/json")
  res.end(JSON.stringify(card))
})
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
const remote = await a2a.a2aAgent("http://127.0.0.1:" + server.address().port)
console.log("client", remote._tag, remote.name)
server.close()
try {
  await a2a.serveA2a(agent("a").model(ModelClient.fromFunction(() => text("hi"))))
  console.log("served")
} catch (error) {
  console.log(error._tag, error.message)
}
process.exit(0)
`
  )
  const result = spawnSync(process.execPath, ["--import", "tsx", "--import", pathToFileURL(register).href, entry], { cwd: root, encoding: "utf8", timeout: 45_000 })
  expect(result.stderr).toBe("")
  const lines = result.stdout.trim().split("\n")
  expect(lines[0]).toBe("client Tool remote")
  expect(lines[1]).toMatch(/^AgentConfigError .*serveA2a.*"express".*optional peer dependency of effect-agent-dsl for the A2A server only: npm install express$/)
})

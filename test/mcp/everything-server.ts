/**
 * The reference MCP server `@modelcontextprotocol/server-everything` (not written by this project),
 * started by the tests: over stdio as a child process of the client, and over streamable HTTP as a
 * child process listening on 127.0.0.1 at a free port. Always stopped by the caller.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { dirname, join } from "node:path"
import { mcpHttp, mcpStdio } from "../../src/mcp/index.ts"

const require = createRequire(import.meta.url)
/** The server's entry point, run with this Node. */
export const everythingEntry = join(dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js")

/** The server over stdio, started by the client. */
export const everythingStdio = (options: { readonly roots?: ReadonlyArray<{ readonly uri: string }> } = {}) =>
  mcpStdio("everything", { command: process.execPath, args: [everythingEntry, "stdio"], ...(options.roots === undefined ? {} : { roots: options.roots }) })

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** Starts the server over streamable HTTP; resolves once it listens. */
export const startEverythingHttp = async (): Promise<{
  readonly url: string
  readonly process: ChildProcess
  /** What the server printed on stdout so far. */
  readonly output: () => string
  readonly stop: () => Promise<void>
}> => {
  const port = await freePort()
  const child = spawn(process.execPath, [everythingEntry, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout!.on("data", (chunk: Buffer) => void (output += chunk.toString()))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("server-everything did not start within 15 s")), 15_000)
    let log = ""
    child.stderr!.on("data", (chunk: Buffer) => {
      log += chunk.toString()
      if (log.includes("listening on port")) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`server-everything exited with ${code}: ${log}`))
    })
  })
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill("SIGKILL")
    })
  return { url: `http://127.0.0.1:${port}/mcp`, process: child, output: () => output, stop }
}

/** The HTTP server as a spec. */
export const everythingHttp = (url: string) => mcpHttp("everything", url)

// Starts the installed studio bin (`effect-agent-studio`) on a TypeScript module with this Node, as a
// user's `npx effect-agent-studio studio-agents.ts` does (tsx installed in the project), lists its
// agents over the API, and prints one JSON line: { agents: [...] }. Exits 1 with the bin's output when
// it does not start within 60 s.
import { spawn } from "node:child_process"
import { createRequire } from "node:module"

const bin = createRequire(import.meta.url).resolve("effect-agent-dsl/package.json").replace(/package\.json$/, "dist/studio/cli.js")
const child = spawn(process.execPath, [bin, "studio-agents.ts", "--port", "0", "--no-store"], { stdio: ["ignore", "pipe", "pipe"] })
let output = ""
const url = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`the studio did not start in 60 s:\n${output}`)), 60_000)
  const read = (chunk) => {
    output += String(chunk)
    const found = /effect-agent studio: (\S+)/.exec(output)?.[1]
    if (found !== undefined) {
      clearTimeout(timer)
      resolve(found)
    }
  }
  child.stdout.on("data", read)
  child.stderr.on("data", read)
  child.on("exit", (code) => reject(new Error(`the studio exited (${code}):\n${output}`)))
}).catch((error) => {
  child.kill("SIGKILL")
  console.error(error.message)
  process.exit(1)
})
try {
  const parsed = new URL(url)
  const agents = await (await fetch(new URL("/api/agents", parsed), { headers: { authorization: `Bearer ${parsed.searchParams.get("token")}` } })).json()
  console.log(JSON.stringify({ agents: agents.map((a) => a.id) }))
} finally {
  child.removeAllListeners("exit")
  child.kill("SIGTERM")
}

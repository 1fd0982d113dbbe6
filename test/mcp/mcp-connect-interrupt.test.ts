/**
 * Connecting to an MCP server can be interrupted: a timeout around it (or the run ending) stops it at
 * once, not after `connectTimeoutMs`, and the child process it started is stopped all the same.
 */
import { existsSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { isProcessAlive } from "../../src/internal/process-alive.ts"
import { mcpStdio, mcpTools } from "../../src/mcp/index.ts"
import { runExit } from "../fixtures.ts"

const readPid = async (file: string): Promise<number | undefined> => {
  for (const end = Date.now() + 3_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    if (existsSync(file)) return Number(readFileSync(file, "utf8"))
  }
  return undefined
}

describe("MCP client: connecting", { timeout: 30_000 }, () => {
  it("is interrupted by a timeout around it, and stops the server it started", async () => {
    const pidFile = join(tmpdir(), `mute-mcp-${process.pid}-${Date.now()}.pid`)
    // A server that reads its input and never answers (not even initialize), nor exits when it ends.
    const mute = mcpStdio("mute", {
      command: process.execPath,
      args: ["-e", `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); process.stdin.resume(); setInterval(() => {}, 1000)`]
    })
    try {
      const started = Date.now()
      const exit = await runExit(Effect.scoped(mcpTools(mute, { connectTimeoutMs: 8_000 })).pipe(Effect.timeout("300 millis")))
      expect(Date.now() - started).toBeLessThan(2_000)
      expect(exit._tag).toBe("Failure")
      // A child stopped before it wrote its pid never writes it; one still running writes it soon.
      const pid = await readPid(pidFile)
      if (pid !== undefined) {
        const end = Date.now() + 8_000
        while (isProcessAlive(pid) && Date.now() < end) await new Promise((r) => setTimeout(r, 50))
        expect(isProcessAlive(pid)).toBe(false)
      }
    } finally {
      rmSync(pidFile, { force: true })
    }
  })
})

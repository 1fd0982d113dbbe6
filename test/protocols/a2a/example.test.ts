/** `npm run example:a2a` runs: an approval answered across the A2A border, and a remote agent as a tool. */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

describe("examples/a2a.ts", () => {
  it("pays bob after approval on the same task, the concierge hears the rates agent, and the treasurer's run suspends on the remote bank's question", async () => {
    const env = { ...process.env }
    delete env["AI_PROVIDER"]
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "examples/a2a.ts"], { encoding: "utf8", timeout: 60_000, env })
    expect(stdout).toMatch(/task (\S+): TASK_STATE_INPUT_REQUIRED\ntask \1: TASK_STATE_COMPLETED — Done: sent 20 to bob\./)
    expect(stdout).toContain("The rates agent says:")
    expect(stdout).toContain("1 EUR = 1.08 USD")
    // The remote bank's approval question suspended our treasurer's run; its resume answered the same remote task.
    expect(stdout).toMatch(/our run waits on reply_to_bank: Waiting for approval of transfer/)
    expect(stdout).toContain("The bank says: Done: sent 20 to bob.")
  }, 60_000)
})

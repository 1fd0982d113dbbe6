/** `npm run example:durable` works: a worker killed with SIGKILL, a second one finishes the run. */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

it("shows a crash and the resume finishing the run, with no server", () => {
  const example = fileURLToPath(new URL("../../examples/durable.ts", import.meta.url))
  const out = execFileSync(process.execPath, ["--import", "tsx", example], { encoding: "utf8", timeout: 170_000 })
  expect(out).toContain("killed with SIGKILL in the middle of the run")
  expect(out).toContain('"output":"Trip ready: room booked in Lisbon, sunny in Lisbon."')
  // booked once (mutating, finished before the crash); the weather asked twice (readOnly, cut short)
  expect(out.match(/booked a room in Lisbon/g)?.length).toBe(1)
  expect(out.match(/asked the weather in Lisbon/g)?.length).toBe(2)
}, 180_000)

/**
 * examples/ag-ui-server.ts as the README shows it: its endpoint on loopback, driven by its own demo
 * (`@ag-ui/client`'s HttpAgent): a server tool, an interrupt approved by a resume entry, and a client
 * tool whose result continues the run.
 */
import { afterEach, expect, it, vi } from "vitest"
import { demo, startAgUiServer } from "../../../examples/ag-ui-server.ts"

afterEach(() => void vi.unstubAllEnvs())

it("serves the README's AG-UI example: text and a tool, an approval interrupt and its resume, a client tool, shared state", async () => {
  // AI_PROVIDER set but blank counts as unset: the scripted model, not `fromEnv` (which would refuse it).
  vi.stubEnv("AI_PROVIDER", " ")
  const server = await startAgUiServer({ port: 0 })
  const lines: Array<string> = []
  try {
    await demo(server.url, (line) => void lines.push(line))
  } finally {
    await server.close()
  }
  const answers = lines.filter((l) => l.includes("answer:"))
  expect(answers).toEqual(['  answer: "Done: sunny, 21°C in Paris."', '  answer: "Done: sent 500 to bob."', '  answer: "Done: cerulean."', '  answer: "Done: 2 items in the cart."'])
  // The shared cart: the front end's state followed the tool's change (STATE_SNAPSHOT, then STATE_DELTA).
  expect(lines.at(-1)).toBe('  state: {"items":["bread","milk"]}')
  expect(lines.some((l) => l.startsWith("  events: RUN_STARTED STATE_SNAPSHOT") && l.includes("STATE_DELTA TOOL_CALL_RESULT"))).toBe(true)
  expect(lines.some((l) => l.startsWith("  interrupt: Approve the call of \"transfer\"?"))).toBe(true)
  expect(lines.some((l) => l.startsWith("  client tool: pick_color"))).toBe(true)
})

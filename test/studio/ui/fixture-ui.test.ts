/**
 * The studio's front end in headless Chromium against the fixture server, for what the scripted
 * example cannot show on demand: a run stopped mid-way, a failed run and a composite's child tree,
 * an input form generated from an object input schema, and a server's refusal of edited arguments
 * shown next to its run. (The main scenarios run against the real server: `studio-ui.test.ts`.)
 */
import { mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { collectPageErrors, describeBrowser } from "../../support/browser.ts"
import { type FixtureServer, startFixtureServer } from "./fixture-server.ts"

// Code passed to page.evaluate runs in the browser; the repository's tsc has no DOM library, so the
// few browser globals it uses are declared here, for this file only.
declare const window: any, document: any, location: any, MutationObserver: any, PerformanceObserver: any, getComputedStyle: any

const screenshots = process.env.STUDIO_SCREENSHOTS ?? join(tmpdir(), "studio-ui-screenshots")
mkdirSync(screenshots, { recursive: true })

describeBrowser("studio front end on the fixture server", (browser) => {
  let server: FixtureServer
  beforeAll(async () => {
    server = await startFixtureServer({ stepMs: 30 })
  })
  afterAll(async () => {
    await server?.close()
  })

  const open = async (hash: string): Promise<{ page: Page; errors: ReadonlyArray<string> }> => {
    const page = await browser().newPage()
    await page.setViewportSize({ width: 1280, height: 900 })
    const errors = collectPageErrors(page)
    await page.goto(`${server.openUrl}${hash}`)
    return { page, errors }
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(screenshots, `fixture-${name}.png`), fullPage: true })
  const runOf = (predicate: (summary: FixtureServer["runs"] extends Map<string, infer R> ? R extends { summary: infer S } ? S : never : never) => boolean) =>
    [...server.runs.values()].find((run) => predicate(run.summary))!.summary.runId

  it("shows a failed run's error and refused tool, and a composite's children as a tree", async () => {
    const { page, errors } = await open(`#/runs/${runOf((summary) => summary.status === "failed")}`)
    await page.locator(".error-box", { hasText: "ToolNotAllowed" }).waitFor()
    await page.locator("details#turn-1 > summary").click()
    await page.locator("details.tool-call > summary", { hasText: "not allowed" }).click()
    await page.locator(".offered-tools, .chip", { hasText: "add" }).first().waitFor()
    await shot(page, "failed-run")
    await page.evaluate((id) => {
      location.hash = `#/runs/${id}`
    }, runOf((summary) => summary.agent === "research"))
    await expect.poll(() => page.locator(".child-tree > li strong").allTextContents()).toEqual(["planner", "writer"])
    await shot(page, "composite-run")
    expect(errors).toEqual([])
    await page.close()
  })

  it("shows markup in a run's data as text, never as elements", async () => {
    const payload = "<img src=x onerror=\"window.injected=1\"><script>window.injected=2</script>"
    const runId = "run-with-markup"
    const base = { agent: payload, runId, skill: payload }
    server.addRun({ runId, agent: payload, status: "failed", source: "ingest", startedAt: Date.now(), turns: 1, tokens: { input: 0, output: 0, total: 0 }, error: payload }, [
      { _tag: "RunStart", ...base, input: payload },
      { _tag: "Turn", ...base, turn: 1 },
      { _tag: "ModelCall", ...base, turn: 1, request: { messages: [{ role: "system", content: payload }, { role: "user", content: payload }], tools: [{ name: payload }] } },
      { _tag: "TextDelta", ...base, turn: 1, delta: payload },
      { _tag: "ModelResponse", ...base, turn: 1, durationMs: 1, response: { _tag: "ToolCalls", calls: [{ id: "c1", name: payload, arguments: payload }] } },
      { _tag: "ToolError", ...base, turn: 1, tool: payload, toolCallId: "c1", args: { [payload]: payload }, error: { _tag: payload, message: payload }, recovery: "report" },
      { _tag: "RunEnd", ...base, outcome: { _tag: "Failure", error: { _tag: payload, message: payload } }, turns: 1, toolCalls: 1, durationMs: 1 }
    ])
    const { page, errors } = await open(`#/runs/${runId}`)
    await page.locator(".error-box").first().waitFor()
    // Open every <details>, nested ones included (opening one may render more). Not by clicking a list of
    // locators: `details:not([open])` shrinks as they open, so its nth(i) may be gone by the time it is clicked.
    for (let round = 0; round < 10; round++) {
      const opened = await page.evaluate(() => {
        const closed = [...document.querySelectorAll("details:not([open])")] as unknown as Array<{ open: boolean }>
        for (const details of closed) details.open = true
        return closed.length
      })
      if (opened === 0) break
      await page.waitForTimeout(50)
    }
    await page.locator(".answer-text", { hasText: payload }).first().waitFor()
    expect(await page.locator("main img, main script").count()).toBe(0)
    await page.evaluate(() => {
      location.hash = "#/runs"
    })
    await page.locator(`a[data-run-id="${runId}"]`).waitFor()
    expect(await page.locator("main img, main script").count()).toBe(0)
    expect(await page.evaluate(() => (window as { injected?: number }).injected)).toBeUndefined()
    expect(await page.locator(`a[data-run-id="${runId}"] .col-error`).textContent()).toBe(payload)
    expect(errors).toEqual([])
    await page.close()
  })

  it("stops a running run", async () => {
    const runId = server.startRun("calculator", "slow", 400)
    const { page, errors } = await open(`#/runs/${runId}`)
    await page.getByRole("button", { name: "Stop run" }).click()
    await page.locator("h1 .badge", { hasText: "cancelled" }).waitFor()
    expect(server.runs.get(runId)?.summary.status).toBe("cancelled")
    expect(errors).toEqual([])
    await page.close()
  })

  it("generates the input form from the agent's input schema and refuses invalid input before sending", async () => {
    const { page, errors } = await open("#/playground/research")
    const before = server.runs.size
    await page.getByLabel("topic").fill("ti")
    await page.getByLabel("depth").fill("9")
    await page.getByRole("button", { name: "Run", exact: true }).click()
    await page.locator(".form-issues", { hasText: "depth: must be ≤ 5" }).waitFor()
    await page.locator(".form-issues", { hasText: "topic: must have at least 3 characters" }).waitFor()
    expect(server.runs.size).toBe(before)
    await page.getByLabel("topic").fill("tides")
    await page.getByLabel("depth").fill("2")
    await page.getByLabel("draft").check()
    await page.getByRole("button", { name: "Run", exact: true }).click()
    await page.locator("section.live-run .badge", { hasText: "completed" }).waitFor()
    const started = [...server.runs.values()].at(-1)!
    expect(started.events[0]?.event).toMatchObject({ _tag: "RunStart", input: JSON.stringify({ topic: "tides", depth: 2, draft: true }) })
    await shot(page, "playground-form")
    expect(errors).toEqual([])
    await page.close()
  })

  it("shows the server's refusal of edited arguments next to the run, which stays waiting", async () => {
    const runId = server.addSuspendedRun()
    const { page } = await open("#/approvals")
    const card = page.locator(`article[data-run-id="${runId}"]`)
    await card.getByLabel("Edit arguments").check()
    await card.getByLabel("to").fill("blocked")
    await card.getByRole("button", { name: "Send decisions" }).click()
    await card.locator(".error-box", { hasText: "the edited arguments were refused" }).waitFor()
    await card.locator(".error-box", { hasText: "this account is blocked" }).waitFor()
    expect(server.runs.get(runId)?.summary.status).toBe("suspended")
    expect(server.executed.filter((call) => call.runId === runId)).toEqual([])
    await shot(page, "approval-refused")
    await page.close()
  })
})

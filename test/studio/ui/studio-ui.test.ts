/**
 * The studio's front end in headless Chromium against the real studio server (`startStudio`) on the
 * scripted-model example (`examples/studio.ts`: calculator, teller, research, a session store):
 * every page renders without console errors in light and dark, the token is enforced, a scripted
 * agent run appears live in the playground and in its detail view, a tool call expands to its
 * arguments, a pending approval is approved from the page and the run completes, a denied call never
 * runs its tool, an invalid edit is refused before anything is sent, and a 5,000-event run with a 5 MB
 * tool result (sent through `/api/ingest`) does not freeze the page.
 * Screenshots go to $STUDIO_SCREENSHOTS (default: <tmp>/studio-ui-screenshots).
 */
import { mkdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { type Studio, startStudio } from "../../../src/studio/index.ts"
import type { RunDetail } from "../../../src/studio/ui/api-types.ts"
import { collectPageErrors, describeBrowser } from "../../support/browser.ts"

// Code passed to page.evaluate runs in the browser; the repository's tsc has no DOM library, so the
// few browser globals it uses are declared here, for this file only.
declare const window: any, document: any, location: any, MutationObserver: any, PerformanceObserver: any, getComputedStyle: any, axe: any

// Evaluated through the DevTools protocol: the studio's Content-Security-Policy refuses injected <script> tags.
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")
/** The WCAG 2 A/AA violations axe-core finds in the page as it is (contrast included), one line each. */
const accessibilityViolations = async (page: Page): Promise<Array<string>> => {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(`${axeSource};undefined`)
  const violations: Array<{ id: string; impact: string; nodes: Array<{ target: Array<string> }> }> = await page.evaluate(async () =>
    (await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } })).violations)
  return violations.map((violation) => `${violation.impact} ${violation.id}: ${violation.nodes.slice(0, 3).map((node) => node.target.join(" ")).join(", ")}`)
}

const screenshots = process.env.STUDIO_SCREENSHOTS ?? join(tmpdir(), "studio-ui-screenshots")
mkdirSync(screenshots, { recursive: true })

describeBrowser("studio front end on the real server", (browser) => {
  let studio: Studio
  beforeAll(async () => {
    const example = await import("../../../examples/studio.ts")
    studio = await startStudio({ agents: example, sessions: example.sessions, port: 0 })
  }, 60_000)
  afterAll(async () => {
    await studio?.close()
  })

  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${studio.origin}${path}`, {
      method,
      headers: { authorization: `Bearer ${studio.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
  }
  const detailOf = async (runId: string): Promise<RunDetail> => (await api("GET", `/api/runs/${runId}`)).body
  const open = async (hash: string): Promise<{ page: Page; errors: ReadonlyArray<string> }> => {
    const page = await browser().newPage()
    await page.setViewportSize({ width: 1280, height: 900 })
    const errors = collectPageErrors(page)
    await page.goto(`${studio.url}${hash}`)
    return { page, errors }
  }
  const go = (page: Page, hash: string) =>
    page.evaluate((target) => {
      location.hash = target
    }, hash)
  const shot = (page: Page, name: string) => page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true })
  /** A teller run waiting for the decision on its transfer. */
  const suspendedTransfer = async (input: string) => {
    const { body } = await api("POST", "/api/agents/teller/runs", { input })
    const runId: string = body.runId
    await expect.poll(async () => (await api("GET", "/api/approvals")).body.some((item: { runId: string }) => item.runId === runId), { timeout: 15_000 }).toBe(true)
    return runId
  }
  const toolRuns = (detail: RunDetail, tool: string) => detail.events.filter(({ event }) => event._tag === "ToolUse" && event.tool === tool)

  it("runs an agent from the playground: text and tool calls arrive live, a tool call expands to its arguments", async () => {
    const { page, errors } = await open("#/playground/calculator")
    await page.locator("table.tools-table").waitFor()
    await shot(page, "playground")
    await page.getByLabel("Input text").fill("What is 6 times 7?")
    await page.getByRole("button", { name: "Run", exact: true }).click()
    const live = page.locator("section.live-run")
    await live.locator(".badge", { hasText: "running" }).waitFor()
    await live.locator(".tool-call .tool-name", { hasText: "multiply" }).waitFor()
    await live.locator(".badge", { hasText: "completed" }).waitFor({ timeout: 20_000 })
    await live.locator(".answer-text", { hasText: "The result is 42." }).first().waitFor()
    await live.locator("details.tool-call > summary").click()
    await expect.poll(() => live.locator("details.tool-call .json").first().textContent()).toContain("\"a\": 6")
    await shot(page, "playground-run")
    expect(errors).toEqual([])
    await page.close()
  })

  it("follows a playground run through its suspension: once approved elsewhere, it streams on to its end", async () => {
    const { page, errors } = await open("#/playground/teller")
    await page.getByLabel("Input text").fill("pay zoe 500")
    await page.getByRole("button", { name: "Run", exact: true }).click()
    const live = page.locator("section.live-run")
    await live.locator(".badge", { hasText: "suspended" }).waitFor({ timeout: 15_000 })
    await live.locator(".tool-call .badge", { hasText: "waiting for approval" }).waitFor()
    const runId = (await live.getAttribute("data-run-id"))!
    const item = (await api("GET", "/api/approvals")).body.find((candidate: { runId: string }) => candidate.runId === runId)
    expect((await api("POST", `/api/approvals/${runId}`, { decisions: [{ callId: item.calls[0].callId, decision: "approve" }], decidedBy: "bob" })).status).toBe(200)
    await live.locator(".badge", { hasText: "completed" }).waitFor({ timeout: 15_000 })
    await live.locator(".answer-text.output", { hasText: "sent 500 to zoe" }).waitFor()
    expect(errors).toEqual([])
    await page.close()
  })

  it("streams a run live into its detail view: the events grow while it runs, then it completes", async () => {
    const { page, errors } = await open("#/runs")
    await page.locator("h1", { hasText: "Runs" }).waitFor()
    // Every event count the page shows is recorded as it changes.
    await page.evaluate(() => {
      const global = window as unknown as { counts: Array<string> }
      global.counts = []
      new MutationObserver(() => {
        const text = document.querySelector("#raw-title + span")?.textContent
        if (text !== undefined && text !== null && text !== global.counts.at(-1)) global.counts.push(text)
      }).observe(document.body, { subtree: true, childList: true, characterData: true })
    })
    const { body } = await api("POST", "/api/agents/calculator/runs", { input: "What is 5 times 8?" })
    await go(page, `#/runs/${body.runId}`)
    await page.locator("h1 .badge", { hasText: "completed" }).waitFor({ timeout: 20_000 })
    const final = (await detailOf(body.runId)).events.length
    const counts = (await page.evaluate(() => (window as unknown as { counts: Array<string> }).counts)).map((text) => Number(text.replace(/\D/g, "")))
    expect(counts.at(-1)).toBe(final)
    expect(counts.filter((count) => count > 0 && count < final).length).toBeGreaterThan(0)
    await page.locator(".answer-text.output", { hasText: "The result is 40." }).waitFor()
    const turn = page.locator("details#turn-1")
    if (!(await turn.evaluate((element) => (element as { open: boolean }).open))) await turn.locator("summary").first().click()
    await turn.locator("details.sub > summary", { hasText: "Request the model saw" }).click()
    // The offered tools prove the skill's allowlist.
    await expect.poll(() => turn.locator(".offered-tools code").allTextContents()).toEqual(["add", "multiply"])
    await expect.poll(() => turn.locator(".system-prompt").textContent()).toContain("You are a calculator")
    await shot(page, "run-detail")
    expect(errors).toEqual([])
    await page.close()
  })

  it("renders every page without console errors or WCAG A/AA violations (axe-core), in light and dark", async () => {
    const { body } = await api("POST", "/api/agents/research/runs", { input: "tides" })
    await expect.poll(async () => (await detailOf(body.runId)).summary.status, { timeout: 15_000 }).toBe("completed")
    await suspendedTransfer("pay dave 300")
    const { page, errors } = await open("#/runs")
    await page.locator("a.run-row").first().waitFor()
    await shot(page, "runs")
    const violations: Array<string> = []
    const check = async (name: string) => {
      for (const line of await accessibilityViolations(page)) violations.push(`${name}: ${line}`)
    }
    await check("runs")
    for (const [hash, ready, name] of [
      ["#/playground/teller", "table.tools-table", "playground"],
      ["#/approvals", "h1:text('Approvals')", "approvals"],
      ["#/sessions/demo-user", ".transcript", "sessions"],
      [`#/runs/${body.runId}`, ".answer-text.output", "composite-run"],
      ["#/nowhere", "h1:text('Not found')", "not-found"]
    ] as const) {
      await go(page, hash)
      await page.locator(ready).first().waitFor()
      if (await page.locator("details > summary").count() > 0) await page.locator("details > summary").first().click()
      await shot(page, name)
      await check(name)
    }
    await page.emulateMedia({ colorScheme: "dark" })
    for (const [hash, ready, name] of [
      ["#/runs", "a.run-row", "runs-dark"],
      ["#/approvals", "article.approval", "approvals-dark"],
      [`#/runs/${body.runId}`, ".answer-text.output", "composite-run-dark"]
    ] as const) {
      await go(page, hash)
      await page.locator(ready).first().waitFor()
      await shot(page, name)
      await check(name)
    }
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(21, 23, 26)")
    expect(violations).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  }, 120_000)

  it("asks for the token when the page has none; the server refuses calls without it", async () => {
    const page = await browser().newPage()
    await page.goto(`${studio.origin}/#/runs`)
    expect(await page.evaluate(async () => (await fetch("/api/runs")).status)).toBe(401)
    await page.getByLabel("Token").fill(studio.token)
    await page.getByRole("button", { name: "Connect" }).click()
    await page.locator("h1", { hasText: "Runs" }).waitFor()
    // The live feed, refused before the token, follows the lists again.
    await page.locator("#live-state", { hasText: "live" }).waitFor()
    await page.close()
  })

  it("approves a pending call from the inbox: the run resumes, the tool runs, the detail shows who decided", async () => {
    const runId = await suspendedTransfer("pay alice 500")
    const { page, errors } = await open("#/approvals")
    await page.getByLabel("Deciding as").fill("alice")
    const card = page.locator(`article[data-run-id="${runId}"]`)
    await card.locator(".json", { hasText: "500" }).waitFor()
    await card.getByRole("button", { name: "Approve", exact: true }).click()
    await card.waitFor({ state: "detached" })
    await expect.poll(async () => (await detailOf(runId)).summary.status, { timeout: 15_000 }).toBe("completed")
    expect(toolRuns(await detailOf(runId), "transfer")).toHaveLength(1)
    await go(page, `#/runs/${runId}`)
    await page.locator(".decisions li", { hasText: "alice" }).waitFor()
    await page.locator("h1 .badge", { hasText: "completed" }).waitFor()
    await shot(page, "approved-run")
    expect(errors).toEqual([])
    await page.close()
  })

  it("decides with the keyboard alone: a radio chosen with Space, the send button reached with Tab and pressed with Enter", async () => {
    const runId = await suspendedTransfer("pay erin 400")
    const { page, errors } = await open("#/approvals")
    const card = page.locator(`article[data-run-id="${runId}"]`)
    await card.getByLabel("Approve", { exact: true }).focus()
    await page.keyboard.press("Space")
    expect(await card.getByLabel("Approve", { exact: true }).isChecked()).toBe(true)
    await page.keyboard.press("Tab")
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Send decisions")
    await page.keyboard.press("Enter")
    await card.waitFor({ state: "detached" })
    await expect.poll(async () => (await detailOf(runId)).summary.status, { timeout: 15_000 }).toBe("completed")
    expect(errors).toEqual([])
    await page.close()
  })

  it("denies a call with a reason: the run ends and the tool never runs", async () => {
    const runId = await suspendedTransfer("pay mallory 900")
    const { page, errors } = await open("#/approvals")
    const card = page.locator(`article[data-run-id="${runId}"]`)
    await card.getByLabel("Deny").check()
    await card.getByLabel("Reason for denying").fill("not this month")
    await card.getByRole("button", { name: "Send decisions" }).click()
    await card.waitFor({ state: "detached" })
    await expect.poll(async () => (await detailOf(runId)).summary.status, { timeout: 15_000 }).not.toBe("suspended")
    await expect.poll(async () => (await detailOf(runId)).summary.status, { timeout: 15_000 }).not.toBe("running")
    const detail = await detailOf(runId)
    expect(toolRuns(detail, "transfer")).toEqual([])
    expect(detail.decisions).toMatchObject([{ decision: "deny", reason: "not this month" }])
    expect(errors).toEqual([])
    await page.close()
  })

  it("refuses an invalid edit before sending it, then sends the corrected arguments", async () => {
    const runId = await suspendedTransfer("pay carol 700")
    const { page, errors } = await open("#/approvals")
    const posts: Array<string> = []
    page.on("request", (request) => {
      if (request.method() === "POST" && request.url().includes("/api/approvals/")) posts.push(request.url())
    })
    const card = page.locator(`article[data-run-id="${runId}"]`)
    await card.getByLabel("Edit arguments").check()
    const amount = card.getByLabel("amount")
    await amount.fill("seven hundred")
    await card.getByRole("button", { name: "Send decisions" }).click()
    await card.locator(".field-error", { hasText: "is not a number" }).waitFor()
    expect(await amount.getAttribute("aria-invalid")).toBe("true")
    await amount.fill("")
    await card.getByRole("button", { name: "Send decisions" }).click()
    await card.locator(".form-issues", { hasText: "amount: is required" }).waitFor()
    await shot(page, "approval-invalid-edit")
    expect(posts).toEqual([])
    await amount.fill("70")
    await card.getByRole("button", { name: "Send decisions" }).click()
    await card.waitFor({ state: "detached" })
    expect(posts).toHaveLength(1)
    await expect.poll(async () => (await detailOf(runId)).summary.status, { timeout: 15_000 }).toBe("completed")
    expect(toolRuns(await detailOf(runId), "transfer").map(({ event }) => event.args)).toEqual([{ to: "carol", amount: 70 }])
    expect(errors).toEqual([])
    await page.close()
  })

  it("opens a 5,000-event run with a 5 MB tool result without freezing the page (measured)", async () => {
    const runId = "ingested-huge-run"
    const base = { agent: "calculator", runId, skill: "compute" }
    const big = "x".repeat(5 * 1024 * 1024)
    const events: Array<Record<string, unknown>> = [{ _tag: "RunStart", ...base, input: "load everything" }]
    let turn = 0
    while (events.length < 4_999) {
      turn += 1
      const id = `call-${turn}`
      events.push(
        { _tag: "Turn", ...base, turn },
        { _tag: "ModelCall", ...base, turn, request: { messages: [{ role: "user", content: "go" }], tools: [{ type: "function", name: "fetch", parameters: {} }] } },
        { _tag: "TextDelta", ...base, turn, delta: "working " },
        { _tag: "ModelResponse", ...base, turn, durationMs: 10, response: { _tag: "ToolCalls", calls: [{ id, name: "fetch", arguments: "{}" }], usage: { inputTokens: 10, outputTokens: 2 } } },
        { _tag: "ToolUse", ...base, turn, tool: "fetch", toolCallId: id, args: {}, result: turn === 1 ? big : { rows: [1, 2, 3] }, durationMs: 1, validated: true }
      )
    }
    events.length = 4_999
    events.push({ _tag: "RunEnd", ...base, outcome: { _tag: "Success", output: "done" }, turns: turn, toolCalls: turn, durationMs: 5000 })
    const start = Date.now() - 10_000
    const stamped = events.map((event, index) => ({ at: start + index, event }))
    expect((await api("POST", "/api/ingest", { events: stamped.slice(0, 10) })).status).toBe(202)
    expect((await api("POST", "/api/ingest", { events: stamped.slice(10) })).status).toBe(202)
    await expect.poll(async () => (await detailOf(runId)).events.length).toBe(5_000)

    const { page, errors } = await open("#/runs")
    await page.evaluate(() => {
      const global = window as unknown as { longTasks: Array<number> }
      global.longTasks = []
      new PerformanceObserver((list: { getEntries: () => Array<{ duration: number }> }) => {
        for (const entry of list.getEntries()) global.longTasks.push(entry.duration)
      }).observe({ type: "longtask", buffered: true })
    })
    const started = Date.now()
    await go(page, `#/runs/${runId}`)
    await page.locator("#raw-title + span", { hasText: "5,000 events" }).waitFor({ timeout: 30_000 })
    const loadMs = Date.now() - started
    const elements = await page.evaluate(() => document.getElementsByTagName("*").length)
    const clickStarted = Date.now()
    await page.locator("details#turn-1 > summary").click()
    await page.locator("details#turn-1 details.tool-call > summary").click()
    await page.locator("details#turn-1 details.tool-call button.link", { hasText: "show more" }).waitFor()
    const expandMs = Date.now() - clickStarted
    const longest = await page.evaluate(() => Math.max(0, ...(window as unknown as { longTasks: Array<number> }).longTasks))
    await page.locator(".vlist").last().evaluate((element) => {
      element.scrollTop = 60_000
    })
    await page.waitForTimeout(100)
    const rowsInView = await page.locator(".event-row").count()
    await page.screenshot({ path: join(screenshots, "huge-run.png") })
    console.info(`studio UI, 5,000 events + 5 MB result: shown in ${loadMs} ms, ${elements} elements, longest task ${Math.round(longest)} ms, tool call with the 5 MB result opened in ${expandMs} ms, ${rowsInView} event rows in the DOM`)
    expect(elements).toBeLessThan(4_000)
    expect(rowsInView).toBeLessThan(80)
    expect(await page.locator("details#turn-1 details.tool-call .json-string").first().evaluate((element) => element.textContent!.length)).toBeLessThan(3_000)
    expect(longest).toBeLessThan(5_000)
    expect(errors).toEqual([])
    await page.close()
  })
})

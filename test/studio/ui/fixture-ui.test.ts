/**
 * The studio's front end in headless Chromium, against the fixture server (the API contract over
 * canned data and scripted live runs): every page renders without console errors, the token is
 * required, a run streams live into its detail view and the playground, a tool call expands to its
 * arguments, a run is stopped, approvals are approved / denied / edited (an invalid edit is refused
 * before anything is sent), and a 5,000-event run with a 5 MB tool result does not freeze the page.
 * Screenshots go to $STUDIO_SCREENSHOTS (default: <tmp>/studio-ui-screenshots).
 */
import { mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { collectPageErrors, describeBrowser } from "../../support/browser.ts"
import { type FixtureServer, startFixtureServer } from "./fixture-server.ts"

const screenshots = process.env.STUDIO_SCREENSHOTS ?? join(tmpdir(), "studio-ui-screenshots")
mkdirSync(screenshots, { recursive: true })

describeBrowser("studio front end", (browser) => {
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
  const shot = (page: Page, name: string) => page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true })

  it("renders every page without console errors, in light and dark", async () => {
    const { page, errors } = await open("#/runs")
    await page.locator("a.run-row").first().waitFor()
    await shot(page, "runs")
    for (const [hash, ready, name] of [
      ["#/playground", "table.tools-table", "playground"],
      ["#/approvals", "h1:text('Approvals')", "approvals"],
      ["#/sessions/session-alice", ".transcript", "sessions"],
      [`#/runs/${[...server.runs.values()].find((run) => run.summary.agent === "research")!.summary.runId}`, ".child-tree", "composite-run"],
      [`#/runs/${[...server.runs.values()].find((run) => run.summary.status === "failed")!.summary.runId}`, ".error-box", "failed-run"],
      ["#/nowhere", "h1:text('Not found')", "not-found"]
    ] as const) {
      await page.evaluate((target) => {
        location.hash = target
      }, hash)
      await page.locator(ready).first().waitFor()
      await shot(page, name)
    }
    await page.emulateMedia({ colorScheme: "dark" })
    await page.evaluate(() => {
      location.hash = "#/playground"
    })
    await page.locator("table.tools-table").waitFor()
    await shot(page, "playground-dark")
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(21, 23, 26)")
    expect(errors).toEqual([])
    await page.close()
  })

  it("asks for the token when the page has none, and the API refuses calls without it", async () => {
    const page = await browser().newPage()
    const errors = collectPageErrors(page)
    await page.goto(`${server.url}/#/runs`)
    await page.getByLabel("Token").fill(server.token)
    await page.getByRole("button", { name: "Connect" }).click()
    await page.locator("a.run-row").first().waitFor()
    const refused = await page.evaluate(async () => (await fetch("/api/runs")).status)
    expect(refused).toBe(401)
    // Only the refused calls made before the token was given (the browser logs each 401 as a console error).
    expect(errors.every((error) => error.includes("401"))).toBe(true)
    await page.close()
  })

  it("streams a run live into its detail view, then shows it completed", async () => {
    const runId = server.startRun("calculator", "What is (3 + 5) * 2?", 120)
    const { page, errors } = await open(`#/runs/${runId}`)
    await page.locator("h1 .badge", { hasText: "running" }).waitFor()
    // The event count grows while the run runs: seen between the first and the last event.
    const counts = new Set<number>()
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      const text = (await page.locator("#raw-title + span").textContent()) ?? ""
      counts.add(Number(text.replace(/\D/g, "")))
      if (await page.locator("h1 .badge", { hasText: "completed" }).count() > 0) break
      await page.waitForTimeout(50)
    }
    expect([...counts].some((count) => count > 0 && count < 18)).toBe(true)
    await page.locator("h1 .badge", { hasText: "completed" }).waitFor()
    await page.locator(".answer-text.output", { hasText: "The answer is 16." }).waitFor()
    // A tool call expands to its arguments.
    const turn = page.locator("details#turn-1")
    if (!(await turn.evaluate((element) => (element as HTMLDetailsElement).open))) await turn.locator("summary").first().click()
    await turn.locator("details.tool-call summary").click()
    await expect.poll(() => turn.locator("details.tool-call .json").first().textContent()).toContain("\"a\": 3")
    await turn.locator("details.sub summary", { hasText: "Request the model saw" }).click()
    await expect.poll(() => turn.locator(".offered-tools").textContent()).toBe("add")
    await shot(page, "run-detail")
    expect(errors).toEqual([])
    await page.close()
  })

  it("runs an agent from the playground and watches text and tool calls arrive", async () => {
    const { page, errors } = await open("#/playground/calculator")
    await page.getByLabel("Input text").fill("What is 3 + 5?")
    await page.getByRole("button", { name: "Run", exact: true }).click()
    const live = page.locator("section.live-run")
    await live.locator(".tool-call .tool-name", { hasText: "add" }).waitFor()
    await live.locator(".answer-text", { hasText: "The answer is 16." }).first().waitFor()
    await live.locator(".badge", { hasText: "completed" }).waitFor()
    await shot(page, "playground-run")
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

  it("approves a pending call from the inbox: the run resumes, the tool runs, the detail shows who decided", async () => {
    const runId = server.addSuspendedRun()
    const { page, errors } = await open("#/approvals")
    await page.getByLabel("Deciding as").fill("alice")
    const card = page.locator(`article[data-run-id="${runId}"]`)
    await card.getByRole("button", { name: "Approve", exact: true }).click()
    await card.waitFor({ state: "detached" })
    await expect.poll(() => server.executed.filter((call) => call.runId === runId)).toEqual([{ runId, tool: "transfer", args: { to: "ACME-42", amount: 120, currency: "EUR" } }])
    await page.locator(".decision-log li", { hasText: "alice" }).first().waitFor()
    await page.evaluate((id) => {
      location.hash = `#/runs/${id}`
    }, runId)
    await page.locator(".decisions li", { hasText: "alice" }).waitFor()
    await page.locator("h1 .badge", { hasText: "completed" }).waitFor()
    expect(errors).toEqual([])
    await page.close()
  })

  it("denies a call with a reason: the tool never runs", async () => {
    const runId = server.addSuspendedRun()
    const { page, errors } = await open("#/approvals")
    const card = page.locator(`article[data-run-id="${runId}"]`)
    await card.getByLabel("Deny").check()
    await card.getByLabel("Reason for denying").fill("not this month")
    await card.getByRole("button", { name: "Send decisions" }).click()
    await card.waitFor({ state: "detached" })
    await expect.poll(() => server.runs.get(runId)?.summary.status).toBe("completed")
    expect(server.executed.filter((call) => call.runId === runId)).toEqual([])
    expect(server.decisions.find((decision) => decision.runId === runId)?.body).toMatchObject({ decisions: [{ decision: "deny", reason: "not this month" }] })
    expect(errors).toEqual([])
    await page.close()
  })

  it("refuses an invalid edit before sending it, then sends the corrected arguments", async () => {
    const runId = server.addSuspendedRun()
    const { page, errors } = await open("#/approvals")
    const card = page.locator(`article[data-run-id="${runId}"]`)
    await card.getByLabel("Edit arguments").check()
    const amount = card.getByLabel("amount")
    await amount.fill("-5")
    await card.getByLabel("currency").selectOption("USD")
    const sentBefore = server.decisions.length
    await card.getByRole("button", { name: "Send decisions" }).click()
    await card.locator(".field-error", { hasText: "must be > 0" }).waitFor()
    expect(await amount.getAttribute("aria-invalid")).toBe("true")
    await shot(page, "approval-invalid-edit")
    expect(server.decisions.length).toBe(sentBefore)
    await amount.fill("not a number")
    await card.getByRole("button", { name: "Send decisions" }).click()
    await card.locator(".field-error", { hasText: "is not a number" }).waitFor()
    expect(server.decisions.length).toBe(sentBefore)
    await amount.fill("50")
    await card.getByRole("button", { name: "Send decisions" }).click()
    await card.waitFor({ state: "detached" })
    await expect.poll(() => server.executed.filter((call) => call.runId === runId)).toEqual([{ runId, tool: "transfer", args: { to: "ACME-42", amount: 50, currency: "USD" } }])
    expect(errors).toEqual([])
    await page.close()
  })

  it("opens a 5,000-event run with a 5 MB tool result without freezing the page", async () => {
    const runId = "run-huge"
    const base = { agent: "calculator", runId, skill: "compute" }
    const big = "x".repeat(5 * 1024 * 1024)
    const events: Array<Record<string, unknown>> = [{ _tag: "RunStart", ...base, input: "load everything" }]
    let turn = 0
    while (events.length < 4_999) {
      turn += 1
      const id = `call-${turn}`
      events.push(
        { _tag: "Turn", ...base, turn },
        { _tag: "ModelCall", ...base, turn, request: { messages: [{ role: "user", content: "go" }], tools: [{ name: "fetch" }] } },
        { _tag: "TextDelta", ...base, turn, delta: "working " },
        { _tag: "ModelResponse", ...base, turn, durationMs: 10, response: { _tag: "ToolCalls", calls: [{ id, name: "fetch", arguments: "{}" }], usage: { inputTokens: 10, outputTokens: 2 } } },
        { _tag: "ToolUse", ...base, turn, tool: "fetch", toolCallId: id, args: {}, result: turn === 1 ? big : { rows: Array.from({ length: 50 }, (_, index) => index) }, durationMs: 1, validated: true }
      )
    }
    events.length = 4_999
    events.push({ _tag: "RunEnd", ...base, outcome: { _tag: "Success", output: "done" }, turns: turn, toolCalls: turn, durationMs: 5000 })
    server.addRun({ runId, agent: "calculator", status: "completed", source: "trace", startedAt: Date.now() - 5000, durationMs: 5000, turns: turn, tokens: { input: 0, output: 0, total: 0 } }, events)

    const { page, errors } = await open("#/runs")
    await page.evaluate(() => {
      const global = window as unknown as { longTasks: Array<number> }
      global.longTasks = []
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) global.longTasks.push(entry.duration)
      }).observe({ type: "longtask", buffered: true })
    })
    const started = Date.now()
    await page.evaluate((id) => {
      location.hash = `#/runs/${id}`
    }, runId)
    await page.locator("#raw-title + span", { hasText: "5,000 events" }).waitFor({ timeout: 30_000 })
    const loadMs = Date.now() - started
    const elements = await page.evaluate(() => document.getElementsByTagName("*").length)
    // The page answers while the run is shown: a click on the first turn opens it at once.
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
    await shot(page, "huge-run")
    console.info(`studio UI, 5,000 events + 5 MB result: shown in ${loadMs} ms, ${elements} elements, longest task ${Math.round(longest)} ms, tool call with the 5 MB result opened in ${expandMs} ms, ${rowsInView} event rows in the DOM`)
    expect(elements).toBeLessThan(4_000)
    expect(rowsInView).toBeLessThan(80)
    expect(await page.locator("details#turn-1 details.tool-call .json-string").first().evaluate((element) => element.textContent!.length)).toBeLessThan(3_000)
    expect(longest).toBeLessThan(5_000)
    expect(errors).toEqual([])
    await page.close()
  })
})

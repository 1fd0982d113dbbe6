/**
 * The studio's front end in headless Chromium against the real server, at its borders: run content
 * the page did not expect (a run or session id that is not well-formed UTF-16), more runs than the list
 * holds, a run that waits for a second decision after the first, a decision sent twice, and a studio
 * restarted while a page is open (with the same token, then another), a live feed that stays open
 * but goes silent, and a hash with a broken %-escape.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schema } from "effect"
import type { Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, expect, it } from "vitest"
import { agent, inMemorySessionStore, text, tool, toolCalls } from "../../../src/index.ts"
import { scriptedModel } from "../../../src/testing/index.ts"
import { RunStore, type Studio, startStudio } from "../../../src/studio/index.ts"
import { collectPageErrors, describeBrowser } from "../../support/browser.ts"
import { silencingProxy } from "./silencing-proxy.ts"

// Code passed to page.evaluate runs in the browser; the repository's tsc has no DOM library.
declare const location: any, window: any, document: any, MutationObserver: any

/** A payer whose every payment waits for a human: it pays `to` twice (two waits under one run id), then answers. */
const payerAgents = () => {
  const paid: Array<{ to: string; amount: number }> = []
  const pay = tool("pay", {
    description: "Pay someone",
    args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
    needsApproval: true,
    run: ({ to, amount }) => {
      paid.push({ to, amount })
      return `paid ${amount} to ${to}`
    }
  })
  const payer = agent("payer")
    .model(scriptedModel((request) => {
      const answers = request.messages.filter((message) => message.role === "tool").length
      const to = String(request.messages.find((message) => message.role === "user")?.content ?? "bob")
      return answers < 2 ? toolCalls([{ name: "pay", arguments: { to, amount: answers === 0 ? 10 : 20 } }]) : text(`Done paying ${to}`)
    }))
    .tools({ pay })
  return { agents: { payer }, paid }
}

describeBrowser("studio front end at its borders", (browser) => {
  let studio: Studio
  let paid: Array<{ to: string; amount: number }>
  beforeAll(async () => {
    const made = payerAgents()
    paid = made.paid
    // A session store's ids are the application's own: any string, a lone surrogate included.
    studio = await startStudio({ agents: made.agents, port: 0, sessions: { store: inMemorySessionStore(), list: () => ["chat-plain", "chat-\ud800"] } })
  })
  afterAll(async () => {
    await studio?.close()
  })
  const pages: Array<Page> = []
  afterEach(async () => {
    for (const page of pages.splice(0)) await page.close()
  })

  const api = async (target: Studio, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${target.origin}${path}`, {
      method,
      headers: { authorization: `Bearer ${target.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const answer = await response.text()
    return { status: response.status, body: answer === "" ? undefined : JSON.parse(answer) }
  }
  const open = async (url: string): Promise<{ page: Page; errors: ReadonlyArray<string> }> => {
    const page = await browser().newPage()
    pages.push(page)
    await page.setViewportSize({ width: 1280, height: 900 })
    const errors = collectPageErrors(page)
    await page.goto(url)
    return { page, errors }
  }

  it("a run or session id that is not well-formed UTF-16 (a lone surrogate) neither breaks the lists nor hides its run", async () => {
    const at = Date.now()
    const runStart = (runId: string, name: string) => ({ at, event: { _tag: "RunStart", runId, agent: name, input: "hi \ud83d\ude00 \udc00" } })
    expect((await api(studio, "POST", "/api/ingest", { events: [runStart("well-formed-run", "plain-agent"), runStart("lone-\ud800-run", "surrogate-agent")] })).status).toBe(202)
    const { page, errors } = await open(`${studio.url}#/runs`)
    await page.locator("a.run-row", { hasText: "plain-agent" }).waitFor()
    const row = page.locator("a.run-row", { hasText: "surrogate-agent" })
    await row.waitFor()
    await row.click()
    await page.locator("h1", { hasText: "surrogate-agent" }).waitFor()
    expect(await page.locator(".error-box").count()).toBe(0)
    await page.evaluate(() => {
      location.hash = "#/sessions"
    })
    await page.locator("a.session-row", { hasText: "chat-plain" }).waitFor()
    expect(await page.locator("a.session-row").count()).toBe(2)
    expect(errors).toEqual([])
  })

  it("a hash with a broken %-escape shows a not-found page, opened directly or reached from another page", async () => {
    const direct = await open(`${studio.url}#/runs/%E0%A4%A`)
    await direct.page.locator("main h1", { hasText: "Not found" }).waitFor()
    expect(await direct.page.locator("main").innerText()).toContain("broken %-escape")
    expect(direct.errors).toEqual([])
    const { page, errors } = await open(`${studio.url}#/runs`)
    await page.locator("main h1", { hasText: "Runs" }).waitFor()
    await page.evaluate(() => {
      location.hash = "#/runs/%E0%A4%A"
    })
    await page.locator("main h1", { hasText: "Not found" }).waitFor()
    expect(await page.title()).toBe("Not found · effect-agent studio")
    expect(await page.locator("main h1", { hasText: "Runs" }).count()).toBe(0)
    // The studio goes on: the next page opens as usual.
    await page.evaluate(() => {
      location.hash = "#/approvals"
    })
    await page.locator("main h1", { hasText: "Approvals" }).waitFor()
    expect(errors).toEqual([])
  })

  it("a run list longer than the page shows says so, instead of a count that is too small", async () => {
    const crowded = await startStudio({ port: 0, maxRuns: 5_000 })
    try {
      const at = Date.now()
      const events = Array.from({ length: 1_200 }, (_, index) => ({ at: at + index, event: { _tag: "RunStart", runId: `many-${index}`, agent: "many", input: "x" } }))
      expect((await api(crowded, "POST", "/api/ingest", { events })).body).toEqual({ accepted: 1_200 })
      const { page, errors } = await open(`${crowded.url}#/runs`)
      await page.locator("a.run-row", { hasText: "many" }).first().waitFor()
      await expect.poll(() => page.locator(".page-head .muted").first().textContent()).toMatch(/^more than 1,000 runs/)
      // The newest run is first; a filter narrows the list to what it shows in full.
      expect(await page.locator("a.run-row").first().getAttribute("data-run-id")).toBe("many-1199")
      await page.locator("#filter-status").selectOption("completed")
      await expect.poll(() => page.locator(".page-head .muted").first().textContent()).toBe("0 runs")
      expect(errors).toEqual([])
    } finally {
      await crowded.close()
    }
  })

  /** A payer run waiting for its first payment; answers its run id. */
  const waitingPayer = async (to: string) => {
    const runId: string = (await api(studio, "POST", "/api/agents/payer/runs", { input: to })).body.runId
    await expect.poll(async () => (await api(studio, "GET", "/api/approvals")).body.some((item: { runId: string }) => item.runId === runId), { timeout: 15_000 }).toBe(true)
    return runId
  }
  const statusOf = async (runId: string) => (await api(studio, "GET", `/api/runs/${runId}`)).body.summary.status

  it("a run that waits again after a decision shows its new call, not the one just decided", async () => {
    const runId = await waitingPayer("carol")
    const { page, errors } = await open(`${studio.url}#/approvals`)
    const card = page.locator(`article[data-run-id="${runId}"]`)
    await card.locator(".json", { hasText: "10" }).waitFor()
    await card.getByRole("button", { name: "Approve", exact: true }).click()
    // The run resumes, pays 10, and waits for its second payment under the same run id.
    await card.locator(".json", { hasText: "20" }).waitFor({ timeout: 10_000 })
    await card.getByRole("button", { name: "Approve", exact: true }).click()
    await expect.poll(() => statusOf(runId), { timeout: 15_000 }).toBe("completed")
    await card.waitFor({ state: "detached" })
    expect(paid.filter((payment) => payment.to === "carol")).toEqual([{ to: "carol", amount: 10 }, { to: "carol", amount: 20 }])
    expect(errors).toEqual([])
  })

  it("a decision clicked twice (a double click) is sent once, and the page shows no refusal", async () => {
    const runId = await waitingPayer("dave")
    const { page, errors } = await open(`${studio.url}#/approvals`)
    const posts: Array<string> = []
    page.on("request", (request) => {
      if (request.method() === "POST" && request.url().includes("/api/approvals/")) posts.push(request.url())
    })
    const card = page.locator(`article[data-run-id="${runId}"]`)
    await card.locator(".json", { hasText: "10" }).waitFor()
    await card.getByRole("button", { name: "Approve", exact: true }).dblclick()
    await card.locator(".json", { hasText: "20" }).waitFor({ timeout: 10_000 })
    expect(posts).toHaveLength(1)
    expect(await page.locator(".error-box").count()).toBe(0)
    expect(paid.filter((payment) => payment.to === "dave")).toEqual([{ to: "dave", amount: 10 }])
    expect(errors).toEqual([])
  })

  it("a studio restarted while a page is open: the page reconnects and shows what changed meanwhile; under a new token it asks for it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "studio-restart-ui-"))
    const storeFile = join(dir, "runs.jsonl")
    const runStart = (runId: string) => ({ _tag: "RunStart", runId, agent: `agent-${runId}`, input: "x" })
    let restarted: Studio | undefined
    try {
      restarted = await startStudio({ port: 0, storeFile, token: "first-token-0123456789" })
      const { port, url } = restarted
      restarted.store.append("ingest", Date.now(), runStart("before-restart"))
      const { page, errors } = await open(`${url}#/runs`)
      await page.locator("a.run-row", { hasText: "agent-before-restart" }).waitFor()
      await page.locator("#live-state", { hasText: "live" }).waitFor()
      await restarted.close()
      await page.locator("#live-state", { hasText: "reconnecting" }).waitFor()
      // While it is down, a run reaches its file (as another studio or an import would): no change is ever announced for it.
      const offline = new RunStore({ file: storeFile })
      offline.append("ingest", Date.now(), runStart("while-down"))
      offline.flush()
      restarted = await startStudio({ port, storeFile, token: "first-token-0123456789" })
      await page.locator("#live-state", { hasText: "live" }).waitFor({ timeout: 15_000 })
      await page.locator("a.run-row", { hasText: "agent-while-down" }).waitFor({ timeout: 5_000 })

      // Restarted under another token (the CLI makes a new one at each start): the page asks for it.
      await restarted.close()
      await page.locator("#live-state", { hasText: "reconnecting" }).waitFor()
      restarted = await startStudio({ port, storeFile, token: "second-token-0123456789" })
      await page.getByLabel("Token").waitFor({ timeout: 15_000 })
      await page.getByLabel("Token").fill("second-token-0123456789")
      await page.getByRole("button", { name: "Connect" }).click()
      await page.locator("a.run-row", { hasText: "agent-while-down" }).waitFor()
      await page.locator("#live-state", { hasText: "live" }).waitFor()
      expect(errors.filter((error) => !/Failed to load resource|ERR_CONNECTION_REFUSED|401/.test(error))).toEqual([])
    } finally {
      await restarted?.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("a live feed that stays open but goes silent (not even a keep-alive) stops showing live, reconnects and reloads", async () => {
    // Keep-alives every 200 ms: the page counts the feed dropped after 500 ms without a byte.
    const quiet = await startStudio({ port: 0, keepAliveMs: 200 })
    const proxy = await silencingProxy(quiet)
    try {
      const runStart = (runId: string) => ({ _tag: "RunStart", runId, agent: `agent-${runId}`, input: "x" })
      quiet.store.append("ingest", Date.now(), runStart("before-silence"))
      const { page, errors } = await open(`${proxy.origin}/?token=${quiet.token}#/runs`)
      await page.locator("a.run-row", { hasText: "agent-before-silence" }).waitFor()
      await page.locator("#live-state", { hasText: "live" }).waitFor()
      // Every state the header shows from now on is recorded.
      await page.evaluate(() => {
        const element = document.getElementById("live-state")
        window.liveStates = []
        new MutationObserver(() => window.liveStates.push(element.textContent)).observe(element, { subtree: true, childList: true, characterData: true })
      })
      const shown = (): Promise<Array<string>> => page.evaluate(() => window.liveStates)
      // A feed quiet but for its keep-alives, for longer than the page waits for a byte, is still live.
      await new Promise((resolve) => setTimeout(resolve, 750))
      expect(await shown()).toEqual([])
      expect(proxy.silence()).toBeGreaterThan(0)
      // Its change is sent down the silent feed and never arrives: only a reload after the reconnect shows it.
      quiet.store.append("ingest", Date.now(), runStart("while-silent"))
      await expect.poll(shown, { timeout: 3_000 }).toEqual(["reconnecting…", "live"])
      await page.locator("a.run-row", { hasText: "agent-while-silent" }).waitFor({ timeout: 5_000 })
      expect(errors).toEqual([])
    } finally {
      await proxy.close()
      await quiet.close()
    }
  })
})

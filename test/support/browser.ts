/**
 * Headless Chromium for browser tests (the studio, the docs site), driven by playwright-core on the
 * machine's own Chromium (Debian's `chromium` package): playwright's browser download cannot work here.
 *
 * `npm test` must pass on a machine without Chromium, so `describeBrowser` skips there with one line
 * saying why; CI (`.ci/run`) installs the package and sets `REQUIRE_BROWSER=1`, which turns a missing
 * browser into a failure instead of a skip.
 *
 * @example
 * ```ts
 * describeBrowser("studio", (browser) => {
 *   it("renders", async () => {
 *     const page = await browser().newPage()
 *     await page.goto(url)
 *   })
 * })
 * ```
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe } from "vitest"

const candidates = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]

/** The Chromium executable to use, or undefined when none is installed. */
export const chromiumPath: string | undefined = candidates.find((path): path is string => path !== undefined && path !== "" && existsSync(path))

/** Flags the machine needs: its closed network refuses Chromium's background connections. */
const flags = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage"
]

/** Launches headless Chromium with a fresh profile; `close` also removes the profile. */
export const launchBrowser = async (): Promise<{ readonly browser: Browser; readonly close: () => Promise<void> }> => {
  if (chromiumPath === undefined) throw new Error("no Chromium found: install Debian's chromium package or set CHROMIUM_PATH")
  const { chromium } = await import("playwright-core")
  const profile = mkdtempSync(join(tmpdir(), "chromium-profile-"))
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, headless: true, args: flags })
  const browser = context.browser()
  const close = async () => {
    await context.close().catch(() => undefined)
    rmSync(profile, { recursive: true, force: true })
  }
  if (browser !== null) return { browser, close }
  // A persistent context has no Browser object; hand out a thin one over the context.
  const shim = { newPage: () => context.newPage(), contexts: () => [context], close } as unknown as Browser
  return { browser: shim, close }
}

/**
 * Collects a page's console errors and uncaught page errors, for "renders without console errors"
 * assertions.
 */
export const collectPageErrors = (page: Page): ReadonlyArray<string> => {
  const errors: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`)
  })
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`))
  return errors
}

/**
 * `describe` for tests that need a browser: launches one Chromium for the block and closes it after.
 * Skipped (with the reason in its name) when no Chromium is installed, unless `REQUIRE_BROWSER=1`.
 */
export const describeBrowser = (name: string, body: (browser: () => Browser) => void): void => {
  const required = process.env.REQUIRE_BROWSER === "1"
  if (chromiumPath === undefined && !required) {
    describe.skip(`${name} (skipped: no Chromium installed; install Debian's chromium package)`, () => body(() => undefined as never))
    return
  }
  describe(name, () => {
    let launched: { readonly browser: Browser; readonly close: () => Promise<void> } | undefined
    beforeAll(async () => {
      launched = await launchBrowser()
    }, 60_000)
    afterAll(async () => {
      await launched?.close()
    })
    body(() => {
      if (launched === undefined) throw new Error("browser not launched")
      return launched.browser
    })
  })
}

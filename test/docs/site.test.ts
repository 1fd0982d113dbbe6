/**
 * The built documentation site (docs/.vitepress/dist, from `npm run docs:build`), served on 127.0.0.1
 * and read in headless Chromium: every page renders without console errors, every internal link and
 * anchor resolves, local search finds a term from a guide and one from the API reference, and
 * llms.txt lists pages that exist.
 *
 * Building the site takes from half a minute to several on a busy machine (TypeDoc + VitePress over
 * ~650 pages), so this file runs
 * under `npm run test:docs` (which builds first and sets DOCS_SITE=1; CI calls it after `npm test`);
 * in a plain `npm test` it is skipped, saying so.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { extname, join, relative, sep } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { collectPageErrors, describeBrowser } from "../support/browser.ts"

/** The few browser globals the page scripts below use (the project compiles without the DOM lib). */
interface BrowserGlobals {
  readonly document: {
    querySelector(selector: string): { setAttribute(name: string, value: string): void; readonly textContent: string | null } | null
    createElement(tag: "a"): { href: string; click(): void; remove(): void }
    readonly body: { append(node: unknown): void }
  }
  readonly location: { readonly pathname: string }
}

const dist = join(import.meta.dirname, "..", "..", "docs", ".vitepress", "dist")
const enabled = process.env.DOCS_SITE === "1"

const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8"
}

/** The file a site path names, as a static host serves VitePress output (`/a/` → a/index.html). */
const fileFor = (pathname: string): string | undefined => {
  const path = decodeURIComponent(pathname)
  const candidates = path.endsWith("/") ? [join(dist, path, "index.html")] : [join(dist, path), join(dist, `${path}.html`)]
  return candidates.find((file) => file.startsWith(dist) && existsSync(file) && statSync(file).isFile())
}

const htmlFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return htmlFiles(path)
    return name.endsWith(".html") && name !== "404.html" ? [path] : []
  })

/** The site path of a built page. */
const pathOf = (file: string): string => `/${relative(dist, file).split(sep).join("/")}`.replace(/index\.html$/, "")

/** The element ids of a page: the anchors a link may name. */
const idsOf = (html: string): ReadonlySet<string> => new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => decodeHtml(m[1]!)))

const decodeHtml = (text: string): string =>
  text.replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'")

/** The internal links of a page's content (not assets): `href` values that stay on the site. */
const linksOf = (html: string): ReadonlyArray<string> =>
  [...html.matchAll(/<a\s[^>]*href="([^"]+)"/g)]
    .map((m) => decodeHtml(m[1]!))
    .filter((href) => !/^(?:[a-z]+:|\/\/)/i.test(href))

describe.skipIf(!enabled)(`docs site: links and anchors${enabled ? "" : " (skipped: run npm run test:docs, which builds the site)"}`, () => {
  it("was built", () => {
    expect(existsSync(join(dist, "index.html"))).toBe(true)
  })

  it("every internal link of every page names a page that exists, and its anchor an element of that page", () => {
    const files = htmlFiles(dist)
    expect(files.length).toBeGreaterThan(100)
    const ids = new Map(files.map((file) => [file, idsOf(readFileSync(file, "utf8"))]))
    const broken: Array<string> = []
    for (const file of files) {
      for (const href of linksOf(readFileSync(file, "utf8"))) {
        const url = new URL(href, `http://site${pathOf(file)}`)
        const target = fileFor(url.pathname)
        if (target === undefined) {
          broken.push(`${pathOf(file)} → ${href} (no such page)`)
          continue
        }
        const anchor = decodeURIComponent(url.hash.slice(1))
        if (anchor !== "" && extname(target) === ".html" && !ids.get(target)?.has(anchor)) broken.push(`${pathOf(file)} → ${href} (no such anchor)`)
      }
    }
    expect(broken).toEqual([])
  })

  it("llms.txt links every guide's Markdown and llms-full.txt holds them", () => {
    const llms = readFileSync(join(dist, "llms.txt"), "utf8")
    const links = [...llms.matchAll(/\]\((\/[^)]+)\)/g)].map((m) => m[1]!)
    expect(links.filter((link) => link.startsWith("/guide/")).length).toBeGreaterThanOrEqual(20)
    expect(links.filter((link) => fileFor(link) === undefined)).toEqual([])
    const full = readFileSync(join(dist, "llms-full.txt"), "utf8")
    expect(full).toContain("# Getting started")
    expect(full).toContain("# Migration notes")
    expect(full).not.toContain("---cut---")
  })
})

if (enabled) {
  describeBrowser("docs site in Chromium", (browser) => {
    let server: Server
    let origin = ""
    beforeAll(async () => {
      server = createServer((request, response) => {
        const file = fileFor(new URL(request.url ?? "/", "http://site").pathname)
        if (file === undefined) {
          response.writeHead(404, { "content-type": "text/html" }).end(readFileSync(join(dist, "404.html")))
          return
        }
        response.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file))
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    })
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve))
    })

    // Every page is rendered. Full loads (server HTML, then hydration: where mismatches would show) for
    // the home page, every guide and every API index page; the other API pages through the site's own
    // client-side router from one loaded page, which renders each page's component without reloading
    // the app (a full load of ~600 reference pages takes minutes on a busy machine).
    it("renders every page without console errors", async () => {
      const paths = htmlFiles(dist).map(pathOf)
      const full = paths.filter((path) => !path.startsWith("/api/") || path.endsWith("/"))
      const routed = paths.filter((path) => !full.includes(path))
      const failures: Array<string> = []
      const loadAll = async (queue: Array<string>) => {
        const page = await browser().newPage()
        const errors = collectPageErrors(page) as Array<string>
        for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
          errors.length = 0
          const response = await page.goto(`${origin}${path}`, { waitUntil: "load" })
          const heading = await page.locator("main h1, .VPHero .name").first().textContent({ timeout: 10_000 }).catch(() => null)
          if (response?.status() !== 200 || heading === null || heading.trim() === "" || errors.length > 0) {
            failures.push(`${path}: status ${response?.status()}, heading ${JSON.stringify(heading)}, ${errors.join("; ")}`)
          }
        }
        await page.close()
      }
      const routeAll = async (queue: Array<string>) => {
        const page = await browser().newPage()
        const errors = collectPageErrors(page) as Array<string>
        await page.goto(`${origin}/api/`, { waitUntil: "load" })
        for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
          errors.length = 0
          // Follow a link as a reader would: the router intercepts the click and renders the page.
          await page.evaluate((href) => {
            const { document } = globalThis as unknown as BrowserGlobals
            document.querySelector("main h1")?.setAttribute("data-left", "")
            const link = Object.assign(document.createElement("a"), { href })
            document.body.append(link)
            link.click()
            link.remove()
          }, path)
          const heading = await page
            .waitForFunction(
              (href) => {
                const { document, location } = globalThis as unknown as BrowserGlobals
                return location.pathname === href && document.querySelector("main h1:not([data-left])")?.textContent
              },
              path,
              { timeout: 10_000 }
            )
            .then((handle) => handle.jsonValue())
            .catch(() => null)
          if (typeof heading !== "string" || heading.trim() === "" || errors.length > 0) failures.push(`${path}: heading ${JSON.stringify(heading)}, ${errors.join("; ")}`)
        }
        await page.close()
      }
      const loadQueue = [...full]
      const routeQueue = [...routed]
      await Promise.all([loadAll(loadQueue), loadAll(loadQueue), routeAll(routeQueue), routeAll(routeQueue)])
      expect(failures).toEqual([])
      expect(full.length).toBeGreaterThan(20)
      expect(routed.length).toBeGreaterThan(100)
    }, 1_800_000)

    const search = async (term: string): Promise<ReadonlyArray<string>> => {
      const page = await browser().newPage()
      const errors = collectPageErrors(page)
      await page.goto(`${origin}/guide/getting-started.html`, { waitUntil: "load" })
      await page.locator(".VPNavBarSearch button").click()
      const input = page.locator(".VPLocalSearchBox input")
      await input.fill(term)
      await page.locator(".VPLocalSearchBox .result").first().waitFor({ timeout: 15_000 })
      const hrefs = await page.locator(".VPLocalSearchBox .result").evaluateAll((links) => links.map((link) => link.getAttribute("href") ?? ""))
      await page.close()
      expect(errors).toEqual([])
      return hrefs
    }

    it("search finds a term from a guide", async () => {
      const hrefs = await search("cassette")
      expect(hrefs.some((href) => href.startsWith("/guide/testing"))).toBe(true)
    }, 60_000)

    it("search finds a term from the API reference", async () => {
      const hrefs = await search("HostileValueKind")
      expect(hrefs.some((href) => href.startsWith("/api/"))).toBe(true)
    }, 60_000)

    it("a guide page shows its sidebar, its code and no hidden set-up lines", async () => {
      const page = await browser().newPage({ viewport: { width: 1280, height: 900 } })
      await page.goto(`${origin}/guide/approval.html`, { waitUntil: "load" })
      expect(await page.locator(".VPSidebar").getByText("Getting started").count()).toBeGreaterThan(0)
      const code = await page.locator("main div[class*='language-ts'] pre").first().textContent()
      expect(code).toContain('tool("transfer"')
      expect(code).not.toContain("---cut---")
      expect(code).not.toContain("declare const bank")
      if (process.env.DOCS_SCREENSHOT) await page.screenshot({ path: process.env.DOCS_SCREENSHOT, fullPage: false })
      await page.close()
    }, 60_000)
  })
}

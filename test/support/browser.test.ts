import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { expect, it } from "vitest"
import { collectPageErrors, describeBrowser } from "./browser.js"

describeBrowser("headless Chromium support", (browser) => {
  it("renders a loopback page and reports its console errors", async () => {
    const server = createServer((_request, response) => {
      response.setHeader("content-type", "text/html")
      response.end(`<!doctype html><title>t</title><link rel="icon" href="data:,"><h1>hello</h1><script>console.error("boom")</script>`)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const page = await browser().newPage()
    const errors = collectPageErrors(page)
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
    expect(await page.textContent("h1")).toBe("hello")
    expect(errors).toEqual(["console: boom"])
    await page.close()
    server.close()
  })
})

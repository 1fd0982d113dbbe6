/**
 * `sendResponse` (found by review): it reads the next chunk of the body only once the socket took the
 * last one, so a client that stops reading slows the producer down instead of filling the server's
 * memory with the whole answer; the whole body still arrives once it reads again.
 */
import { createServer, get } from "node:http"
import type { AddressInfo } from "node:net"
import { expect, it } from "vitest"
import { sendResponse } from "../../src/node/send-response.ts"

it("follows the socket's backpressure: a paused client holds the body back; all of it arrives after", async () => {
  const chunks = 200
  const size = 64 * 1024
  let pulled = 0
  const server = createServer((_req, res) => {
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++
        controller.enqueue(new Uint8Array(size))
        if (pulled === chunks) controller.close()
      }
    }, { highWaterMark: 0 })
    void sendResponse(new Response(body), res)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  try {
    const { port } = server.address() as AddressInfo
    const { paused, received } = await new Promise<{ readonly paused: number; readonly received: number }>((resolve, reject) => {
      get({ host: "127.0.0.1", port, path: "/" }, (res) => {
        res.pause()
        setTimeout(() => {
          const paused = pulled
          let bytes = 0
          res.on("data", (chunk: Buffer) => void (bytes += chunk.length))
          res.on("end", () => resolve({ paused, received: bytes }))
          res.resume()
        }, 500)
      }).on("error", reject)
    })
    expect(paused).toBeLessThan(chunks)
    expect(received).toBe(chunks * size)
  } finally {
    server.close()
  }
})

it("cancels the body of a response ready only after its client left (the run it streams stops, nothing waits for ever)", async () => {
  let cancelled = false
  let pulls = 0
  let settled = false
  const server = createServer((_req, res) => {
    setTimeout(() => {
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulls++
          controller.enqueue(new Uint8Array(1024))
        },
        cancel() {
          cancelled = true
        }
      }, { highWaterMark: 0 })
      void sendResponse(new Response(body), res).finally(() => (settled = true))
    }, 200)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  try {
    const { port } = server.address() as AddressInfo
    const request = get({ host: "127.0.0.1", port, path: "/" })
    request.on("error", () => {})
    setTimeout(() => request.destroy(), 50)
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(cancelled).toBe(true)
    expect(settled).toBe(true)
    expect(pulls).toBeLessThanOrEqual(1)
  } finally {
    server.closeAllConnections()
    server.close()
  }
})

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

/**
 * The page's Server-Sent Events reader (`src/studio/ui/public/sse.js`): whatever the line endings
 * (`\n`, `\r\n`, `\r`), comments, and however the bytes are torn into chunks by the network (inside a
 * UTF-8 character, between `\r` and `\n`), the messages come out as they were sent, ids carried over.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { readEventStream, type SseMessage } from "./browser-modules.ts"

const noNewline = (options: { minLength?: number } = {}) => fc.string({ unit: "grapheme", ...options }).map((text) => text.replace(/[\r\n]/g, "·"))
const sent = fc.record({
  id: fc.option(noNewline(), { nil: undefined }),
  event: fc.option(fc.constantFrom("end", "update"), { nil: undefined }),
  lines: fc.array(noNewline(), { minLength: 1, maxLength: 3 }),
  comment: fc.boolean()
})

/** Where the network tears the bytes: at random offsets, or every `size` bytes (every `\r\n` split at 1). */
const tearing = fc.oneof(fc.array(fc.nat(), { maxLength: 12 }), fc.integer({ min: 1, max: 3 }))

const read = async (bytes: Uint8Array, tear: ReadonlyArray<number> | number): Promise<Array<SseMessage>> => {
  const cuts = typeof tear === "number" ? Array.from({ length: Math.floor(bytes.length / tear) }, (_, index) => (index + 1) * tear) : tear
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
  const chunks = [0, ...points, bytes.length].flatMap((start, index, all) => (index + 1 < all.length && all[index + 1]! > start ? [bytes.slice(start, all[index + 1])] : []))
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk)
      controller.close()
    }
  })
  const messages: Array<SseMessage> = []
  await readEventStream(body, (message) => messages.push(message), new AbortController().signal)
  return messages
}

describe("readEventStream", () => {
  test.prop([fc.array(sent, { maxLength: 6 }), fc.constantFrom("\n", "\r\n", "\r"), tearing])(
    "reads the messages that were sent, however the stream is torn",
    async (messages, newline, cuts) => {
      const text = messages.map((message) =>
        [
          ...(message.comment ? [": keep-alive"] : []),
          ...(message.id === undefined ? [] : [`id: ${message.id}`]),
          ...(message.event === undefined ? [] : [`event: ${message.event}`]),
          ...message.lines.map((line) => `data: ${line}`)
        ].join(newline) + newline + newline
      ).join("")
      let lastId: string | undefined
      const expected = messages.map((message) => {
        lastId = message.id ?? lastId
        return { id: lastId, event: message.event ?? "message", data: message.lines.join("\n") }
      })
      expect(await read(new TextEncoder().encode(text), cuts)).toEqual(expected)
    }
  )

  it("drops a message the stream ended before finishing", async () => {
    expect(await read(new TextEncoder().encode("data: a\n\ndata: b\n"), [])).toEqual([{ id: undefined, event: "message", data: "a" }])
  })
})

/**
 * A `Response` whose body arrives torn into pieces of the given sizes (cycled), as a network would hand
 * a streamed body over: for the properties of the stream readers (SSE, Gemini).
 *
 * @example
 * ```ts
 * const response = tornResponse('data: {"a":1}\n\n', [3, 1, 7])
 * ```
 */
export const tornResponse = (bodyText: string, sizes: ReadonlyArray<number>, headers: Record<string, string> = { "content-type": "text/event-stream" }): Response => {
  const bytes = Buffer.from(bodyText, "utf8")
  const pieces: Array<Uint8Array> = []
  for (let i = 0, k = 0; i < bytes.length; k++) {
    const size = sizes[k % sizes.length]!
    pieces.push(new Uint8Array(bytes.subarray(i, i + size)))
    i += size
  }
  return new Response(new ReadableStream<Uint8Array>({ start: (c) => { for (const p of pieces) c.enqueue(p); c.close() } }), { headers })
}

// @ts-check
/**
 * Reads a Server-Sent Events stream (the studio's run streams and list feed) from a `fetch` body.
 * Written here because `EventSource` cannot send the token header nor a first `Last-Event-ID`, and
 * the parsing it needs is a few lines of the HTML spec; a property test splits streams anywhere
 * (inside a UTF-8 character, between `\r` and `\n`) and checks the messages come out the same.
 *
 * @example
 * await readEventStream(response.body, (message) => console.log(message.id, message.data), signal)
 */

/**
 * Splits a Server-Sent Events byte stream into messages (`id`, `event`, `data`), per the HTML spec's
 * parsing rules that matter here: `\n`, `\r\n` or `\r` line ends, `data` lines joined by `\n`,
 * comments (`:`) ignored, a message dispatched on an empty line. `onBytes` hears every chunk, keep-alive
 * comments included: a watchdog's proof that the connection still lives.
 * @param {ReadableStream<Uint8Array>} body
 * @param {(message: { id: string | undefined, event: string, data: string }) => void} onMessage
 * @param {AbortSignal} signal
 * @param {() => void} [onBytes]
 */
export const readEventStream = async (body, onMessage, signal, onBytes) => {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  signal.addEventListener("abort", () => void reader.cancel().catch(() => undefined), { once: true })
  let buffer = ""
  /** @type {string[]} */
  let data = []
  /** @type {string | undefined} */
  let id
  let event = "message"
  /** @param {string} line */
  const take = (line) => {
    if (line === "") {
      if (data.length > 0 || event !== "message") onMessage({ id, event, data: data.join("\n") })
      data = []
      event = "message"
      return
    }
    if (line.startsWith(":")) return
    const colon = line.indexOf(":")
    const field = colon === -1 ? line : line.slice(0, colon)
    const raw = colon === -1 ? "" : line.slice(colon + 1)
    const value = raw.startsWith(" ") ? raw.slice(1) : raw
    if (field === "data") data.push(value)
    else if (field === "id") id = value
    else if (field === "event") event = value
  }
  for (;;) {
    const { value, done } = await reader.read()
    if (!done) onBytes?.()
    let text = buffer + (done ? decoder.decode() : decoder.decode(value, { stream: true }))
    // A chunk that ends on "\r" may be half of a "\r\n": keep it until the next chunk (or the end) says.
    const held = !done && text.endsWith("\r") ? "\r" : ""
    if (held !== "") text = text.slice(0, -1)
    const lines = text.split(/\r\n|\r|\n/)
    buffer = (lines.pop() ?? "") + held
    for (const line of lines) take(line)
    // At the end, an unterminated last line and a message without its blank line are dropped (as the spec says).
    if (done) return
  }
}

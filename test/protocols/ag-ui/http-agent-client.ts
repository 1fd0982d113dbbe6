/**
 * Driving an AG-UI endpoint with the protocol's own client, for the tests that do: `useLoopbackServers`
 * serves a handler on 127.0.0.1 (closed after each test), `runChecked` runs `@ag-ui/client`'s
 * `HttpAgent` once and checks every event it receives against `@ag-ui/core`'s schemas.
 *
 * @example
 * ```ts
 * const start = useLoopbackServers()
 * const { types } = await runChecked(new HttpAgent({ url: await start(handler) }))
 * ```
 */
import { type BaseEvent, type HttpAgent, type Message } from "@ag-ui/client"
import { EventSchemas } from "@ag-ui/core/schemas"
import { afterEach } from "vitest"
import { serve } from "./fixture.ts"

/** A function serving a handler on loopback and answering its URL; the server is closed after each test. */
export const useLoopbackServers = () => {
  let close: (() => Promise<void>) | undefined
  afterEach(async () => {
    await close?.()
    close = undefined
  })
  return async (handler: (request: Request) => Promise<Response>): Promise<string> => {
    const server = await serve(handler)
    close = server.close
    return server.url
  }
}

/** Runs `client` once, collecting every event (each checked against the protocol's schema). */
export const runChecked = async (client: HttpAgent, parameters: Parameters<HttpAgent["runAgent"]>[0] = {}) => {
  const events: Array<BaseEvent> = []
  const result = await client.runAgent(parameters, {
    onEvent: ({ event }) => {
      const checked = EventSchemas.safeParse(event)
      if (!checked.success) throw new Error(`not an AG-UI event: ${JSON.stringify(event)}\n${checked.error.message}`)
      events.push(event)
    }
  })
  return { events, types: events.map((e) => e.type), result }
}

/** A user message of the client's conversation. */
export const user = (id: string, content: string): Message => ({ id, role: "user", content })

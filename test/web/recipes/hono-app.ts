import { Hono } from "hono"
import { chatHandler } from "effect-agent-dsl/web"
import { assistant } from "./assistant.ts"

const chat = chatHandler(assistant)

export const app = new Hono()
app.post("/api/chat", (c) => chat(c.req.raw))
// On Node: serve({ fetch: app.fetch, port: 3000 }) from "@hono/node-server"; elsewhere: export default app

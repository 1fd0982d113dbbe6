import express from "express"
import { chatHandler, nodeHandler } from "effect-agent-dsl/web"
import { assistant } from "./assistant.ts"

export const app = express()
app.post("/api/chat", nodeHandler(chatHandler(assistant)))
// app.listen(3000)

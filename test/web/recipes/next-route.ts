// app/api/chat/route.ts
import { chatHandler } from "effect-agent-dsl/web"
import { assistant } from "./assistant.ts"

const chat = chatHandler(assistant)

export async function POST(req: Request) {
  return chat(req)
}

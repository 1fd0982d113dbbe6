/** The agent the recipes import (in an app: your own agent module). */
import { makeAssistant } from "../chat-fixture.ts"

export const { assistant, requests } = makeAssistant()

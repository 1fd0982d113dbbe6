/**
 * The streaming clients of the providers added after Anthropic, pointed at an aimock server (see
 * independent-aimock-streaming.test.ts).
 */
import { gemini, type ModelClient, openaiResponses } from "../../src/index.ts"

export const moreStreamingClients = (
  url: () => string,
  fast: Record<string, unknown>
): ReadonlyArray<readonly [string, () => ModelClient]> => [
  ["openaiResponses", () => openaiResponses("gpt-5-mini", { apiKey: "mock", baseURL: `${url()}/v1`, ...fast })],
  ["gemini", () => gemini("gemini-2.5-flash", { apiKey: "mock", baseURL: url(), ...fast })]
]

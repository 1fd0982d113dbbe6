/**
 * The streaming clients of the providers added after Anthropic, pointed at an aimock server (see
 * independent-aimock-streaming.test.ts).
 */
import type { ModelClient } from "../../src/index.ts"

export const moreStreamingClients = (
  _url: () => string,
  _fast: Record<string, unknown>
): ReadonlyArray<readonly [string, () => ModelClient]> => []

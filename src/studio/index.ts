/**
 * `effect-agent-dsl/studio`: a local web UI to watch, debug and steer runs. `npx effect-agent-studio
 * agents.ts` serves it; `startStudio(...)` does the same from code; `studioHooks(...)` connects an
 * application's runs to a running studio. See the Studio section of the observability guide
 * (docs/guide/observability.md).
 *
 * @module effect-agent-dsl/studio
 */
export { startStudio, type Studio, type StudioOptions } from "./server/studio-server.ts"
export { studioHooks, type StudioHooks, type StudioHooksOptions } from "./collect/studio-hooks.ts"
export { type StudioSessions, trackedSessionStore, type TrackedSessionStore } from "./collect/sessions.ts"
export type { DurableSource } from "./collect/durable-source.ts"
export { eventOfTraceLine, importTrace, type TraceImport } from "./collect/trace-file.ts"
export { defaultStoreLimits, RunStore, type RunStoreOptions } from "./store/run-store.ts"
export { toEventJson } from "./store/event-json.ts"
export type * from "./server/api.ts"

/**
 * The guides, in the order people learn them. The sidebar and llms.txt (scripts/docs-llms.mjs) read
 * this one list (plain JavaScript, so Node scripts import it without a TypeScript loader).
 */
/** @type {ReadonlyArray<{ readonly text: string; readonly items: ReadonlyArray<{ readonly text: string; readonly link: string }> }>} */
export const guides = [
  {
    text: "Start",
    items: [
      { text: "Getting started", link: "/guide/getting-started" },
      { text: "Tools and Schemas", link: "/guide/tools" },
      { text: "Skills and allowlists", link: "/guide/skills" },
      { text: "Budgets", link: "/guide/budgets" },
      { text: "Recovery and repair", link: "/guide/recovery" },
      { text: "Typed output", link: "/guide/typed-output" }
    ]
  },
  {
    text: "Serve",
    items: [
      { text: "Streaming and serving", link: "/guide/streaming" },
      { text: "Human approval and resume", link: "/guide/approval" },
      { text: "Sessions", link: "/guide/sessions" }
    ]
  },
  {
    text: "Build larger",
    items: [
      { text: "Composition", link: "/guide/composition" },
      { text: "MCP", link: "/guide/mcp" },
      { text: "A2A", link: "/guide/a2a" },
      { text: "Durable runs and runners", link: "/guide/durable" },
      { text: "Providers", link: "/guide/providers" }
    ]
  },
  {
    text: "Operate",
    items: [
      { text: "Testing your agents", link: "/guide/testing" },
      { text: "Observability", link: "/guide/observability" },
      { text: "Effect services", link: "/guide/effect" },
      { text: "Errors reference", link: "/guide/errors" }
    ]
  },
  {
    text: "Coming from elsewhere",
    items: [
      { text: "Migration notes", link: "/guide/migration" },
      { text: "FAQ", link: "/guide/faq" }
    ]
  }
]

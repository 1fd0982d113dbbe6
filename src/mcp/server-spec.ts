/**
 * Where an MCP server is: a command started as a child process and spoken to over stdio, or a
 * streamable HTTP endpoint. A spec is plain frozen data; nothing starts until the tools are loaded in a
 * scope. Its `name` namespaces the server's tools (`everything_echo`), so two servers never collide.
 */

/** How to reach a server. */
export type McpTransportSpec =
  | {
    readonly _tag: "Stdio"
    readonly command: string
    readonly args: ReadonlyArray<string>
    readonly env: Readonly<Record<string, string>> | undefined
    readonly cwd: string | undefined
    /** What happens to the child's stderr: ignored by default, so a chatty server does not flood logs. */
    readonly stderr: "inherit" | "ignore"
  }
  | { readonly _tag: "Http"; readonly url: URL; readonly headers: Readonly<Record<string, string>> | undefined }

/** A named MCP server. `Name` prefixes its tools' names. */
export interface McpServerSpec<Name extends string = string> {
  readonly _tag: "McpServerSpec"
  readonly name: Name
  readonly transport: McpTransportSpec
  /** Roots offered to the server (declares the client's `roots` capability when given). */
  readonly roots: ReadonlyArray<{ readonly uri: string; readonly name?: string }> | undefined
}

const serverNamePattern = /^[A-Za-z0-9_-]{1,40}$/

const checkName = (name: string): void => {
  if (!serverNamePattern.test(name)) throw new Error(`an MCP server name must be 1-40 letters, digits, '_' or '-', got ${JSON.stringify(name)}`)
}

/**
 * A server started as a child process, over stdio. The process is stopped when the scope that loaded
 * its tools closes.
 *
 * @example
 * ```ts
 * const everything = mcpStdio("everything", { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] })
 * ```
 */
export const mcpStdio = <const Name extends string>(
  name: Name,
  options: {
    readonly command: string
    readonly args?: ReadonlyArray<string>
    readonly env?: Readonly<Record<string, string>>
    readonly cwd?: string
    readonly stderr?: "inherit" | "ignore"
    readonly roots?: ReadonlyArray<{ readonly uri: string; readonly name?: string }>
  }
): McpServerSpec<Name> => {
  checkName(name)
  return Object.freeze({
    _tag: "McpServerSpec",
    name,
    transport: Object.freeze({
      _tag: "Stdio",
      command: options.command,
      args: Object.freeze([...(options.args ?? [])]),
      env: options.env,
      cwd: options.cwd,
      stderr: options.stderr ?? "ignore"
    }),
    roots: options.roots
  })
}

/**
 * A server reached over streamable HTTP.
 *
 * @example
 * ```ts
 * const remote = mcpHttp("search", "http://127.0.0.1:3001/mcp", { headers: { authorization: `Bearer ${token}` } })
 * ```
 */
export const mcpHttp = <const Name extends string>(
  name: Name,
  url: string | URL,
  options?: {
    readonly headers?: Readonly<Record<string, string>>
    readonly roots?: ReadonlyArray<{ readonly uri: string; readonly name?: string }>
  }
): McpServerSpec<Name> => {
  checkName(name)
  return Object.freeze({
    _tag: "McpServerSpec",
    name,
    transport: Object.freeze({ _tag: "Http", url: new URL(url), headers: options?.headers }),
    roots: options?.roots
  })
}

/**
 * Internal: brings a `jsonb` column of an earlier version's table to `text` (JSON kept as text: `jsonb`
 * refuses the `\u0000` escape and reorders keys), for the SQL stores that migrated.
 */
import type * as SqlClient from "effect/sql/SqlClient"

/**
 * Makes `table.column` a `text` column when it is still `jsonb` (stores made by earlier versions): a
 * NUL in a tool's outcome or a snapshot is stored exactly then. A no-op afterwards.
 *
 * @example
 * ```ts
 * yield* jsonbColumnToText(sql, "agent_session_messages", "message")
 * ```
 */
export const jsonbColumnToText = (sql: SqlClient.SqlClient, table: string, column: string) =>
  sql.unsafe(`do $$ begin
    if exists (select 1 from information_schema.columns where table_schema = current_schema() and table_name = '${table}' and column_name = '${column}' and data_type = 'jsonb') then
      alter table ${table} alter column ${column} type text using ${column}::text;
    end if;
  end $$`)

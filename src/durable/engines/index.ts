/** Engines for durable runs (embedded, PostgreSQL runners): filled by the engines work. */
export {}

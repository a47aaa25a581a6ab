import { Cause, HashMap, Layer, Logger, type LogLevel } from "effect"

/**
 * Structured logs: one JSON object per line on stdout, with the level, the time, the message and
 * the log annotations as top-level fields. Callers never log secrets; this logger does not try to
 * scrub them, it only avoids printing causes it was not asked to print.
 */
const jsonLineLogger = Logger.make<unknown, void>(({ annotations, cause, date, logLevel, message }) => {
  const line: Record<string, unknown> = {
    level: logLevel.label.toLowerCase(),
    time: date.toISOString(),
    msg: formatMessage(message)
  }
  for (const [key, value] of HashMap.toEntries(annotations)) line[key] = value
  if (!Cause.isEmpty(cause)) line.error = Cause.pretty(cause, { renderErrorCause: false })
  process.stdout.write(JSON.stringify(line) + "\n")
})

const formatMessage = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.map((part) => (typeof part === "string" ? part : JSON.stringify(part))).join(" ")
}

/** Replaces the default logger with JSON lines at the given minimum level. */
export const layer = (level: LogLevel.LogLevel): Layer.Layer<never> =>
  Layer.merge(Logger.replace(Logger.defaultLogger, jsonLineLogger), Logger.minimumLogLevel(level))

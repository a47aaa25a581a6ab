import { Cause, HashMap, Layer, Logger, type LogLevel } from "effect"

/**
 * Structured logs: one JSON object per line, with the level, the time, the message and the log
 * annotations as top-level fields. Callers never log secrets; causes are rendered without their
 * nested `cause` chains (where a driver error could carry statement parameters).
 */
export const jsonLineLogger = (write: (line: string) => void) =>
  Logger.make<unknown, void>(({ annotations, cause, date, logLevel, message }) => {
    const line: Record<string, unknown> = {
      level: logLevel.label.toLowerCase(),
      time: date.toISOString(),
      msg: formatMessage(message)
    }
    for (const [key, value] of HashMap.toEntries(annotations)) line[key] = value
    if (!Cause.isEmpty(cause)) line.error = Cause.pretty(cause, { renderErrorCause: false })
    write(JSON.stringify(line))
  })

const formatMessage = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.map((part) => (typeof part === "string" ? part : JSON.stringify(part))).join(" ")
}

const stdoutLogger = jsonLineLogger((line) => process.stdout.write(line + "\n"))

/** Replaces the default logger with JSON lines on stdout at the given minimum level. */
export const layer = (level: LogLevel.LogLevel): Layer.Layer<never> =>
  Layer.merge(Logger.replace(Logger.defaultLogger, stdoutLogger), Logger.minimumLogLevel(level))

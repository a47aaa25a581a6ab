import { readdirSync, readFileSync } from "node:fs"

/** What Linux says of a process in `/proc/<pid>/stat`. */
export interface ProcessStat {
  readonly pid: number
  /** Field 3: `R` running, `S` sleeping, `T` stopped, `Z` zombie, … */
  readonly state: string
  /** Field 5: the process group. */
  readonly pgrp: number
  /** Field 22: when the process started, in clock ticks since boot; with the pid, it names one process. */
  readonly startTime: string
}

export const readStat = (pid: number): ProcessStat | undefined => {
  let content: string
  try {
    content = readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    return undefined
  }
  // The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
  const fields = content.slice(content.lastIndexOf(")") + 2).trim().split(" ")
  return { pid, state: fields[0], pgrp: Number(fields[2]), startTime: fields[19] }
}

export const listPids = (): ReadonlyArray<number> =>
  readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number)

/** The processes of a group, zombies left out (they are dead, waiting to be reaped). */
export const groupMembers = (pgid: number): ReadonlyArray<ProcessStat> =>
  listPids().flatMap((pid) => {
    const stat = readStat(pid)
    return stat && stat.pgrp === pgid && stat.state !== "Z" ? [stat] : []
  })

/** The environment a process was started with; undefined when it is gone or not ours to read. */
export const readEnviron = (pid: number): ReadonlyMap<string, string> | undefined => {
  let content: string
  try {
    content = readFileSync(`/proc/${pid}/environ`, "utf8")
  } catch {
    return undefined
  }
  const environ = new Map<string, string>()
  for (const entry of content.split("\u0000")) {
    const at = entry.indexOf("=")
    if (at > 0) environ.set(entry.slice(0, at), entry.slice(at + 1))
  }
  return environ
}

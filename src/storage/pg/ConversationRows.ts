import { ConversationRecord } from "../../domain/Conversation.js"
import { fromRow, toDate } from "./Rows.js"

export const toConversation = fromRow(ConversationRecord)

/** A conversation as the columns of its row: JSON columns as JSON text. */
export const conversationRow = (record: ConversationRecord): Record<string, unknown> => ({
  ...record,
  tags: JSON.stringify(record.tags),
  error: record.error === null ? null : JSON.stringify(record.error),
  created_at: toDate(record.created_at),
  updated_at: toDate(record.updated_at)
})

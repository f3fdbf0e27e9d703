// The relay's answers to a join, a leave and a member's invite request, by word: the table
// buzz-relay answers from (buzz_signer/relay/answers.json), bundled here. The page knows an
// answer by its word and says it in its own sentence; a message the relay rewords is reworded
// in this table too, so no sentence is matched back from prose.
import ANSWERS from '../../buzz_signer/relay/answers.json'

// A message as a pattern: the whole message, each {placeholder} any text.
const escape = (text) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&')
const PATTERNS = Object.entries(ANSWERS).map(([word, message]) => [
  word,
  new RegExp(`^${escape(message).replace(/\{[a-z_]+\}/g, '.+')}$`),
])

// The word of a relay's message, or null for one the table does not hold.
export function answerWord(message) {
  return PATTERNS.find(([, pattern]) => pattern.test(message))?.[0] ?? null
}

/**
 * One worked exchange in the edit format, as data: a request, the files it is about, a model's
 * answer (a short analysis, two blocks in one file, a block creating a file) and the files after
 * the answer is applied. The fixer's system prompt shows it (`workedExampleText`), docs/edit-format.md
 * shows the same text, and test/edits/worked-example.test.ts parses the answer with the real
 * parser and applies it to these files, so the example cannot drift from what the parser accepts.
 *
 * Its files are message catalogues, not code: an example in one programming language leaks into
 * answers for repositories written in another.
 */
export interface WorkedExample {
  request: string;
  /** The files as the model is shown them, before the answer. */
  before: Record<string, string>;
  /** The model's whole answer. */
  answer: string;
  /** Every file after the answer is applied (the new one included). */
  after: Record<string, string>;
}

const EN_BEFORE = `# English messages
title = Welcome
greeting = Helo, {name}!
help = Type a command, or "quit" to leave.

# Errors
error.unknown = Unknown command: {command}
error.empty = Please type something.
`;

const EN_AFTER = `# English messages
title = Welcome
greeting = Hello, {name}!
help = Type a command, or "quit" to leave.
farewell = Goodbye, {name}!

# Errors
error.unknown = Unknown command: {command}
error.empty = Please type something.
`;

const DE = `# German messages
title = Willkommen
greeting = Hallo, {name}!
help = Gib einen Befehl ein, oder "quit" zum Beenden.
farewell = Auf Wiedersehen, {name}!

# Errors
error.unknown = Unbekannter Befehl: {command}
error.empty = Bitte gib etwas ein.
`;

const FENCE = '```';

const ANSWER = `The misspelt greeting is the \`greeting\` line of messages/en.txt. The farewell has no key yet: it \
goes after \`help\`. There is no German catalogue, so messages/de.txt is new, with every key of the English one.

messages/en.txt
${FENCE}
<<<<<<< SEARCH
title = Welcome
greeting = Helo, {name}!
=======
title = Welcome
greeting = Hello, {name}!
>>>>>>> REPLACE
${FENCE}

messages/en.txt
${FENCE}
<<<<<<< SEARCH
help = Type a command, or "quit" to leave.

# Errors
=======
help = Type a command, or "quit" to leave.
farewell = Goodbye, {name}!

# Errors
>>>>>>> REPLACE
${FENCE}

messages/de.txt
${FENCE}
<<<<<<< SEARCH
=======
${DE.trimEnd()}
>>>>>>> REPLACE
${FENCE}
`;

export const WORKED_EXAMPLE: WorkedExample = {
  request:
    'The greeting says "Helo" and there is no farewell message. Fix the greeting, add a farewell, and add a German catalogue.',
  before: { 'messages/en.txt': EN_BEFORE },
  answer: ANSWER,
  after: { 'messages/en.txt': EN_AFTER, 'messages/de.txt': DE },
};

/** The exchange as the fixer's system prompt and docs/edit-format.md show it. */
export function workedExampleText(example: WorkedExample = WORKED_EXAMPLE): string {
  const files = Object.entries(example.before).map(([path, text]) => `## ${path}\n${FENCE}\n${text}${FENCE}`);
  return ['Request:', example.request, '', 'Files:', '', ...files, '', 'Answer:', '', example.answer.trimEnd()].join(
    '\n',
  );
}

// The fixer's edit format: parse the model's answer, apply it to a checkout (docs/edit-format.md).
export { applyEdits } from './apply.js';
export { EDIT_FORMAT_INSTRUCTIONS } from './instructions.js';
export { parseEdits } from './parse.js';
export { WORKED_EXAMPLE, type WorkedExample, workedExampleText } from './worked-example.js';
export type { ApplyReport, Edit, MatchKind, ParseResult } from './types.js';

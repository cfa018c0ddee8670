/**
 * The edit format as the fixer's system prompt states it to the model. Kept short: the model needs
 * the rules it must follow, not the parser's tolerances (docs/edit-format.md has those). The
 * examples use no language the repository may not be written in: a prompt's example leaks into answers.
 */
export const EDIT_FORMAT_INSTRUCTIONS =
  `To change files, answer with search/replace blocks. Each block is:

path/to/file.ext
\`\`\`
<<<<<<< SEARCH
lines copied exactly from the current file
=======
the lines that replace them
>>>>>>> REPLACE
\`\`\`

Rules:
- Put the file's path, relative to the repository root, alone on the line just before the block's fence. ` +
  `Nothing else on that line.
- SEARCH must be copied character for character from the file, whole lines, indentation included. Include ` +
  `enough lines (usually 2-3 around the change) that it matches exactly one place in the file; keep it short ` +
  `otherwise.
- Use one block per change. Several blocks may follow each other, for the same or different files; blocks for ` +
  `one file apply in order, each to the result of the previous one.
- To create a file, use a block with an empty SEARCH part (nothing between <<<<<<< SEARCH and =======) and the ` +
  `whole content as the replacement.
- To delete a file, write a line of its own: DELETE path/to/file.ext
- To move a file: RENAME old/path.ext new/path.ext (its blocks then name the new path).
- A file keeps whether it ends with a newline; change that with NO FINAL NEWLINE path/to/file.ext or ` +
  `FINAL NEWLINE path/to/file.ext, and its executable bit with CHMOD +x path/to/file.ext or CHMOD -x.
- Do not number lines, do not use "..." to skip lines inside SEARCH, do not put diffs (+/-) in blocks.
- Anything outside blocks is read as commentary: keep it short.`;

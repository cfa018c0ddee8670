import { applyEdits } from '../../../edits/index.js';
import { checkEditPath } from '../../../edits/paths.js';
import { ConfinedDir, describePath } from '../../../checkout/confined-fs.js';

/**
 * The agent's file editor, on emend's edit engine and the confined reader: view with line
 * numbers, replace an exact passage, insert after a line, create a file. Paths are relative to
 * the checkout; a link out of it, `..` and absolute paths are refused as everywhere else. The
 * plan's `maxFiles` bounds how many files the change may touch.
 */

/** The editor tool's arguments as the model sends them (src/steps/fix/agent/tools.ts); which are needed depends on the command. */
export interface EditorInput {
  command: 'view' | 'replace' | 'insert' | 'create';
  path: string;
  start_line?: number;
  end_line?: number;
  old_text?: string;
  new_text?: string;
  after_line?: number;
  text?: string;
}

/** The fields each command needs, named in the refusal when one is missing. */
const NEEDS: Record<EditorInput['command'], (keyof EditorInput)[]> = {
  view: [],
  replace: ['old_text', 'new_text'],
  insert: ['after_line', 'text'],
  create: ['text'],
};

/** Lines a view shows at most when no range is asked for. */
const VIEW_LINES = 400;

export class Editor {
  private readonly fs: ConfinedDir;
  /** Files the change has touched so far (created or modified through the editor). */
  readonly touched = new Set<string>();
  /** Changes that applied. */
  edits = 0;
  /** Files the editor created (they stay in the change whatever they hold). */
  readonly created = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly maxFiles: number,
  ) {
    this.fs = new ConfinedDir(root);
  }

  /** May `path` be changed without passing the plan's number of files? */
  private within(path: string): string | undefined {
    if (this.touched.has(path) || this.touched.size < this.maxFiles) return undefined;
    return `the change may touch at most ${this.maxFiles} files on this plan (it has: ${[...this.touched].join(', ')})`;
  }

  async run(c: EditorInput): Promise<{ ok: boolean; observation: string }> {
    const missing = NEEDS[c.command].filter((f) => c[f] === undefined);
    if (missing.length) return { ok: false, observation: `${c.command} needs ${missing.join(' and ')}` };
    // The checkout's root may be viewed; every other path is checked as an edit's is (no `..`, no .git).
    if (c.command === 'view' && ['', '.', './'].includes(c.path.trim())) return this.view('', c.start_line, c.end_line);
    const checked = checkEditPath(c.path);
    if (!checked.ok) return { ok: false, observation: `${c.path}: ${checked.reason}` };
    const path = checked.rel;
    if (c.command === 'view') return this.view(path, c.start_line, c.end_line);
    const refused = this.within(path);
    if (refused) return { ok: false, observation: refused };
    if (c.command === 'insert') return this.insert(path, c.after_line!, c.text!);
    const edit =
      c.command === 'create'
        ? { kind: 'create' as const, path, content: c.text! }
        : { kind: 'replace' as const, path, search: c.old_text!, replace: c.new_text! };
    if (c.command === 'create') {
      const info = this.fs.info(path);
      if (info.kind === 'file')
        return { ok: false, observation: `${path} exists already: view it and replace a passage instead` };
      // Anything else that is not missing is refused for what it is (a link out names the link), not as existing.
      if (info.kind === 'invalid') return { ok: false, observation: describePath(path, info) };
      if (info.kind !== 'missing') return { ok: false, observation: `${path}: ${describePath(path, info)}` };
    }
    const report = await applyEdits(this.root, [edit]);
    const failed = report.failed[0];
    if (failed) return { ok: false, observation: `${failed.path}: ${failed.reason}` };
    this.touched.add(path);
    this.edits += 1;
    if (c.command === 'create') this.created.add(path);
    const how = report.applied[0]?.match;
    return { ok: true, observation: `${path}: ${c.command === 'create' ? 'created' : `replaced (${how} match)`}` };
  }

  private view(path: string, start?: number, end?: number): { ok: boolean; observation: string } {
    const info = this.fs.info(path);
    if (info.kind === 'dir') {
      const names = this.fs.list(path).map((e) => (e.type === 'dir' ? `${e.name}/` : e.name));
      return { ok: true, observation: names.sort().join('\n') || '(empty directory)' };
    }
    const text = info.kind === 'file' ? this.fs.readText(path) : undefined;
    if (text === undefined) return { ok: false, observation: `${path}: ${describePath(path, info)}` };
    const lines = text.split('\n');
    const from = Math.max(1, start ?? 1);
    const to = Math.min(lines.length, end ?? from + VIEW_LINES - 1);
    const shown = lines.slice(from - 1, to).map((l, i) => `${String(from + i).padStart(6)}  ${l}`);
    const more = to < lines.length ? `\n… (${lines.length - to} more lines; view a range to see them)` : '';
    return { ok: true, observation: `${shown.join('\n')}${more}` };
  }

  private insert(path: string, after: number, text: string): { ok: boolean; observation: string } {
    const current = this.fs.readText(path);
    if (current === undefined) return { ok: false, observation: `${path}: no such text file (create it instead)` };
    const lines = current.split('\n');
    if (!Number.isInteger(after) || after < 0 || after > lines.length)
      return { ok: false, observation: `${path}: after_line must be 0 to ${lines.length}` };
    lines.splice(after, 0, ...text.replace(/\n$/, '').split('\n'));
    this.fs.write(path, lines.join('\n'));
    this.touched.add(path);
    this.edits += 1;
    return { ok: true, observation: `${path}: inserted after line ${after}` };
  }
}

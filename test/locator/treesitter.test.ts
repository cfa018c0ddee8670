import { describe, expect, it } from 'vitest';
import { regexDefinitions } from '../../src/locator/symbols.js';
import { type Definition, grammarOf, parseDefinitions, tooBigToParse } from '../../src/locator/treesitter.js';

const brief = (defs: Definition[] | null) =>
  (defs ?? []).map((d) => `${d.kind} ${d.container ? `${d.container}.` : ''}${d.name} ${d.startLine}-${d.endLine}`);

describe('tree-sitter definitions', () => {
  it('maps extensions to grammars', () => {
    expect(['a.py', 'b.ts', 'c.tsx', 'd.mjs', 'e.go', 'f.rs', 'G.java', 'h.kt', 'README'].map(grammarOf)).toEqual([
      'python',
      'typescript',
      'tsx',
      'javascript',
      'go',
      'rust',
      'java',
      null,
      null,
    ]);
  });

  it('Python: classes, methods (decorators included), functions, module variables', async () => {
    const src =
      'import os\n\n@dataclass\nclass Foo(Base):\n    x: int = 1\n\n    async def bar(self):\n        ' +
      'pass\n\ndef top(a,\n        b):\n    return a\nLIMIT = 3\n';
    expect(brief(await parseDefinitions('m.py', src))).toEqual([
      'class Foo 3-8',
      'method Foo.bar 7-8',
      'function top 10-12',
      'variable LIMIT 13-13',
    ]);
  });

  it('JavaScript: functions, classes, methods, arrow functions, assigned functions', async () => {
    const src =
      'function foo() {}\nclass Bar {\n  baz() {\n    return 1;\n  }\n}\nconst handler = (req) => {\n  return ' +
      'req;\n};\nmodule.exports.run = function () {};\n';
    expect(brief(await parseDefinitions('a.js', src))).toEqual([
      'function foo 1-1',
      'class Bar 2-6',
      'method Bar.baz 3-5',
      'function handler 7-9',
      'function run 10-10',
    ]);
  });

  it('TypeScript and TSX: interfaces, types, enums, classes and their methods', async () => {
    const src =
      'export interface Opts { top?: number }\nexport type Id = string;\nexport enum Color { Red }\nexport ' +
      'abstract class Store {\n  abstract get(id: Id): void;\n  put(id: Id): void {\n  }\n}\nexport const load ' +
      '= async (id: Id) => id;\n';
    expect(brief(await parseDefinitions('a.ts', src))).toEqual([
      'interface Opts 1-1',
      'type Id 2-2',
      'enum Color 3-3',
      'class Store 4-8',
      'method Store.get 5-5',
      'method Store.put 6-7',
      'function load 9-9',
    ]);
    expect(
      brief(
        await parseDefinitions('App.tsx', 'export function App(): JSX.Element {\n  return <div className="x" />;\n}\n'),
      ),
    ).toEqual(['function App 1-3']);
  });

  it('Go: functions, methods with their receiver type, structs, interfaces', async () => {
    const src =
      'package srv\n\ntype Server struct{ addr string }\n\ntype Handler interface{ Serve() }\n\nfunc (s ' +
      '*Server) Serve() error {\n\treturn nil\n}\n\nfunc New() *Server { return nil }\n';
    expect(brief(await parseDefinitions('srv.go', src))).toEqual([
      'struct Server 3-3',
      'interface Handler 5-5',
      'method Server.Serve 7-9',
      'function New 11-11',
    ]);
  });

  it('Rust: structs, traits, impl blocks and their methods, macros', async () => {
    const src =
      'pub struct Cache;\n\npub trait Get { fn get(&self); }\n\nimpl<T> Get for Cache<T> {\n    fn get(&self) ' +
      '{}\n}\n\nmacro_rules! hit { () => {} }\n';
    expect(brief(await parseDefinitions('lib.rs', src))).toEqual([
      'struct Cache 1-1',
      'trait Get 3-3',
      'method Get.get 3-3',
      'impl Cache 5-7',
      'method Cache.get 6-6',
      'macro hit 9-9',
    ]);
  });

  it('Java: classes, constructors, methods, records', async () => {
    const src =
      'public class Api {\n    public Api() {}\n    public static int count(String s) {\n        return ' +
      '0;\n    }\n}\nrecord Point(int x) {}\n';
    expect(brief(await parseDefinitions('Api.java', src))).toEqual([
      'class Api 1-6',
      'constructor Api.Api 2-2',
      'method Api.count 3-5',
      'class Point 7-7',
    ]);
  });

  it('leaves huge, minified and binary-looking sources to the fallback', async () => {
    expect(tooBigToParse(`var a=1;${'x'.repeat(2_000)}\n`)).toBe(true);
    expect(tooBigToParse('def f():\n    pass\n'.repeat(10))).toBe(false);
    expect(tooBigToParse('a\0b\n')).toBe(true);
    expect(await parseDefinitions('big.js', `function f(){}\n${'x'.repeat(1_100_000)}`)).toBeNull();
    expect(await parseDefinitions('notes.txt', 'def f(): pass\n')).toBeNull();
  });

  it('falls back to regular expressions and indentation for other languages', () => {
    const kt = 'package x\n\nclass Foo {\n    fun bar(x: Int): Int {\n        return x\n    }\n}\n';
    expect(brief(regexDefinitions('Foo.kt', kt))).toEqual(['class Foo 3-7', 'method Foo.bar 4-6']);
    const ex = 'defmodule Shop.Cart do\n  def total(cart) do\n    0\n  end\nend\n';
    expect(brief(regexDefinitions('cart.ex', ex))).toEqual(['module Cart 1-5', 'method Cart.total 2-4']);
    expect(regexDefinitions('README.md', '# class Foo\n')).toEqual([]);
  });
});

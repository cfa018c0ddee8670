import { describe, expect, it } from 'vitest';
import { OutputTail } from '../../src/sandbox/output-tail.js';

describe('OutputTail', () => {
  it('keeps everything under the limit', () => {
    const tail = new OutputTail(10);
    tail.push(Buffer.from('hello '));
    tail.push(Buffer.from('you'));
    expect(tail.text()).toBe('hello you');
    expect(tail.truncated).toBe(false);
  });

  it('keeps the last bytes over many chunks, and one chunk far bigger than the limit', () => {
    const tail = new OutputTail(8);
    for (let i = 0; i < 1000; i++) tail.push(Buffer.from(`${i}\n`));
    expect(tail.text()).toBe('\n998\n999\n'.slice(-8));
    expect(tail.truncated).toBe(true);
    const big = new OutputTail(4);
    big.push(Buffer.from(`${'x'.repeat(100)}abcd`));
    expect(big.text()).toBe('abcd');
  });

  it('does not start with half a character', () => {
    const tail = new OutputTail(5);
    tail.push(Buffer.from('aaaaé€b'));
    // the last 5 bytes are [second byte of é][€ (3 bytes)][b]
    expect(tail.text()).toBe('€b');
  });
});

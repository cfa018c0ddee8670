/** Keeps the last `limit` bytes of a stream: the end of a failing test run is what explains it. */
export class OutputTail {
  private chunks: Buffer[] = [];
  private size = 0;
  private total = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.size += chunk.length;
    // Compact now and then rather than on every chunk: memory stays under twice the limit.
    if (this.size > this.limit * 2) {
      const tail = Buffer.from(this.tailBytes());
      this.chunks = [tail];
      this.size = tail.length;
    }
  }

  get truncated(): boolean {
    return this.total > this.limit;
  }

  private tailBytes(): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    return all.length > this.limit ? all.subarray(all.length - this.limit) : all;
  }

  text(): string {
    let bytes = this.tailBytes();
    // A cut may fall inside a UTF-8 character: drop its continuation bytes rather than show U+FFFD.
    if (this.truncated) {
      let start = 0;
      while (start < bytes.length && start < 3 && (bytes[start]! & 0xc0) === 0x80) start++;
      bytes = bytes.subarray(start);
    }
    return bytes.toString('utf8');
  }
}

import { describe, it, expect } from 'vitest';
describe('integration project', () => {
  it('is wired (replaced by the stack round-trip test)', () => {
    expect(1 + 1).toBe(2);
  });
});
